"""The CI gate as a library: reports in, a pass/fail verdict with its reasons out (``relgrade gate`` prints it).

``_gate`` compares two reports (a drop beyond ``max_drop`` or beyond the CI, a new leak, the judge's verdict);
``_min`` holds one report to a floor; ``_paired`` reads one paired report (``compare --human --judge``); ``_checks``
validates every number, interval and setting of a report before any rule reads it; ``_loop`` holds the guide's
loop checks (corpus fingerprints, repeat noise). Lightweight: no numpy, pandas or provider import.
"""

from relgrade.gating._gate import DEFAULT_MAX_DROP, GateResult, GateRow, gate, read_report
from relgrade.gating._min import FloorResult, gate_min
from relgrade.gating._paired import gate_paired

__all__ = ["DEFAULT_MAX_DROP", "FloorResult", "GateResult", "GateRow", "gate", "gate_min", "gate_paired", "read_report"]
