"""The judge's calibration verdict travels with its labels (issue 25): hybrid sets and estimate reports record it,
evaluate / compare / estimate / rank-systems / gate print it, and a "do not use" judge fails the gate (exit 1, one
line with the reason) unless --accept-judge, which the gate's JSON records. Labels with judge grades and no recorded
calibration say "judge not calibrated". End to end through the CLI on generated files."""

from __future__ import annotations

import json
import random

import pytest

from relgrade.cli import main

MODEL = "openai/fake-judge"
N_QUERIES, N_DOCS, N_LABELED = 20, 5, 10


def _grade(q: int, d: int) -> int:
    return (q * 7 + d * 3) % 4


@pytest.fixture
def world(tmp_path):
    """Two TREC runs, human labels on 10 random whole queries, and two judges: one grading every pair 1 (κ 0:
    'slight: do not use judge labels') and one grading as the humans do (κ 1)."""
    rng = random.Random(3)
    labeled = sorted(rng.sample(range(N_QUERIES), N_LABELED))
    with open(tmp_path / "human.csv", "w") as fh:
        fh.write("query_id,doc_id,grade\n")
        for q in labeled:
            for d in range(N_DOCS):
                fh.write(f"q{q},d{q}_{d},{_grade(q, d)}\n")
    for name, grade in (("bad", lambda q, d: 1), ("good", _grade)):
        with open(tmp_path / f"{name}.details.jsonl", "w") as fh:
            for q in range(N_QUERIES):
                for d in range(N_DOCS):
                    fh.write(json.dumps({"query_id": f"q{q}", "doc_id": f"d{q}_{d}", "grade": grade(q, d),
                                         "status": "judged", "model": MODEL, "prompt_hash": "abc123",
                                         "scale": [0, 1, 2, 3]}) + "\n")
    for run, order in (("a", range(N_DOCS)), ("b", reversed(range(N_DOCS)))):
        with open(tmp_path / f"{run}.txt", "w") as fh:
            for q in range(N_QUERIES):
                for rank, d in enumerate(order, 1):
                    fh.write(f"q{q} Q0 d{q}_{d} {rank} {10 - rank} {run}\n")
    return tmp_path


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _calibrate(world, capsys, judge: str) -> str:
    cal = world / f"cal_{judge}.json"
    code, out, err = _cli(capsys, "calibrate", "--judge", world / f"{judge}.details.jsonl", "--human",
                          world / "human.csv", "--json", cal, "--n-boot", "50")
    assert code == 0, err
    return str(cal)


def _hybrid_reports(world, capsys, judge: str, mapping: str | None):
    hybrid = world / f"hybrid_{judge}.jsonl"
    code, out, err = _cli(capsys, "hybrid", "--human", world / "human.csv", "--judge", world / f"{judge}.details.jsonl",
                          *(["--mapping", mapping] if mapping else []), "--out", hybrid)
    assert code == 0, err
    for run in ("a", "b"):
        code, text, err = _cli(capsys, "evaluate", "--run", world / f"{run}.txt", "--qrels", hybrid, "--k", "5",
                               "--json", world / f"eval_{judge}_{run}.json")
        assert code == 0, err
    return hybrid, out, text


def test_a_do_not_use_judge_travels_into_the_hybrid_set_evaluate_and_fails_the_gate(world, capsys):
    cal = _calibrate(world, capsys, "bad")
    verdict = json.loads(open(cal).read())["verdict"]
    assert verdict["band"] == "slight" and verdict["action"] == "do not use judge labels"
    hybrid, said, evaluated = _hybrid_reports(world, capsys, "bad", cal)

    recorded = json.loads((world / "hybrid_bad.jsonl.calibration.json").read_text())
    assert recorded["band"] == "slight" and recorded["do_not_use"] and recorded["model"] == MODEL
    assert recorded["text"] == verdict["text"] and recorded["source"] == cal
    line = f"judge {MODEL}: {verdict['text']} (calibrated in {cal})"
    assert line in said and f"the judge's calibration to {hybrid}.calibration.json" in said
    assert line in evaluated  # evaluate on the hybrid set says what the judge is worth
    report = json.loads((world / "eval_bad_b.json").read_text())
    assert report["judge"]["labels"] == N_QUERIES * N_DOCS - N_LABELED * N_DOCS
    assert report["judge"]["calibration"]["band"] == "slight"

    gate_json = world / "gate.json"
    code, out, err = _cli(capsys, "gate", "--baseline", world / "eval_bad_a.json", "--current", world / "eval_bad_b.json",
                          "--max-drop", "1", "--json", gate_json)
    fails = [x for x in out.splitlines() if x.startswith("FAIL: ")]
    assert code == 1 and len(fails) == 1, out  # one line with the reason, even though both reports share the labels
    assert fails[0].startswith(f"FAIL: judge: {world / 'eval_bad_b.json'} rests on 50 judge labels of {MODEL} and its "
                               "calibration says slight (κ 0.00, do not use judge labels); pass --accept-judge")
    assert "\ngate: FAIL\n" in out and line in out
    assert json.loads(gate_json.read_text())["judge"]["accept_judge"] is False

    code, out, err = _cli(capsys, "gate", "--baseline", world / "eval_bad_a.json", "--current", world / "eval_bad_b.json",
                          "--max-drop", "1", "--accept-judge", "--json", gate_json)
    assert code == 0 and "judge labels accepted with --accept-judge although its calibration says slight" in out
    recorded = json.loads(gate_json.read_text())
    assert recorded["passed"] and recorded["judge"]["accept_judge"] is True
    assert recorded["judge"]["reports"][str(world / "eval_bad_b.json")]["calibration"]["band"] == "slight"

    code, out, err = _cli(capsys, "compare", "--run-a", world / "a.txt", "--run-b", world / "b.txt", "--qrels", hybrid,
                          "--k", "5")
    assert code == 0 and line in out


def test_a_good_judge_passes_and_says_so(world, capsys):
    cal = _calibrate(world, capsys, "good")
    _, _, evaluated = _hybrid_reports(world, capsys, "good", cal)
    assert f"judge {MODEL}: almost perfect (κ 1.00" in evaluated
    code, out, err = _cli(capsys, "gate", "--baseline", world / "eval_good_a.json", "--current",
                          world / "eval_good_b.json", "--max-drop", "1")
    assert code == 0 and "almost perfect (κ 1.00" in out and "FAIL" not in out


def test_judge_labels_without_a_calibration_say_so_plainly(world, capsys):
    _, said, evaluated = _hybrid_reports(world, capsys, "bad", None)
    expected = "judge not calibrated: 50 labels are judge grades and no calibration is recorded with them"
    assert expected in said and expected in evaluated
    assert not (world / "hybrid_bad.jsonl.calibration.json").exists()
    code, out, err = _cli(capsys, "gate", "--baseline", world / "eval_bad_a.json", "--current", world / "eval_bad_b.json",
                          "--max-drop", "1")
    assert code == 0 and expected in out  # said, not failed: nothing recorded says "do not use"


def test_estimate_records_the_verdict_and_the_gate_fails_on_it(world, capsys):
    cal = _calibrate(world, capsys, "bad")
    for run in ("a", "b"):
        code, out, err = _cli(capsys, "estimate", "--run", world / f"{run}.txt", "--human", world / "human.csv",
                              "--judge", world / "bad.details.jsonl", "--mapping", cal, "--k", "5",
                              "--json", world / f"est_{run}.json")
        assert code == 0, err
        assert f"judge {MODEL}: slight (κ 0.00" in out
    report = json.loads((world / "est_b.json").read_text())
    assert report["judge"] == {"labels": N_QUERIES * N_DOCS, "calibration": report["judge"]["calibration"],
                               "audit": None}  # not audited (relgrade audit, issue 37), and recorded as such
    assert report["judge"]["calibration"]["band"] == "slight"
    code, out, err = _cli(capsys, "gate", "--baseline", world / "est_a.json", "--current", world / "est_b.json",
                          "--max-drop", "1", "--no-tenants")
    assert code == 1 and "FAIL: judge: " in out and "do not use judge labels" in out
    assert "leak check: off for" in out  # --no-tenants: the missing --forbidden is not the reason
    code, out, err = _cli(capsys, "gate", "--baseline", world / "est_a.json", "--current", world / "est_b.json",
                          "--max-drop", "1", "--no-tenants", "--accept-judge")
    assert code == 0, out


def test_rank_systems_prints_the_verdict(world, capsys):
    cal = _calibrate(world, capsys, "bad")
    code, out, err = _cli(capsys, "rank-systems", "--run", world / "a.txt", "--run", world / "b.txt", "--human",
                          world / "human.csv", "--judge", world / "bad.details.jsonl", "--mapping", cal, "--n-boot", "20",
                          "--json", world / "rank.json")
    assert code == 0, err
    assert f"judge {MODEL}: slight (κ 0.00" in out
    assert json.loads((world / "rank.json").read_text())["judge"]["calibration"]["band"] == "slight"
    code, out, err = _cli(capsys, "rank-systems", "--run", world / "a.txt", "--run", world / "b.txt", "--human",
                          world / "human.csv", "--judge", world / "bad.details.jsonl", "--n-boot", "20")
    assert code == 0 and "judge not calibrated: 100 labels are judge grades" in out


def test_a_calibration_of_another_judge_is_refused(world, capsys, tmp_path):
    cal = json.loads(open(_calibrate(world, capsys, "bad")).read())
    cal["model"] = "anthropic/another"
    (tmp_path / "other.json").write_text(json.dumps(cal))
    code, out, err = _cli(capsys, "hybrid", "--human", world / "human.csv", "--judge", world / "bad.details.jsonl",
                          "--mapping", tmp_path / "other.json", "--out", tmp_path / "h.jsonl")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "this calibration is of the judge anthropic/another, the judge labels are of openai/fake-judge" in err


def test_no_tenants_is_an_explicit_recorded_choice_and_leaks_still_fail(world, capsys, tmp_path):
    for run in ("a", "b"):
        assert _cli(capsys, "estimate", "--run", world / f"{run}.txt", "--human", world / "human.csv", "--judge",
                    world / "good.details.jsonl", "--k", "5", "--json", world / f"e_{run}.json")[0] == 0
    args = ["gate", "--baseline", world / "e_a.json", "--current", world / "e_b.json", "--max-drop", "1"]
    code, out, _ = _cli(capsys, *args)
    assert code == 1 and "carries no leak information" in out and "--no-tenants" in out
    code, out, _ = _cli(capsys, *args, "--no-tenants", "--json", tmp_path / "g.json")
    assert code == 0 and json.loads((tmp_path / "g.json").read_text())["no_tenants"] is True
    report = json.loads((world / "e_b.json").read_text())
    report["leaks"] = [{"query_id": "q1", "doc_id": "d1_0", "rank": 1}]
    (world / "e_b.json").write_text(json.dumps(report))
    code, out, _ = _cli(capsys, *args, "--no-tenants")
    assert code == 1 and "1 leak" in out
