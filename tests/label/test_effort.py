"""What a human sample costs, in pairs and in time (issue 36, item 2: "you grade 15 random queries" meant 204 pairs).

The dry run counts the pairs the first sample holds, ``sample`` counts the pairs it wrote, and both turn them into
labeling time: at the rate recorded in labels already given (the label page stamps each label), else at an assumed
rate the output names."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timedelta, timezone

from relgrade.cli import main
from relgrade.label._effort import ASSUMED_SECONDS_PER_PAIR, MAX_GAP_S, effort, recorded_rate
from relgrade.io import Label


def _labels(annotator: str, start: datetime, gaps: list[float]) -> list[Label]:
    out, t = [], start
    for i, gap in enumerate([0.0, *gaps]):
        t += timedelta(seconds=gap)
        out.append(Label(f"q{i}", "d1", 1, "human", annotator=annotator, time=t.isoformat()))
    return out


def test_the_rate_is_the_median_gap_of_each_annotator_without_breaks():
    t0 = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    labels = _labels("ann", t0, [20, 22, 18, 3600, 21]) + _labels("bob", t0 + timedelta(seconds=5), [40, 44])
    rate, n = recorded_rate(labels)
    assert n == 6 and rate == 21.5  # the hour-long break is not labeling; bob's gaps count, not ann-to-bob ones
    assert effort(100, labels).seconds == 2150 and "22 s per pair (the median of 6 recorded intervals" in \
        effort(100, labels).text()
    few = effort(10, _labels("ann", t0, [20, 20]))  # two intervals are not enough to measure
    assert few.seconds_per_pair == ASSUMED_SECONDS_PER_PAIR and "an assumed 30 s per pair" in few.text()
    assert effort(120).text().startswith("labeling them takes about 1.0 h at an assumed 30 s per pair")
    assert MAX_GAP_S == 600  # the break rule the README states


def _runs(tmp_path, make_run):
    """Two runs over 6 queries whose pools differ in size: 2, 3, ..., 7 pooled pairs."""
    paths = []
    for name, shift in (("a", 0), ("b", 1)):
        queries = {}
        for q in range(6):
            docs = [f"q{q}-d{d}" for d in range(q + 1)]
            docs = docs[shift:] + [f"q{q}-extra"] if shift else docs
            queries[f"q{q}"] = (f"question {q}", [(d, f"text of {d} [[grade={len(d) % 4}]]") for d in docs])
        paths.append(make_run(tmp_path / f"{name}.jsonl", queries))
    return paths


def test_the_dry_run_counts_the_pairs_the_first_sample_will_hold(tmp_path, make_run, capsys, monkeypatch, fakes):
    run_a, run_b = _runs(tmp_path, make_run)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-effort-0123456789")
    argv = ["--run", str(run_a), "--run", str(run_b), "--model", "openai/gpt-4o-mini", "--store",
            str(tmp_path / "s.sqlite")]
    assert main(["judge", *argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    said = re.search(r"human labels: 6 random queries of 6 \(relgrade sample --n 6\) hold about (\d+) pairs", out)
    assert said, out
    with fakes.FakeOpenAIServer() as server:
        assert main(["judge", *argv, "--api-base", server.base_url, "--out", str(tmp_path / "j.qrels")]) == 0
    assert main(["sample", "--judge", str(tmp_path / "j.qrels.details.jsonl"), "--n", "15", "--out",
                 str(tmp_path / "items.csv")]) == 0
    out = capsys.readouterr().out
    drawn = len(list(csv.DictReader((tmp_path / "items.csv").open())))
    assert int(said.group(1)) == drawn == 27  # every query: the same pairs, counted before paying and after
    assert f"wrote {drawn} pairs to" in out
    assert f"labeling them takes about {drawn * 30 // 60} min {drawn * 30 % 60} s at an assumed 30 s per pair" in out


def test_sample_times_the_pairs_at_the_rate_of_the_labels_given_so_far(tmp_path, capsys):
    judge = tmp_path / "judge.details.jsonl"
    judge.write_text("".join(json.dumps({"query_id": f"q{q}", "doc_id": f"d{d}", "grade": (q + d) % 4,
                                         "model": "fake/judge"}) + "\n" for q in range(8) for d in range(4)))
    done = tmp_path / "done.csv"
    t0 = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
    done.write_text("query_id,doc_id,grade,annotator,time\n" + "".join(
        f"q0,d{d},1,ann,{(t0 + timedelta(seconds=12 * d)).isoformat()}\n" for d in range(4)))
    assert main(["sample", "--judge", str(judge), "--n", "3", "--exclude", str(done), "--out",
                 str(tmp_path / "items.csv")]) == 0
    out = capsys.readouterr().out
    assert "wrote 12 pairs to" in out  # 3 queries of 4 pairs, q0 excluded
    assert "labeling them takes about 2 min 24 s at 12 s per pair (the median of 3 recorded intervals" in out
