"""``relgrade history`` in the terminal (issues 34 and 36): recorded times that are not times are one line (exit 2),
naive and aware times are ordered together and said so, text from a report never reaches the terminal raw, every
value shows its interval, its source and the judge's verdict, a threshold gates the newest report (exit 1 as the
gate does), and every report kind records its time and commit through the one report writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgrade import evaluate
from relgrade.cli import main

QRELS = {f"q{i}": {f"d{i}": 1} for i in range(8)}


def _report(tmp_path: Path, name: str, misses: int = 0, **extra) -> str:
    run = {q: ({"x": 2.0, f"d{i}": 1.0} if i < misses else {f"d{i}": 1.0}) for i, q in enumerate(QRELS)}
    data = evaluate(QRELS, run, ["recall@1", "mrr"]).to_dict()
    data.update(extra)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def _one_line(capsys, argv, *words):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith("relgrade: error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in out + err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("when", ["yesterday", 20240601, 1.5, ["2024-06-01"], {"t": 1}, "", "2024-13-45T00:00:00"])
def test_a_recorded_time_that_is_not_an_iso_time_is_one_line(tmp_path, capsys, when):
    good = _report(tmp_path, "good", recorded={"time": "2024-06-01T00:00:00+00:00", "commit": None})
    bad = _report(tmp_path, "bad", recorded={"time": when, "commit": None})
    _one_line(capsys, ["history", good, bad], "bad.json", "recorded.time", "ISO 8601")


def test_naive_and_aware_times_are_ordered_together_as_utc_and_said(tmp_path, capsys):
    late = _report(tmp_path, "late", 2, recorded={"time": "2024-06-01T05:00:00", "commit": "late"})
    early = _report(tmp_path, "early", 0, recorded={"time": "2024-06-01T06:00:00+02:00", "commit": "early"})
    assert main(["history", late, early]) == 0
    out = capsys.readouterr().out
    rows = [x.split()[0] for x in out.splitlines() if x.startswith(("late", "early"))]
    assert rows == ["early", "late"]  # 04:00 UTC before 05:00 (naive, taken as UTC)
    notes = [x for x in out.splitlines() if x.startswith("note:")]
    assert notes == ["note: 1 of 2 reports record a time without a time zone (e.g. late: 2024-06-01T05:00:00): "
                     "taken as UTC to order them with the others"]
    same_zone = _report(tmp_path, "aware", 1, recorded={"time": "2024-06-01T07:00:00+00:00", "commit": "aware"})
    assert main(["history", early, same_zone]) == 0
    assert "note:" not in capsys.readouterr().out  # nothing mixed, nothing said


def test_control_characters_of_a_commit_never_reach_the_terminal(tmp_path, capsys):
    path = _report(tmp_path, "r", recorded={"time": "2024-06-01T00:00:00+00:00",
                                           "commit": "\x1b]0;owned\x07\x1b[31mred\u202e"})
    html = tmp_path / "t.html"
    assert main(["history", path, "--html", str(html), "--json", str(tmp_path / "h.json")]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\u202e")
    assert "\\x1b]0;owned\\x07" in out
    assert not any(c in html.read_text() for c in "\x1b\x07\u202e")


def test_the_table_shows_intervals_source_and_judge(tmp_path, capsys):
    plain = _report(tmp_path, "plain", 2, recorded={"time": "2024-06-01T00:00:00+00:00", "commit": None})
    hybrid = _report(tmp_path, "hybrid", 1, recorded={"time": "2024-06-02T00:00:00+00:00", "commit": None},
                     labels={"human": 3, "judge": 5},
                     judge={"labels": 5, "calibration": {"band": "moderate", "kappa": 0.52, "ci95": [0.4, 0.6],
                                                         "text": "moderate", "model": "m"}})
    assert main(["history", plain, hybrid]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["report", "time", "source", "judge", "recall@1", "[95%", "CI]", "mrr", "[95%", "CI]",
                              "leaks", "failed"]
    assert "labels" in out[1] and "0.7500 [" in out[1]
    assert "hybrid (3 human, 5 judge)" in out[2] and "moderate (κ 0.52)" in out[2] and "0.8750 [" in out[2]
    data = json.loads(Path(plain).read_text())
    lo, hi = data["aggregate"]["recall@1"]["ci95"]
    assert f"0.7500 [{lo:.3f}, {hi:.3f}]" in out[1]


def test_a_threshold_gates_the_newest_report_as_the_gate_does(tmp_path, capsys):
    old = _report(tmp_path, "old", 4, recorded={"time": "2024-06-01T00:00:00+00:00", "commit": "old"})
    new = _report(tmp_path, "new", 0, recorded={"time": "2024-06-02T00:00:00+00:00", "commit": "new"})
    assert main(["history", new, old, "--min", "0.99"]) == 0  # the newest (by time) is at 1.0: pass; the old marked
    out = capsys.readouterr().out
    assert "gate: pass: the newest report new is at or above the threshold" in out and "0.5000 [" in out
    assert main(["history", old, new, "--min", "0.99", "--metric", "mrr"]) == 0
    capsys.readouterr()
    worse = _report(tmp_path, "worse", 1, recorded={"time": "2024-06-03T00:00:00+00:00", "commit": "worse"})
    assert main(["history", old, new, worse, "--min", "0.99", "--json", str(tmp_path / "h.json")]) == 1
    out = capsys.readouterr().out
    assert "gate: FAIL: the newest report worse: recall@1 0.8750 is below the threshold 0.9900" in out
    series = json.loads((tmp_path / "h.json").read_text())
    assert series["exit_code"] == 1 and series["newest"]["label"] == "worse" and not series["newest"]["passed"]
    leak = [{"query_id": "q1", "query": None, "doc_id": "secret", "rank": 1}]
    leaky = _report(tmp_path, "leaky", 0, recorded={"time": "2024-06-04T00:00:00+00:00", "commit": "leaky"},
                    leaks=leak)
    assert main(["history", old, leaky, "--min", "0.5"]) == 1
    assert "it lists 1 leak" in capsys.readouterr().out
    assert main(["history", old, leaky]) == 0  # no threshold: a view, not a gate


def test_every_report_kind_records_its_time_and_commit(tmp_path, capsys, monkeypatch, fuzz_world):
    monkeypatch.setenv("GITHUB_SHA", "feedc0de" * 5)
    f = fuzz_world.write_world(tmp_path)
    argvs = {
        "evaluate": ["evaluate", "--run", str(f["run"]), "--qrels", str(f["qrels"])],
        "compare": ["compare", "--run-a", str(f["run"]), "--run-b", str(f["run_b"]), "--qrels", str(f["qrels"])],
        "estimate": ["estimate", "--run", str(f["run"]), "--human", str(f["human"]), "--judge", str(f["judge"])],
        "compare-ppi": ["compare", "--run-a", str(f["run"]), "--run-b", str(f["run_b"]), "--human", str(f["human"]),
                        "--judge", str(f["judge"])],
        "rank-systems": ["rank-systems", "--run", str(f["run"]), "--run", str(f["run_b"]), "--human", str(f["human"]),
                         "--judge", str(f["judge"]), "--n-boot", "20"],
        "ann-recall": ["ann-recall", "--run", str(f["run"]), "--exact", str(f["run_b"])],
    }
    for name, argv in argvs.items():
        out = tmp_path / f"{name}.json"
        assert main([*argv, "--json", str(out)]) == 0, name
        rec = json.loads(out.read_text())["recorded"]
        assert rec["commit"] == "feedc0de" * 5 and rec["time"].endswith("+00:00"), (name, rec)
    capsys.readouterr()
    assert main(["history", str(tmp_path / "estimate.json")]) == 0
    out = capsys.readouterr().out
    row = next(x for x in out.splitlines() if x.startswith("feedc0de"))
    assert "PPI++" in row and "not calibrated" in row and "T" in row.split()[1]  # the time column is filled


def test_a_paired_report_is_not_charted_as_values(tmp_path, capsys, fuzz_world):
    f = fuzz_world.write_world(tmp_path)
    ab = tmp_path / "ab.json"
    assert main(["compare", "--run-a", str(f["run"]), "--run-b", str(f["run_b"]), "--human", str(f["human"]),
                 "--judge", str(f["judge"]), "--json", str(ab)]) == 0
    capsys.readouterr()
    _one_line(capsys, ["history", str(ab)], "ab.json", "gate --paired", "relgrade history reads")
    good = _report(tmp_path, "good")
    _one_line(capsys, ["history", good, "--baseline", str(ab)], "ab.json", "relgrade history --baseline reads")
