"""The README's "Your own data in 15 minutes" runs as written (issue 25).

The commands are taken from the README's block, word for word, and run in order in a fresh folder holding two
generated RAG JSONL runs (50 queries, 10 results each), with ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` pointing
the judge at the fake OpenAI-compatible server (tests/fakes/openai_server.py). The one step a person does, filling
the ``grade`` column of the sample, is done here with the generated truth. Every command must succeed and print
each ``#   prints "..."`` line the README promises under it.
"""

from __future__ import annotations

import csv
import json
import random
import re
import shlex
from pathlib import Path

import pytest

from relgrade.cli import main

ROOT = Path(__file__).resolve().parents[1]


def walkthrough() -> list[tuple[str, list[str]]]:
    """``[(command, [promised fragments])]`` of the README's walkthrough block, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Your own data in 15 minutes\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        promised = re.match(r'#\s+prints "(.*)"$', line.strip())
        if promised:
            steps[-1][1].append(promised.group(1))
        elif line.startswith("relgrade "):
            steps.append((line.strip(), []))
        else:
            assert line.startswith(("#", "export ")) or not line.strip(), f"unexpected walkthrough line: {line}"
    return steps


def _world(folder: Path, seed: int = 7) -> dict[tuple[str, str], int]:
    """Two runs of one retriever's candidates: 50 queries of 14 chunks, the top 10 kept; the candidate ranks a little
    better. Each chunk text carries the judge's grade for the fake server ([[grade=N]]): the truth 80% of the time,
    one grade off otherwise. Returns the truth (the humans' grades)."""
    rng = random.Random(seed)
    truth: dict[tuple[str, str], int] = {}
    runs: dict[str, list[dict]] = {"baseline": [], "candidate": []}
    for q in range(50):
        qid = f"q{q:02d}"
        docs = [(f"{qid}-c{d}", rng.choice([0, 0, 0, 0, 0, 0, 1, 1, 2, 3])) for d in range(14)]
        texts = {}
        for doc, grade in docs:
            truth[(qid, doc)] = grade
            judged = grade if rng.random() < 0.8 else min(3, max(0, grade + rng.choice([-1, 1])))
            texts[doc] = f"chunk {doc} about topic {q} [[grade={judged}]]"
        for name, noise in (("baseline", 4.0), ("candidate", 3.0)):
            ranked = sorted(docs, key=lambda x: -x[1] + rng.random() * noise)[:10]
            runs[name].append({"query_id": qid, "query": f"question about topic {q}",
                               "results": [{"doc_id": doc, "text": texts[doc]} for doc, _ in ranked]})
    for name, rows in runs.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return truth


def _fill(items: Path, truth: dict[tuple[str, str], int]) -> None:
    """What the person does: fill the 'grade' column of every row."""
    with items.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["grade"] = truth[(r["query_id"], r["doc_id"])]
    with items.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_the_walkthrough_block_is_what_this_test_runs():
    steps = walkthrough()
    names = [shlex.split(cmd)[1] for cmd, _ in steps]
    assert names == ["judge", "judge", "sample", "calibrate", "estimate", "estimate", "gate"]
    assert all(promised for cmd, promised in steps if cmd != steps[5][0])  # every step but the repeat promises output
    gate = shlex.split(steps[-1][0])
    assert "--no-tenants" in gate and "--forbidden" not in gate  # the documented flag, not a workaround


def test_the_walkthrough_runs_as_written(fakes, tmp_path, monkeypatch, capsys):
    truth = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name in ("RELGRADE_STORE", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with fakes.FakeOpenAIServer(require_key="sk-walkthrough-0123456789", models=("gpt-4o-mini",)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-walkthrough-0123456789")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        outputs = []
        for command, promised in walkthrough():
            argv = shlex.split(command)
            code = main(argv[1:])
            out = capsys.readouterr()
            assert code == 0, f"{command}\n{out.out[-2000:]}\n{out.err[-2000:]}"
            for fragment in promised:
                assert fragment in out.out, f"{command} did not print {fragment!r}:\n{out.out[-3000:]}"
            outputs.append(out.out)
            if argv[1] == "sample":
                _fill(tmp_path / argv[argv.index("--out") + 1], truth)
        assert server.stats()["paid"] == len({(r["query_id"], d["doc_id"]) for name in ("baseline", "candidate")
                                               for r in map(json.loads, (tmp_path / f"{name}.jsonl").open())
                                               for d in r["results"]})  # each pooled pair paid once
    gate = json.loads((tmp_path / "candidate.json").read_text())
    assert gate["judge"]["calibration"]["source"] == "calibration.json"
    assert gate["judge"]["labels"] > 0 and gate["leaks"] is None
    assert not (tmp_path / "items.csv").read_text().splitlines()[0].count("judge")  # the annotators' file was blind
    assert "judge" in (tmp_path / "items.judge.csv").read_text().splitlines()[1]
    assert outputs[-1].rstrip().endswith("gate: pass")
