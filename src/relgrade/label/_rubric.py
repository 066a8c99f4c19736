"""The 0-3 relevance rubric shown to annotators (the TREC Deep Learning track's graded scale).

Source: Craswell et al., "Overview of the TREC 2019 Deep Learning Track" (2020), section on
passage relevance judgments; the same four levels the judge grades with.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    grade: int
    name: str
    meaning: str


RUBRIC: tuple[Level, ...] = (
    Level(0, "Irrelevant", "The passage has nothing to do with the query."),
    Level(1, "Related", "The passage is on the topic of the query but does not answer it."),
    Level(2, "Highly relevant", "The passage answers the query, but the answer is unclear, partial, or buried in other text."),
    Level(3, "Perfectly relevant", "The passage is dedicated to the query and contains the exact answer."),
)
