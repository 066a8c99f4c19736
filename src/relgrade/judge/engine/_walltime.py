"""How long a judge run will take, for ``relgrade judge --dry-run`` (issue 25: dollars said nothing about a local or
self-hosted judge, where time is the cost).

    wall time = max( calls × latency / (concurrency × servers × efficiency),   the calls in flight
                     calls / rpm minutes,  tokens / tpm minutes )              the rate limits, when set

* ``latency`` (seconds per call): given (``--latency``), else *measured*: the median latency of this model's
  latest judgments in the whole store (any pairs, any prompt, up to 1,000: ``JudgmentStore.latest``), else *assumed*:
  :data:`ASSUMED_LATENCY` (0.8 s for a provider, as ``benchmarks/million_pairs_cost.py`` assumes; 0.4 s for
  the embedded local judge, ``benchmarks/local_judge.py``);
* ``concurrency``: ``--concurrency`` per ``--api-base`` server; the local judge answers one call at a time;
* ``efficiency``: the share of that ideal the transport reaches, measured by ``benchmarks/judge_throughput.py``
  (64 in flight, 400 ms, 2 cores): about 0.9 on the lean transport, 0.65 through litellm (:data:`EFFICIENCY`).

The result says which of these it assumed, so a user can correct it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from relgrade._words import duration

ASSUMED_LATENCY = {"local": 0.4, "provider": 0.8}
EFFICIENCY = {"http": 0.9, "litellm": 0.65, "local": 1.0}


@dataclass(frozen=True)
class WallTime:
    """An estimated wall time and what it rests on."""

    seconds: float
    latency_s: float
    latency_from: str  # "given", "measured" or "assumed"
    slots: int  # calls in flight at once
    efficiency: float
    bound: str  # "concurrency", "--rpm" or "--tpm"
    measured_n: int = 0

    def text(self, calls: int) -> str:
        """``estimated wall time 4 min 10 s: 312 calls × 0.80 s ...`` (the assumptions included)."""
        from relgrade._words import plural

        why = {"given": "--latency",
               "measured": f"the median of {plural(self.measured_n, 'judgment')} of this model in the store",
               "assumed": "assumed: nothing of this model in the store to measure it from; set --latency"}
        line = (f"estimated wall time {duration(self.seconds)}: {plural(calls, 'call')} × {self.latency_s:.2f} s per "
                f"call ({why[self.latency_from]}) over {plural(self.slots, 'call')} in flight")
        if self.efficiency < 1:
            line += f" at {self.efficiency:.2f} of the ideal (the transport's measured throughput)"
        if self.bound != "concurrency":
            line += f"; the {self.bound} limit sets the pace"
        return line


def median_latency(records: Iterable[dict]) -> tuple[float | None, int]:
    """(median ``latency_s`` of stored judgments, how many had one). Answers of a provider batch (``batch`` in the
    record) are left out: their latency is the batch's turnaround, minutes or hours, not a call's."""
    values = [float(r["latency_s"]) for r in records if isinstance(r.get("latency_s"), (int, float))
              and r["latency_s"] > 0 and "batch" not in r]
    return (statistics.median(values) if values else None), len(values)


def wall_time(calls: int, *, local: bool, transport: str, concurrency: int, servers: int = 1,
              latency: float | None = None, measured: tuple[float | None, int] = (None, 0),
              rpm: float | None = None, tpm: float | None = None, tokens: int = 0) -> WallTime:
    """The estimate of the module docstring."""
    if latency is not None:
        lat, source, n = float(latency), "given", 0
    elif measured[0] is not None:
        lat, source, n = float(measured[0]), "measured", measured[1]
    else:
        lat, source, n = ASSUMED_LATENCY["local" if local else "provider"], "assumed", 0
    slots = 1 if local else max(1, concurrency) * max(1, servers)
    efficiency = EFFICIENCY["local" if local else transport]
    seconds, bound = math.ceil(calls / slots) * lat / efficiency if calls else 0.0, "concurrency"
    if rpm and calls / rpm * 60 > seconds:
        seconds, bound = calls / rpm * 60, "--rpm"
    if tpm and tokens / tpm * 60 > seconds:
        seconds, bound = tokens / tpm * 60, "--tpm"
    return WallTime(seconds, lat, source, slots, efficiency, bound, n)


__all__ = ["ASSUMED_LATENCY", "EFFICIENCY", "WallTime", "duration", "median_latency", "wall_time"]
