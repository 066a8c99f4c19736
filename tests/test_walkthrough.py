"""The README's "Your own data in 15 minutes" runs as written (issue 25).

The commands are taken from the README's block, word for word, and run in order in a fresh folder holding two
generated RAG JSONL runs (50 queries, 10 results each), with ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` pointing
the judge at the fake OpenAI-compatible server (tests/fakes/openai_server.py). The one step a person does, filling
the ``grade`` column of the sample, is done here with the generated truth. Every command must succeed and print
each ``#   prints "..."`` line the README promises under it.

Issue 36: the pairs to label are counted before paying and after sampling, and timed (item 2); every note the path
prints applies to its data (item 3); the ``estimate`` step with its stdout closed (``| head``) exits 0 and writes
its JSON (item 4).
"""

from __future__ import annotations

import csv
import json
import random
import re
import shlex
import subprocess
import sys
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
    _pairs_are_counted_and_timed(outputs, tmp_path)
    _every_note_applies(outputs, tmp_path)
    _a_closed_stdout_ends_quietly(tmp_path)


def _pairs_are_counted_and_timed(outputs: list[str], folder: Path) -> None:
    """Item 2: the dry run says how many pairs 15 random queries hold, sample how many it wrote and how long they
    take; the README quotes the number for these runs."""
    before = int(re.search(r"human labels: 15 random queries of 50 \(relgrade sample --n 15\) hold about (\d+) pairs "
                           r"\(([\d.]+) pooled pairs per query\)", outputs[0]).group(1))
    drawn = len(list(csv.DictReader((folder / "items.csv").open(encoding="utf-8"))))
    assert f"wrote {drawn} pairs to items.csv" in outputs[2]
    minutes, seconds = divmod(drawn * 30, 60)
    assert (f"labeling them takes about {minutes // 60 + (minutes % 60) / 60:.1f} h" if minutes >= 60 else
            f"labeling them takes about {minutes} min {seconds} s") in outputs[2]
    assert "at an assumed 30 s per pair" in outputs[0] and "at an assumed 30 s per pair" in outputs[2]
    assert abs(drawn - before) <= 0.1 * before  # the mean pool of 15 queries, against the 15 drawn
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"(the walkthrough's runs: {drawn} pairs)" in readme


def _every_note_applies(outputs: list[str], folder: Path) -> None:
    """Item 3: a note the README's own path prints must be true of its data; the mapping note (the calibration kept
    the identity, so the soft prediction's leaving it aside changes nothing) and the weighting note (one weight for
    every pair: the weighted statistics are the unweighted ones) are not."""
    calibration = json.loads((folder / "calibration.json").read_text())
    assert calibration["mapping"]["adopted"] is False and calibration["weighted"] is False
    notes = [line.strip() for out in outputs for line in out.splitlines() if "note:" in line]
    for line in notes:
        if "are approximate below 30 queries" in line:
            assert calibration["n_queries"] < 30, line
            continue
        clipped = re.match(r"(\S+): note: the PPI\+\+ estimate (\S+) lies outside \[0, 1\] and is reported as the "
                           r"nearest end$", line)
        assert clipped, f"a note the walkthrough prints that no check here shows to apply: {line}"
        shown = [json.loads((folder / f"{name}.json").read_text())["aggregate"][clipped.group(1)]["ppi"]["value"]
                 for name in ("baseline", "candidate")]
        assert float(clipped.group(2)) > 1 and 1.0 in shown, line  # the number it speaks of was changed
    assert not any("--mapping" in line or "weighted by" in line for line in notes), notes


def _a_closed_stdout_ends_quietly(folder: Path) -> None:
    """Item 4: the walkthrough's estimate with nobody reading its output (``| head -3`` once head has gone)."""
    command = next(c for c, _ in walkthrough() if c.startswith("relgrade estimate"))
    argv = shlex.split(command)
    out = folder / "closed.json"
    argv[argv.index("--json") + 1] = str(out)
    proc = subprocess.Popen([sys.executable, "-m", "relgrade.cli", *argv[1:]], cwd=folder, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0 and err == "", err
    assert json.loads(out.read_text())["aggregate"] == json.loads((folder / "baseline.json").read_text())["aggregate"]
