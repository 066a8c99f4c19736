"""The pairs both raters labeled, aligned into arrays, and the checks on scale, threshold and weights."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.calibration._results import Labels, Scores


def check_scale(scale: Sequence[int]) -> tuple[int, ...]:
    values = tuple(int(s) for s in scale)
    if len(values) < 2 or list(values) != sorted(set(values)):
        raise InputError(f"scale must be at least two increasing distinct grades, got {list(scale)}; e.g. --scale 0-3")
    return values


def check_threshold(threshold: int, scale: tuple[int, ...]) -> int:
    if threshold not in scale or threshold == scale[0]:
        raise InputError(
            f"binary threshold {threshold} must be a grade of the scale {list(scale)} above its lowest; "
            "e.g. --threshold 2 (grade >= 2 counts as relevant)"
        )
    return int(threshold)


def check_labels_in_scale(labels: Labels, scale: Sequence[int], *, what: str) -> None:
    """Raise InputError with the count and one example when a grade is outside ``scale`` (no clipping)."""
    allowed = set(scale)
    bad = [(q, d, g) for q, docs in labels.items() for d, g in docs.items() if g not in allowed]
    if bad:
        q, d, g = bad[0]
        raise InputError(
            f"{what}: {plural(len(bad), 'label')} outside the scale {list(scale)}, e.g. query {q!r} doc {d!r} grade {g}; "
            "fix the labels or declare the scale with --scale"
        )


@dataclass(frozen=True)
class Pairs:
    """Aligned arrays of the pairs both raters labeled: query index, scale positions, optional score."""

    queries: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]
    group: np.ndarray
    human: np.ndarray
    judge: np.ndarray
    score: np.ndarray | None


def align(judge: Labels, human: Labels, scale: tuple[int, ...], expected: Scores | None = None) -> Pairs:
    """The pairs labeled by both, in a stable order (query, then doc id)."""
    pos = {g: i for i, g in enumerate(scale)}
    keys, groups, h, j, s = [], [], [], [], []
    queries: list[str] = []
    for q in sorted(set(judge) & set(human)):
        docs = sorted(set(judge[q]) & set(human[q]))
        if not docs:
            continue
        qi = len(queries)
        queries.append(q)
        for d in docs:
            keys.append((q, d))
            groups.append(qi)
            h.append(pos[human[q][d]])
            j.append(pos[judge[q][d]])
            if expected is not None:
                value = expected.get(q, {}).get(d)
                s.append(np.nan if value is None else float(value))
    score = None
    if expected is not None:
        arr = np.asarray(s, dtype=np.float64)
        score = arr if np.isfinite(arr).any() else None
    return Pairs(tuple(queries), tuple(keys), np.asarray(groups, dtype=np.int64), np.asarray(h, dtype=np.int64),
                 np.asarray(j, dtype=np.int64), score)


def pair_weights(pairs: Pairs, weights: Mapping[tuple[str, str], float] | None) -> np.ndarray | None:
    """Per-pair inclusion weights aligned with ``pairs.keys`` (None: all 1); every pair needs a positive weight."""
    if weights is None:
        return None
    out = np.empty(len(pairs.keys))
    for i, key in enumerate(pairs.keys):
        w = weights.get(key)
        if w is None:
            raise InputError(f"weights: no weight for query {key[0]!r} doc {key[1]!r}; give every labeled pair its "
                             "inclusion weight (the 'weight' column of a relgrade sample file)")
        w = float(w)
        if not (math.isfinite(w) and w > 0):
            raise InputError(f"weights: query {key[0]!r} doc {key[1]!r} has weight {w}; weights must be positive "
                             "numbers (1 / inclusion probability)")
        out[i] = w
    return out
