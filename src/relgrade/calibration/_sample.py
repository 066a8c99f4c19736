"""Which pairs humans should label next: stratified by judge grade and query, sized by a target CI.

Every judge grade is represented (equal quotas, the slack of a small grade passed to the others);
within a grade, pairs are spread over queries (round-robin: each query's first pick before any
query's second) and, when the judge gave a distribution, the most uncertain (highest entropy)
first; remaining ties are broken at random with the explicit seed.

Planning size for a target half-width ``h`` of the kappa CI (large-sample variance of kappa,
Fleiss, Cohen & Everitt 1969, simplified): ``n = (1.96 / h)^2 * p_o (1 - p_o) / (1 - p_e)^2`` with
``p_e = sum_g p_g^2`` from the judge's grade shares (human shares assumed alike) and
``p_o = p_e + kappa0 (1 - p_e)`` for an assumed kappa ``kappa0`` (default 0.5). Query clustering
widens real intervals: treat the result as a floor and check it with ``relgrade calibrate``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from relgrade._errors import InputError

COLUMNS = ("query_id", "query", "doc_id", "text", "judge_grade", "grade")


@dataclass(frozen=True)
class SampleItem:
    query_id: str
    doc_id: str
    judge_grade: int
    uncertainty: float | None
    query: str = ""
    text: str = ""


def sample_size(judge: Mapping[str, Mapping[str, int]], target_halfwidth: float, *, assumed_kappa: float = 0.5) -> int:
    """Pairs needed for a kappa CI half-width of ``target_halfwidth`` (see the module docstring)."""
    if not 0 < target_halfwidth < 1:
        raise InputError(f"target half-width must be between 0 and 1, got {target_halfwidth}; e.g. --target-halfwidth 0.05")
    if not -1 < assumed_kappa < 1:
        raise InputError(f"assumed kappa must be between -1 and 1, got {assumed_kappa}")
    grades = [g for docs in judge.values() for g in docs.values()]
    if not grades:
        raise InputError("the judge labels are empty; nothing to sample from")
    _, counts = np.unique(grades, return_counts=True)
    p = counts / counts.sum()
    p_e = float((p ** 2).sum())
    if p_e >= 1:
        p_e = 0.5  # one grade only: plan as for a balanced binary task
    p_o = p_e + assumed_kappa * (1 - p_e)
    return int(math.ceil((1.96 / target_halfwidth) ** 2 * p_o * (1 - p_o) / (1 - p_e) ** 2))


def _entropy(dist: Mapping[int, float] | None) -> float | None:
    if not dist:
        return None
    p = np.asarray([max(float(v), 0.0) for v in dist.values()])
    if p.sum() <= 0:
        return None
    p = p / p.sum()
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


def sample_pairs(
    judge: Mapping[str, Mapping[str, int]],
    *,
    n: int,
    distribution: Mapping[tuple[str, str], Mapping[int, float]] | None = None,
    exclude: Mapping[str, Mapping[str, int]] | None = None,
    seed: int = 0,
) -> tuple[SampleItem, ...]:
    """Choose ``n`` judged pairs, stratified by judge grade and query, uncertain first."""
    if n < 1:
        raise InputError(f"--n must be at least 1, got {n}")
    exclude = exclude or {}
    distribution = distribution or {}
    rng = np.random.default_rng(seed)
    by_grade: dict[int, list[tuple[str, str]]] = {}
    for q in sorted(judge):
        for d in sorted(judge[q]):
            if d in exclude.get(q, {}):
                continue
            by_grade.setdefault(int(judge[q][d]), []).append((q, d))
    if not by_grade:
        raise InputError("no judged pair left to sample (all excluded or none judged)")
    grades = sorted(by_grade)
    # equal quotas, slack of small grades passed on
    quota = {g: 0 for g in grades}
    left = min(n, sum(len(v) for v in by_grade.values()))
    open_grades = list(grades)
    while left > 0 and open_grades:
        share = max(1, left // len(open_grades))
        for g in list(open_grades):
            take = min(share, len(by_grade[g]) - quota[g], left)
            quota[g] += take
            left -= take
            if quota[g] >= len(by_grade[g]):
                open_grades.remove(g)
            if left == 0:
                break
    chosen: list[SampleItem] = []
    for g in grades:
        pool = by_grade[g]
        noise = rng.random(len(pool))
        unc = [_entropy(distribution.get(key)) for key in pool]
        score = np.array([-(u if u is not None else 0.0) for u in unc])
        order = np.lexsort((noise, score))  # most uncertain first, random ties
        rank_in_query: dict[str, int] = {}
        ranked = []
        for i in order:
            q = pool[i][0]
            r = rank_in_query.get(q, 0)
            rank_in_query[q] = r + 1
            ranked.append((r, len(ranked), i))
        ranked.sort()
        for _, _, i in ranked[: quota[g]]:
            q, d = pool[i]
            chosen.append(SampleItem(q, d, g, unc[i]))
    return tuple(chosen)


def write_sample(
    items: Sequence[SampleItem],
    path: str | Path,
    *,
    queries: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
    info: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
) -> Path:
    """Write the items to label as CSV or JSONL (by extension) with an empty ``grade`` column."""
    p = Path(path)
    queries, texts, info = queries or {}, texts or {}, info or {}
    rows = []
    for it in items:
        extra = info.get((it.query_id, it.doc_id), {})
        rows.append({
            "query_id": it.query_id,
            "query": it.query or extra.get("query") or queries.get(it.query_id, ""),
            "doc_id": it.doc_id,
            "text": it.text or extra.get("text") or texts.get(it.doc_id, ""),
            "judge_grade": it.judge_grade,
            "grade": None,
        })
    suffix = p.suffix.lower()
    if suffix not in {".jsonl", ".ndjson", ".csv"}:
        raise InputError("output must end in .csv or .jsonl", path=p)
    try:
        with open(p, "w", encoding="utf-8", newline="") as fh:
            if suffix in {".jsonl", ".ndjson"}:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
                writer.writeheader()
                for row in rows:
                    writer.writerow({**row, "grade": ""})
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", path=p) from None
    return p
