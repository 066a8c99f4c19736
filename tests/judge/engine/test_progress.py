"""Judge progress without a terminal: a plain line every few seconds, and a last one at the end."""

from __future__ import annotations

import io

from relgrade.judge.engine._progress import Progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _stats(done, stored=0, duplicates=0):
    return {"done": done, "cached": stored + duplicates, "stored": stored, "duplicates": duplicates, "unjudged": 0,
            "failed": 1, "cost_usd": 0.0}


def test_no_terminal_prints_a_line_every_five_seconds_and_a_last_one():
    out, clock = io.StringIO(), Clock()
    progress = Progress(200, file=out, every=5.0, clock=clock)
    assert progress.bar is None  # StringIO is not a terminal: no tqdm
    for done in range(1, 101):  # 100 pairs, one every 0.2 s: 20 s
        clock.now += 0.2
        progress(_stats(done, stored=2, duplicates=1))
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 5  # at 5, 10, 15, 20 s, then the last one at close
    assert lines[0] == "judging: 25/200 pairs (12%), 2 from the store, 1 duplicate, 0 unjudged, 1 failed, $0.0000, 5 s"
    assert lines[-2].startswith("judging: 100/200 pairs (50%)") and lines[-1].startswith("judging: 100/200 pairs (50%)")


def test_a_run_shorter_than_the_interval_prints_nothing():
    out, clock = io.StringIO(), Clock()
    progress = Progress(3, file=out, every=5.0, clock=clock)
    for done in (1, 2, 3):
        clock.now += 1.0
        progress(_stats(done))
    progress.close()
    assert out.getvalue() == ""
