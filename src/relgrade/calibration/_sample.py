"""Which pairs humans should label next: a probability sample, so that the labels estimate population values.

Two designs here (``design=``); the default, ``queries``, is the one PPI (``relgrade estimate``) needs. The third,
``active`` (the judges choose which queries humans label), is :mod:`relgrade.calibration._active`.

``queries``: a uniform random sample of whole queries, drawn without replacement with the explicit seed,
with *every* pooled pair of each chosen query. The pool of a query (:func:`query_pool`) is the union of
(a) every pair the judge file lists for it, graded or unjudged, and (b) when runs and a ``depth`` are given,
the top ``depth`` documents of each run for it (trec_eval's order). ``relgrade estimate`` scores a labeled
query under human labels alone, so an unlabeled pooled pair of a "labeled" query would count as not relevant:
the whole pool gets labeled. A query, hence each of its pairs, is included with probability ``n / N`` (``N``
eligible queries), so every row's weight is ``N / n``; there is no stratum. Queries are listed in the order
drawn: the first ``m`` of a random permutation are a uniform sample too, so labeling in file order and
stopping after a whole query keeps the design.

``strata``: stratified simple random sampling of pairs (Cochran, *Sampling Techniques*, 1977, ch. 5). The
strata are the judge grades, each split into terciles of the entropy of the judge's grade distribution (cut
points of the grade's own entropies; ties kept together, so a grade whose entropies all tie stays one stratum)
when the judge gave distributions; strata are named ``grade=2`` or ``grade=2/entropy=low|mid|high``.
Allocation: equal per stratum, capped by the stratum's size, the slack of a small stratum passed on to the
others; within a stratum a simple random sample without replacement. A pair of stratum ``h`` is then included with probability
``pi = n_h / N_h`` and its weight is ``1 / pi = N_h / n_h``: a stratum's weights sum to ``N_h``, the sample's
to the population size ``N``. Population quantities (the confusion matrix, hence kappa) must be estimated
with these weights (Horvitz & Thompson 1952): unweighted, the rare grades are over-represented. Rows are
shuffled so that the file order does not reveal the strata. A stratified sample of pairs is not a sample of
whole queries, so it cannot feed PPI.

The earlier rule (round-robin over queries, most uncertain pairs first) is gone: it made a pair's inclusion
depend on the other pairs of its query and on its entropy rank, so no pair had a known inclusion probability,
and calibrating on it inflated kappa by about +0.10 in a simulation (issue 14). Uncertainty is now a stratum,
which keeps the informative intent with exact probabilities; spreading over queries is not kept, as no rule for
it keeps them exact.

Pairs already labeled (``exclude``): ``queries`` drops every query with a labeled pair (a uniform sample of the
remaining queries joined to an earlier uniform sample is a uniform sample of all); ``strata`` drops the pairs
before stratifying, so the weights refer to the pairs not labeled yet.

Planning size for a target half-width ``h`` of the kappa CI (:func:`sample_size`): ``n = (1.96 / h)^2 * v``,
with ``v`` the large-sample variance of Cohen's kappa times ``n`` (Fleiss, Cohen & Everitt 1969)::

    v = [ sum_i p_ii (1 - 2 p_i (1 - k))^2 + (1 - k)^2 sum_{i != j} p_ij (p_i + p_j)^2 - (k - p_e (1 - k))^2 ]
        / (1 - p_e)^2

evaluated on the table the plan assumes: both raters with the judge's grade shares ``p_i``, agreeing beyond
chance by ``k`` (``p_ij = (1 - k) p_i p_j + k p_i [i = j]``, so ``p_e = sum_i p_i^2`` and
``p_o = p_e + k (1 - p_e)``; default ``k = 0.5``). It assumes independent pairs; query clustering and the
weights of a stratified sample widen real intervals, so treat it as a floor and check the CI of
``relgrade calibrate``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from relgrade._errors import InputError

DESIGNS = ("queries", "strata", "active")
DEFAULT_DESIGN = "queries"
COLUMNS = ("query_id", "query", "doc_id", "text", "text_sha256", "grade", "design", "weight")
"""The annotators' file: blind to the judge (no grade, no stratum named after a grade)."""
ACTIVE_COLUMNS = COLUMNS + ("draws", "pool")
"""The annotators' file of the active design (:mod:`relgrade.calibration._active`): also each query's draws and the
pool size."""
JUDGE_COLUMNS = ("query_id", "doc_id", "grade", "source", "model", "stratum")
"""The file beside it (``items.judge.csv``): the judge's grade of each pair and its stratum, for later."""
BANDS = ("low", "mid", "high")  # entropy terciles within a judge grade
SUFFIXES = {".csv", ".jsonl", ".ndjson"}


@dataclass(frozen=True, kw_only=True)
class SampleItem:
    """One pair to label: its judge grade (None when pooled but not graded), design, stratum and weight 1/pi."""

    query_id: str
    doc_id: str
    judge_grade: int | None
    design: str
    weight: float
    stratum: str | None = None
    uncertainty: float | None = None  # entropy of the judge's grade distribution (nats), when given
    query: str = ""
    text: str = ""
    draws: int | None = None  # design active: draws that chose the query
    pool: int | None = None  # design active: the judged queries drawn from
    grade: int | None = None  # a pilot's human grade, kept in the file of a pilot + active batch


@dataclass(frozen=True)
class Stratum:
    """A stratum of the ``strata`` design: ``size`` pairs in the population (N_h), ``drawn`` sampled (n_h)."""

    name: str
    size: int
    drawn: int

    @property
    def weight(self) -> float:
        return self.size / self.drawn


@dataclass(frozen=True)
class Sample:
    """What :func:`sample_pairs` returns: the items and the population they were drawn from."""

    design: str
    items: tuple[SampleItem, ...]
    population_queries: int  # queries the draw could choose from (after exclusion)
    population_pairs: int  # pairs the draw could choose from (pooled pairs of those queries, or judged pairs)
    requested: int  # --n: queries (design queries) or pairs (design strata)
    strata: tuple[Stratum, ...] = ()
    floor: float | None = None  # design active: the uniform share used (the floor, raised to cap the design effect)

    @property
    def n_pairs(self) -> int:
        return len(self.items)

    @property
    def n_queries(self) -> int:
        return len({it.query_id for it in self.items})


def check_design(design: str) -> str:
    """``design`` if it is one of :data:`DESIGNS`, else an :class:`InputError` naming them."""
    if design not in DESIGNS:
        raise InputError(f"--design {design!r} is not a design; use one of {', '.join(DESIGNS)}")
    return design


MAX_PAIRS = 10 ** 9
"""The most pairs :func:`sample_size` plans for: a half-width that needs more is refused, not planned."""


def sample_size(judge: Mapping[str, Mapping[str, int]], target_halfwidth: float, *, assumed_kappa: float = 0.5) -> int:
    """Pairs needed for a kappa CI half-width of ``target_halfwidth`` (Fleiss et al. 1969; module docstring)."""
    if not 0 < target_halfwidth < 1:
        raise InputError(f"target half-width must be between 0 and 1, got {target_halfwidth}; "
                         "e.g. --target-halfwidth 0.05")
    if not 0 <= assumed_kappa < 1:
        raise InputError(f"--assumed-kappa must be in [0, 1), got {assumed_kappa}; e.g. --assumed-kappa 0.5")
    grades = [g for docs in judge.values() for g in docs.values()]
    if not grades:
        raise InputError("the judge labels are empty; nothing to sample from")
    _, counts = np.unique(grades, return_counts=True)
    p = counts / counts.sum() if len(counts) > 1 else np.array([0.5, 0.5])  # one grade: plan as balanced binary
    k = assumed_kappa
    table = (1 - k) * np.outer(p, p) + k * np.diag(p)
    p_e = float((p ** 2).sum())
    diag = np.diag(table)
    term_a = float((diag * (1 - 2 * p * (1 - k)) ** 2).sum())
    off = table * (p[:, None] + p[None, :]) ** 2
    term_b = (1 - k) ** 2 * float(off.sum() - np.diag(off).sum())
    term_c = (k - p_e * (1 - k)) ** 2
    v = max(term_a + term_b - term_c, 0.0) / (1 - p_e) ** 2
    log10_pairs = 2 * math.log10(1.96 / target_halfwidth) + (math.log10(v) if v > 0 else -math.inf)
    if log10_pairs > math.log10(MAX_PAIRS):  # (1.96 / 1e-300) ** 2 overflows a float: compared in logs
        raise InputError(f"--target-halfwidth {target_halfwidth:g} needs about 10^{log10_pairs:.0f} labeled pairs "
                         f"(assuming kappa {assumed_kappa}), more than any labeling can give (at most {MAX_PAIRS:,}); "
                         "give a half-width such as 0.05")
    return max(1, int(math.ceil((1.96 / target_halfwidth) ** 2 * v)))


def query_pool(
    judge: Mapping[str, Mapping[str, int]],
    *,
    unjudged: Iterable[tuple[str, str]] = (),
    runs: Sequence[Any] = (),
    depth: int | None = None,
) -> dict[str, tuple[str, ...]]:
    """``{query_id: (doc_id, ...)}``: the judge's pairs (graded, then ``unjudged``), then each run's top ``depth``."""
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InputError(f"--depth must be a positive integer, got {depth!r}")
    if runs and depth is None:
        raise InputError("runs add to the pool only with a depth; give --depth K (the top K the metrics look at)")
    pool: dict[str, dict[str, None]] = {}
    for q in sorted(judge):
        pool.setdefault(q, {}).update(dict.fromkeys(sorted(judge[q])))
    for q, d in unjudged:
        pool.setdefault(q, {}).setdefault(d, None)
    for run in runs:
        for q, docs in run.ranked(depth).items():
            pool.setdefault(q, {}).update(dict.fromkeys(docs[:depth]))
    return {q: tuple(docs) for q, docs in pool.items() if docs}


def pairs_per_query(pool: Mapping[str, Sequence[str]]) -> float:
    """Mean pooled pairs per query of ``pool``."""
    sizes = [len(docs) for docs in pool.values()]
    if not sum(sizes):
        raise InputError("the pool is empty; nothing to sample from")
    return sum(sizes) / len(sizes)


def queries_needed(pairs: int, pool: Mapping[str, Sequence[str]]) -> int:
    """Queries whose pools hold about ``pairs`` pairs: ``ceil(pairs / mean pooled pairs per query)``."""
    return max(1, math.ceil(pairs / pairs_per_query(pool)))


def sample_pairs(
    judge: Mapping[str, Mapping[str, int]],
    *,
    n: int,
    design: str = DEFAULT_DESIGN,
    pool: Mapping[str, Sequence[str]] | None = None,
    distribution: Mapping[tuple[str, str], Mapping[int, float]] | None = None,
    exclude: Mapping[str, Mapping[str, int]] | None = None,
    seed: int = 0,
) -> Sample:
    """A probability sample of pairs to label (module docstring): ``n`` whole queries or ``n`` pairs.

    ``pool`` (design ``queries``; default :func:`query_pool` of ``judge``) lists each query's pooled pairs;
    ``distribution`` (design ``strata``) holds the judge's grade distributions for the entropy terciles.
    """
    check_design(design)
    if design == "active":
        raise InputError("the active design draws with the judges' uncertainty: use relgrade.calibration.sample_active")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"--n must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)
    exclude = exclude or {}
    if design == "queries":
        if distribution:
            raise InputError("distribution= applies to design 'strata' (the queries design takes whole queries)")
        return _sample_queries(judge, pool if pool is not None else query_pool(judge), n, exclude, rng)
    if pool is not None:
        raise InputError("pool= applies to design 'queries'; the strata design samples the judged pairs")
    return _sample_strata(judge, distribution or {}, n, exclude, rng)


def _sample_queries(judge, pool, n: int, exclude, rng: np.random.Generator) -> Sample:
    eligible = [q for q in sorted(pool) if pool[q] and not any(d in exclude.get(q, {}) for d in pool[q])]
    if not eligible:
        raise InputError("no query left to sample (every query has a labeled pair, or none is pooled)")
    chosen = [eligible[i] for i in rng.permutation(len(eligible))[: min(n, len(eligible))]]
    weight = len(eligible) / len(chosen)
    items = tuple(
        SampleItem(query_id=q, doc_id=d, judge_grade=judge.get(q, {}).get(d), design="queries", weight=weight)
        for q in chosen for d in pool[q]
    )
    return Sample("queries", items, len(eligible), sum(len(pool[q]) for q in eligible), n)


def _entropy(dist: Mapping[int, float] | None) -> float | None:
    """Shannon entropy (nats) of a grade distribution, renormalised; None without one (negatives count as 0)."""
    if not dist:
        return None
    p = [max(float(v), 0.0) for v in dist.values()]
    total = sum(p)
    if not total > 0:
        return None
    return -sum(x / total * math.log(x / total) for x in p if x > 0)


def _strata(judge, distribution, exclude) -> dict[str, list[tuple[str, str, int, float | None]]]:
    """Stratum name -> its pairs ``(query, doc, grade, entropy)``, in a fixed order (query, doc)."""
    by_grade: dict[int, list[tuple[str, str, int, float | None]]] = {}
    for q in sorted(judge):
        for d in sorted(judge[q]):
            if d not in exclude.get(q, {}):
                g = int(judge[q][d])
                by_grade.setdefault(g, []).append((q, d, g, _entropy(distribution.get((q, d)))))
    strata: dict[str, list[tuple[str, str, int, float | None]]] = {}
    for g in sorted(by_grade):
        pairs = by_grade[g]
        known = np.array([e for *_, e in pairs if e is not None])
        if not known.size:
            strata[f"grade={g}"] = pairs
            continue
        low, high = (float(c) for c in np.quantile(known, [1 / 3, 2 / 3]))
        banded: dict[str, list[tuple[str, str, int, float | None]]] = {}
        for pair in pairs:
            e = pair[3]
            band = "unknown" if e is None else BANDS[(e > low) + (e > high)]
            banded.setdefault(f"grade={g}/entropy={band}", []).append(pair)
        strata.update(banded if len(banded) > 1 else {f"grade={g}": pairs})  # one band (all tied): the grade
    return {name: strata[name] for name in sorted(strata, key=_stratum_order)}


def _stratum_order(name: str) -> tuple[int, int]:
    grade, _, band = name.partition("/entropy=")
    return int(grade.removeprefix("grade=")), (BANDS.index(band) if band in BANDS else len(BANDS))


def _allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Equal shares, capped by each stratum's size, the slack passed on; leftovers go to the first open strata."""
    quota = [0] * len(sizes)
    left = min(n, sum(sizes))
    open_ = [h for h in range(len(sizes)) if sizes[h]]
    while left > 0 and open_:
        share = max(1, left // len(open_))
        for h in list(open_):
            take = min(share, sizes[h] - quota[h], left)
            quota[h] += take
            left -= take
            if quota[h] >= sizes[h]:
                open_.remove(h)
            if left == 0:
                break
    return quota


def _sample_strata(judge, distribution, n: int, exclude, rng: np.random.Generator) -> Sample:
    strata = _strata(judge, distribution, exclude)
    if not strata:
        raise InputError("no judged pair left to sample (all excluded or none judged)")
    if n < len(strata):
        kind = "judge grades x entropy terciles" if any("/entropy=" in s for s in strata) else "judge grades"
        raise InputError(f"--n {n} is fewer than the {len(strata)} strata ({kind}); every stratum needs a pair: "
                         f"use --n {len(strata)} or more")
    names = list(strata)
    quota = _allocate([len(strata[s]) for s in names], n)
    items: list[SampleItem] = []
    table: list[Stratum] = []
    for name, n_h in zip(names, quota):
        pairs = strata[name]
        weight = len(pairs) / n_h
        for i in rng.choice(len(pairs), size=n_h, replace=False):
            q, d, g, e = pairs[i]
            items.append(SampleItem(query_id=q, doc_id=d, judge_grade=g, design="strata", weight=weight,
                                    stratum=name, uncertainty=e))
        table.append(Stratum(name, len(pairs), n_h))
    order = rng.permutation(len(items))
    population = [p for s in names for p in strata[s]]
    return Sample("strata", tuple(items[i] for i in order), len({p[0] for p in population}), len(population), n,
                  tuple(table))


def check_writable(path: str | Path) -> Path:
    """Refuse (:class:`InputError`) an output that cannot be written, before any work: suffix, folder, permission."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise InputError("--out must end in .csv or .jsonl", path=p)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InputError("--out is a directory; give a file path such as items.csv", path=p)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"the output folder {what}; create it or choose another --out", path=p)
    read_only = hasattr(os, "statvfs") and bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    target = p if p.exists() else folder
    if read_only or not os.access(target, os.W_OK) or (target is folder and not os.access(folder, os.X_OK)):
        where = "the file system is read-only" if read_only else "permission denied"
        raise InputError(f"cannot write here ({where}); choose another --out", path=p)
    return p


def with_texts(
    sample: Sample,
    *,
    queries: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
    info: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
) -> Sample:
    """``sample`` with each item's query and chunk text: its own, else the judge's for the pair (``info``, as
    :func:`read_judge` gives it), else ``queries[query_id]`` / ``texts[doc_id]``; empty when none has it."""
    queries, texts, info = queries or {}, texts or {}, info or {}
    items = []
    for it in sample.items:
        extra = info.get((it.query_id, it.doc_id), {})
        items.append(replace(it, query=it.query or extra.get("query") or queries.get(it.query_id, ""),
                             text=it.text or extra.get("text") or texts.get(it.doc_id, "")))
    return replace(sample, items=tuple(items))


def write_sample(sample: Sample, path: str | Path, *, model: str | None = None) -> Path:
    """Write the items for the annotators as CSV or JSONL (by extension) with the :data:`COLUMNS`, ``grade`` empty,
    and the judge's grades and strata beside them (:func:`relgrade.label._items.judge_file_for`, ``items.judge.csv``,
    :data:`JUDGE_COLUMNS`; ``model`` names the judge there), both through :func:`relgrade.io.write_labels` (the one
    label writer: the design and each row's weight travel in the file).

    The annotators' file is blind: whoever fills it in a spreadsheet does not see what the judge said (anchoring
    would bias the very agreement being measured). ``relgrade calibrate --judge DETAILS --human items.csv`` joins
    the humans' grades with the judge's by (query_id, doc_id); so does ``--judge items.judge.csv``.
    ``text_sha256`` is the SHA-256 of the UTF-8 text (:func:`relgrade.io.text_sha256`), empty without text.
    """
    from relgrade.io import text_sha256, write_labels
    from relgrade.label._items import judge_file_for

    p = check_writable(path)
    beside = check_writable(judge_file_for(p))
    rows = [{
        "query_id": it.query_id,
        "query": it.query,
        "doc_id": it.doc_id,
        "text": it.text,
        "text_sha256": text_sha256(it.text) if it.text else None,
        "grade": it.grade,
        "design": it.design,
        "weight": it.weight,
        "draws": it.draws,
        "pool": it.pool,
    } for it in sample.items]
    judged = [{"query_id": it.query_id, "doc_id": it.doc_id, "grade": it.judge_grade, "source": "judge",
               "model": model, "stratum": it.stratum} for it in sample.items]
    write_labels(judged, beside, columns=JUDGE_COLUMNS)
    return write_labels(rows, p, columns=ACTIVE_COLUMNS if sample.design == "active" else COLUMNS)
