"""One word per thing (issue 36, item 9), as the README's glossary lists them: every command's help and output says
"from the store" and "duplicate" (never "cached"), "PPI++" (never a bare "PPI"), "human-only" and "judge-only",
"baseline" and "candidate" (never "current"), and takes labels as ``--labels``; the older names ``--qrels`` and
``--current`` still work, and the JSON keys other code reads are unchanged."""

from __future__ import annotations

import json
import re

import pytest

from relgrade.cli import COMMANDS, main

BANNED = {
    "cached": re.compile(r"\bcached\b"),
    "bare PPI": re.compile(r"\bPPI\b(?!\+\+)"),
    "human only": re.compile(r"\b(human|judge) only\b"),
    "current": re.compile(r"\bcurrent(?:'s)? (?:report|run|CI|95%)|baseline\s+current\b|\bcurrent\s+change\b"),
}


def _words(text: str) -> list[str]:
    return [name for name, pattern in BANNED.items() if pattern.search(text)]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_speaks_the_glossary(command, capsys):
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert not _words(text), (command, _words(text), text)


def test_every_output_speaks_the_glossary_and_old_names_still_work(tmp_path, capsys, fuzz_world):
    f = {k: str(v) for k, v in fuzz_world.write_world(tmp_path).items()}
    j = lambda name: str(tmp_path / name)  # noqa: E731
    runs = [
        ["evaluate", "--run", f["run"], "--labels", f["qrels"], "--n-boot", "50", "--json", j("a.json")],
        ["evaluate", "--run", f["run_b"], "--qrels", f["qrels"], "--n-boot", "50", "--json", j("b.json")],
        ["compare", "--run-a", f["run"], "--run-b", f["run_b"], "--labels", f["qrels"], "--n-boot", "50"],
        ["gate", "--baseline", j("a.json"), "--candidate", j("b.json"), "--max-drop", "1"],
        ["gate", "--baseline", j("a.json"), "--current", j("b.json"), "--max-drop", "1"],
        ["gate", "--candidate", j("b.json"), "--min", "0.1"],
        ["estimate", "--run", f["run"], "--human", f["human"], "--judge", f["judge"], "--json", j("e.json")],
        ["compare", "--run-a", f["run"], "--run-b", f["run_b"], "--human", f["human"], "--judge", f["judge"],
         "--json", j("ab.json")],
        ["gate", "--paired", j("ab.json"), "--no-tenants", "--max-drop", "1"],
        ["rank-systems", "--run", f["run"], "--run", f["run_b"], "--human", f["human"], "--judge", f["judge"],
         "--n-boot", "50"],
        ["ann-recall", "--run", f["run"], "--exact", f["run_b"], "--labels", f["qrels"]],
    ]
    outputs = []
    for argv in runs:
        code = main(argv)
        out = capsys.readouterr()
        assert code in (0, 1), (argv, out.err)
        outputs.append(out.out)
        assert not _words(out.out + out.err), (argv, _words(out.out + out.err), out.out)
    assert json.loads((tmp_path / "a.json").read_text())["aggregate"] and (tmp_path / "b.json").is_file()
    assert outputs[3] == outputs[4]  # --current is --candidate
    assert "metric            baseline candidate" in outputs[3]
    assert "A (baseline) = " in outputs[2] and "B (candidate) = " in outputs[7]
    assert "human-only" in outputs[6] and "judge-only" in outputs[6] and "PPI++" in outputs[9]
    estimate = json.loads((tmp_path / "e.json").read_text())["aggregate"]["recall@5"]
    assert {"ppi", "human_only", "judge_only"} <= set(estimate)  # the JSON keys other code reads
