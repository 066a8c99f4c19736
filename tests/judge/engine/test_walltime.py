"""``judge --dry-run`` prints an estimated wall time from measured or given latency and the concurrency, and says
what it assumed (issue 25)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from relgrade.cli import main
from relgrade.judge.engine._walltime import ASSUMED_LATENCY, EFFICIENCY, duration, wall_time

MODEL = "openai/gpt-4o-mini"


def test_the_arithmetic_and_the_rate_limits():
    w = wall_time(100, local=False, transport="http", concurrency=10, latency=0.5)
    assert w.seconds == pytest.approx(10 * 0.5 / EFFICIENCY["http"]) and w.bound == "concurrency" and w.slots == 10
    assert wall_time(100, local=False, transport="litellm", concurrency=10, servers=2, latency=0.5).seconds == \
        pytest.approx(5 * 0.5 / EFFICIENCY["litellm"])
    assert wall_time(100, local=False, transport="http", concurrency=10, latency=0.5, rpm=60).seconds == 100.0
    limited = wall_time(100, local=False, transport="http", concurrency=10, latency=0.5, tpm=1000, tokens=5000)
    assert limited.seconds == 300.0 and limited.bound == "--tpm"
    local = wall_time(10, local=True, transport="litellm", concurrency=16)
    assert local.slots == 1 and local.seconds == pytest.approx(10 * ASSUMED_LATENCY["local"])
    assert local.latency_from == "assumed"
    assert (duration(42), duration(250), duration(4 * 3600)) == ("42 s", "4 min 10 s", "4.0 h")


def _run(tmp_path, make_run, n):
    spec = {f"q{q}": (f"question {q}", [(f"d{q}{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]") for d in range(3)])
            for q in range(n)}
    return make_run(tmp_path / f"run{n}.jsonl", spec)


def _line(out: str) -> str:
    return next(x for x in out.splitlines() if x.startswith("estimated wall time "))


def test_dry_run_measures_the_latency_from_the_store_else_says_it_assumed(fakes, tmp_path, make_run, capsys,
                                                                         monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-0123456789")
    store, out = tmp_path / "s.sqlite", tmp_path / "o.qrels"
    with fakes.FakeOpenAIServer(latency=0.05) as srv:
        common = ["--model", MODEL, "--api-base", srv.base_url, "--store", str(store), "--concurrency", "4"]
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 2)), *common, "--dry-run"]) == 0
        first = _line(capsys.readouterr().out)
        assert first.startswith("estimated wall time ") and "6 calls × 0.80 s per call (assumed: nothing of this " \
            "model in the store to measure it from; set --latency) over 4 calls in flight at 0.90 of the ideal" in first
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 2)), *common, "--out", str(out)]) == 0
        capsys.readouterr()
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 10)), *common, "--dry-run"]) == 0
        printed = capsys.readouterr().out
    details = [json.loads(x) for x in Path(f"{out}.details.jsonl").read_text().splitlines()]
    median = statistics.median(d["latency_s"] for d in details)
    line = _line(printed)
    assert f"24 calls × {median:.2f} s per call (the median of 6 judgments of this model in the store)" in line
    seconds = 6 * median / 0.9  # 24 calls, 4 in flight, lean transport
    assert line.startswith(f"estimated wall time {duration(seconds)}:")
    assert main(["judge", "--run", str(_run(tmp_path, make_run, 10)), *common, "--dry-run", "--latency", "2",
                 "--rpm", "6"]) == 0
    line = _line(capsys.readouterr().out)
    assert "24 calls × 2.00 s per call (--latency)" in line and "the --rpm limit sets the pace" in line
    assert line.startswith("estimated wall time 4 min 0 s:")


def test_latency_without_dry_run_or_not_positive_is_a_user_error(tmp_path, make_run, capsys):
    for extra in (["--out", str(tmp_path / "o.qrels"), "--latency", "1"], ["--dry-run", "--latency", "0"]):
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 1)), *extra]) == 2
        err = capsys.readouterr().err
        assert re.search(r"--latency .*: give the seconds per call .* with --dry-run", err)


def test_dry_run_measures_the_models_latency_over_the_whole_store(fakes, tmp_path, make_run, capsys, monkeypatch):
    """The store holds judgments of the model for other pairs than the dry run's: their latency is measured, not
    assumed (issue 36); another model's judgments are not."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-0123456789")
    store = tmp_path / "s.sqlite"
    other = make_run(tmp_path / "other.jsonl", {f"x{q}": (f"another question {q}", [
        (f"x{q}d{d}", f"another passage {d} [[grade=1]]") for d in range(3)]) for q in range(3)})
    with fakes.FakeOpenAIServer(latency=0.05) as srv:
        common = ["--api-base", srv.base_url, "--store", str(store), "--concurrency", "4"]
        assert main(["judge", "--run", str(other), "--model", MODEL, *common, "--out", str(tmp_path / "o.qrels")]) == 0
        capsys.readouterr()
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 2)), "--model", MODEL, *common, "--dry-run"]) == 0
        line = _line(capsys.readouterr().out)
        assert main(["judge", "--run", str(_run(tmp_path, make_run, 2)), "--model", "openai/gpt-4.1-nano", *common,
                     "--dry-run"]) == 0
        other_model = _line(capsys.readouterr().out)
    details = [json.loads(x) for x in (tmp_path / "o.qrels.details.jsonl").read_text().splitlines()]
    median = statistics.median(d["latency_s"] for d in details)
    assert f"6 calls × {median:.2f} s per call (the median of 9 judgments of this model in the store)" in line, line
    assert "0.80 s per call (assumed: nothing of this model in the store" in other_model, other_model


def test_a_batchs_turnaround_is_not_a_calls_latency():
    from relgrade.judge.engine._walltime import median_latency

    rows = [{"latency_s": 0.5}, {"latency_s": 0.7}, {"latency_s": 3600.0, "batch": "b1"}, {"latency_s": 0.0}, {}]
    assert median_latency(rows) == (0.6, 2)
