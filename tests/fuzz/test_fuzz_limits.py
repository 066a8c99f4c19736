"""Every user-supplied size has a resource limit with a one-line error (issue 24): bootstrap counts, scale ranges
(on the command line and declared in a details file), concurrency, samples per pair, batch sizes, poll intervals.
Each absurd value is exit 2 with one line naming the option, at once (nothing allocated, no call made)."""

from __future__ import annotations

import json
import time

import pytest

from relgrade.cli import main


BIG = str(10 ** 9)
JUDGE = ["judge", "--run", "{run}", "--corpus", "{corpus}", "--model", "openai/gpt-4o-mini", "--store", "{tmp}/s.sqlite"]
CASES = {
    "evaluate-n-boot": (["evaluate", "--run", "{run}", "--qrels", "{qrels}", "--n-boot", BIG], "--n-boot"),
    "compare-n-boot": (["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--qrels", "{qrels}", "--n-boot", BIG],
                       "--n-boot"),
    "rank-n-boot": (["rank-systems", "--run", "{run}", "--run", "{run_b}", "--human", "{human}", "--judge", "{judge}",
                     "--n-boot", BIG], "--n-boot"),
    "calibrate-n-boot": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--n-boot", BIG], "--n-boot"),
    "calibrate-scale-range": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--scale", "0-" + BIG], "--scale"),
    "calibrate-scale-negative": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--scale", f"-{BIG}-3"],
                                 "--scale"),
    "calibrate-scale-list": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--scale",
                              ",".join(map(str, range(500)))], "--scale"),
    "calibrate-scale-digits": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--scale", "0-" + "9" * 5000],
                               "--scale"),
    "details-declared-scale": (["calibrate", "--judge", "{bigscale}", "--human", "{human}"], "'scale' spans"),
    "judge-concurrency": ([*JUDGE, "--dry-run", "--concurrency", BIG], "--concurrency"),
    "judge-samples": ([*JUDGE, "--dry-run", "--samples", BIG], "--samples"),
    "judge-batch-size": ([*JUDGE, "--batch", "--batch-size", BIG, "--out", "{tmp}/o.qrels",
                          "--api-base", "http://127.0.0.1:9/v1"], "--batch-size"),
    "judge-poll-interval": ([*JUDGE, "--batch", "--poll-interval", "1e12", "--out", "{tmp}/o.qrels",
                             "--api-base", "http://127.0.0.1:9/v1"], "--poll-interval"),
    "judge-poll-interval-inf": ([*JUDGE, "--batch", "--poll-interval", "inf", "--out", "{tmp}/o.qrels",
                                 "--api-base", "http://127.0.0.1:9/v1"], "--poll-interval"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_absurd_size_is_one_line_at_once(tmp_path, capsys, monkeypatch, fuzz_world, case):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-123456")
    files = fuzz_world.write_world(tmp_path)
    rows = [json.loads(x) for x in files["judge"].read_text().splitlines()]
    files["bigscale"] = tmp_path / "bigscale.jsonl"
    files["bigscale"].write_text("".join(json.dumps({**r, "scale": [0, 10 ** 9]}) + "\n" for r in rows))
    argv, fragment = CASES[case]
    values = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path)}
    start = time.perf_counter()
    code = main([a.format(**values) for a in argv])
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("relgrade: error:") and fragment in lines[0], err
    assert len(lines[0]) < 400 and elapsed < 30
    assert not (tmp_path / "o.qrels").exists()
