"""Progress of a judging run: a tqdm bar on a terminal, else a plain line every few seconds.

A judging run with the local model takes minutes; in a CI log, a notebook or behind ``| tee`` a
tqdm bar is invisible (it only redraws a sized terminal), so without a terminal the reporter prints
one line (``judging: 40/150 pairs (27%), 2 from the store, 1 duplicate, 0 unjudged, 0 failed, $0.0000, 21 s``) at most
every ``every`` seconds, and a last one when the run ends.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO

from relgrade._words import plural


class Progress:
    """``on_progress`` callback of :func:`relgrade.judge.judge_pairs`; call :meth:`close` at the end."""

    def __init__(self, total: int, *, desc: str = "judging", file: TextIO | None = None, every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.desc, self.every, self.clock = total, desc, every, clock
        self.file = file if file is not None else sys.stderr
        self.start = clock()
        self.last_line = self.start
        self.stats: dict[str, Any] = {}
        self.lines = 0
        isatty = getattr(self.file, "isatty", None)
        self.bar = None
        if callable(isatty) and isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="pair", file=self.file, dynamic_ncols=True, desc=desc)

    def __call__(self, stats: dict[str, Any]) -> None:
        self.stats = dict(stats)
        if self.bar is not None:
            self.bar.n = stats.get("done", 0)
            self.bar.set_postfix(from_store=stats.get("stored", 0), duplicates=stats.get("duplicates", 0),
                                 unjudged=stats.get("unjudged", 0),
                                 failed=stats.get("failed", 0), cost=f"${stats.get('cost_usd', 0.0):.4f}", refresh=False)
            self.bar.refresh()
            return
        now = self.clock()
        if now - self.last_line >= self.every:
            self._line(now)

    def line(self) -> str:
        s, done = self.stats, self.stats.get("done", 0)
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        return (f"{self.desc}: {done}/{self.total} pairs{share}, {s.get('stored', 0)} from the store, "
                f"{plural(s.get('duplicates', 0), 'duplicate')}, {s.get('unjudged', 0)} unjudged, {s.get('failed', 0)} failed, ${s.get('cost_usd', 0.0):.4f}, "
                f"{self.clock() - self.start:.0f} s")

    def _line(self, now: float) -> None:
        self.last_line = now
        self.lines += 1
        print(self.line(), file=self.file, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.lines:  # a run that needed progress lines gets its last one
            self._line(self.clock())


__all__ = ["Progress"]
