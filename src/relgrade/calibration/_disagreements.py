"""The pairs where judge and humans differ, largest gap first: what a human auditor should look at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relgrade.calibration._results import Labels


@dataclass(frozen=True)
class Disagreement:
    """A pair where the judge and the humans differ, with what a human auditor needs to see."""

    query_id: str
    doc_id: str
    human: int
    judge: int
    query: str = ""
    text: str = ""
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "doc_id": self.doc_id, "human": self.human, "judge": self.judge,
                "query": self.query, "text": self.text, "reason": self.reason}


def disagreements(
    judge: Labels,
    human: Labels,
    *,
    info: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
    limit: int | None = None,
) -> tuple[Disagreement, ...]:
    """Pairs graded differently, largest gap first (then query, doc); texts and reasons from ``info``."""
    info = info or {}
    rows = []
    for q in set(judge) & set(human):
        for d in set(judge[q]) & set(human[q]):
            h, j = human[q][d], judge[q][d]
            if h != j:
                extra = info.get((q, d), {})
                rows.append(Disagreement(q, d, int(h), int(j), str(extra.get("query", "")), str(extra.get("text", "")),
                                         str(extra.get("reason", ""))))
    rows.sort(key=lambda r: (-abs(r.judge - r.human), r.query_id, r.doc_id))
    return tuple(rows if limit is None else rows[:limit])
