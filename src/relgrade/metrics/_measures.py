"""Metric names: one parser for the string form, values that round-trip through ``repr``/``str``.

=================  ==========================================================  ==================
relgrade name      meaning                                                     trec_eval measure
=================  ==========================================================  ==================
``recall@k``       1 if any relevant doc is in the top k, else 0 (the guide's  ``success_k``
                   recall@k: mean over queries = share of queries that hit)
``precision@k``    relevant docs in the top k, divided by k                    ``P_k``
``mrr``            1 / rank of the first relevant doc (0 if none retrieved)    ``recip_rank``
``mrr@k``          as ``mrr`` but only the top k count                         (``recip_rank`` cut)
``ndcg@k``         graded nDCG, linear gain = grade, discount log2(rank + 1)   ``ndcg_cut_k``
                   (Järvelin & Kekäläinen 2002); ideal from all judged docs
``ndcg``           nDCG over the whole ranking                                 ``ndcg``
``frac_recall@k``  relevant docs in the top k / all relevant docs of the query ``recall_k``
=================  ==========================================================  ==================

"Relevant" means grade >= the relevance threshold (default 1, as trec_eval's ``-l``); nDCG uses
the raw grades whatever the threshold, as trec_eval does. Beware: trec_eval's ``recall_k`` is
relgrade's ``frac_recall@k``, not ``recall@k``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from relgrade._errors import InputError

_WITH_K = {"recall", "precision", "mrr", "ndcg", "frac_recall"}
_WITHOUT_K = {"mrr", "ndcg"}
_ALIASES = {
    "success": "recall",
    "hit": "recall",
    "hits": "recall",
    "hit_rate": "recall",
    "p": "precision",
    "prec": "precision",
    "recip_rank": "mrr",
    "rr": "mrr",
    "ndcg_cut": "ndcg",
    "recall_fraction": "frac_recall",
}
_TREC = {"success": "recall", "p": "precision", "ndcg_cut": "ndcg", "recall": "frac_recall"}

KNOWN = "recall@k, precision@k, mrr, mrr@k, ndcg@k, ndcg, frac_recall@k (trec_eval names success_k, P_k, recip_rank, ndcg_cut_k, recall_k also work)"


@dataclass(frozen=True, order=True)
class Metric:
    """A measure and its optional cutoff: ``Metric("ndcg", 10)`` is ``ndcg@10``."""

    measure: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.measure not in _WITH_K:
            raise InputError(f"unknown metric {self.measure!r}; known: {KNOWN}")
        if self.k is None and self.measure not in _WITHOUT_K:
            raise InputError(f"metric {self.measure!r} needs a cutoff, e.g. {self.measure}@10")
        if self.k is not None and (not isinstance(self.k, int) or self.k < 1):
            raise InputError(f"metric cutoff must be a positive integer, got {self.k!r}")

    @property
    def name(self) -> str:
        return self.measure if self.k is None else f"{self.measure}@{self.k}"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"parse_metric({self.name!r})"


def parse_metric(text: str | Metric) -> Metric:
    """Parse ``"ndcg@10"``, ``"recall@5"``, ``"mrr"``, or trec_eval's ``"ndcg_cut_10"``, ``"P_5"``."""
    if isinstance(text, Metric):
        return text
    raw = str(text).strip()
    s = raw.lower()
    m = re.fullmatch(r"([a-z_]+?)(?:@(\d+))?", s)
    if m is None:
        m_trec = re.fullmatch(r"([a-z_]+?)_(\d+)", s)
        if m_trec is None or m_trec.group(1) not in _TREC:
            raise InputError(f"unknown metric {raw!r}; known: {KNOWN}")
        return Metric(_TREC[m_trec.group(1)], int(m_trec.group(2)))
    measure, k = m.group(1), m.group(2)
    if k is None:
        m_trec = re.fullmatch(r"([a-z_]+?)_(\d+)", s)
        if m_trec is not None and m_trec.group(1) in _TREC:
            return Metric(_TREC[m_trec.group(1)], int(m_trec.group(2)))
    measure = _ALIASES.get(measure, measure)
    if measure not in _WITH_K:
        raise InputError(f"unknown metric {raw!r}; known: {KNOWN}")
    return Metric(measure, None if k is None else int(k))


DEFAULT_KS = (5, 10)
"""Cutoffs of the default metric list, for every command (evaluate, compare, estimate)."""
DEFAULT_RANK_METRIC = "ndcg@10"
"""The metric ``rank-systems`` ranks by when none is given (one ranking per metric is costly)."""


def default_metrics(ks: tuple[int, ...] = DEFAULT_KS) -> list[Metric]:
    """recall, precision and nDCG at each cutoff in ``ks`` (default :data:`DEFAULT_KS`), then MRR."""
    out = [Metric(measure, k) for k in ks for measure in ("recall", "precision", "ndcg")]
    return sorted(set(out), key=lambda m: (m.measure != "recall", m.measure, m.k or 0)) + [Metric("mrr")]


def parse_metrics(
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    ks: Iterable[int] | None = None,
    *,
    option: str = "--metric",
) -> list[Metric]:
    """The one metric-list parser of relgrade (library and every command).

    ``metrics``: names (``"recall@5"``, ``"ndcg_cut_10"``, ``Metric`` values) or one comma-separated
    string; duplicates dropped, order kept. Without names, the default list (:func:`default_metrics`)
    at the cutoffs ``ks`` (default :data:`DEFAULT_KS`). ``ks`` only shapes that default: given with
    names it is an error, as the cutoff then belongs in the name. Errors name ``option`` and list the
    known metrics.
    """
    ks = tuple(ks or ())
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"--k must be a positive integer cutoff, got {k!r}")
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    names: list[str | Metric] = []
    for item in metrics or ():
        if isinstance(item, Metric):
            names.append(item)
        else:
            names += [part for part in str(item).split(",") if part.strip()] or [str(item)]
    if not names:
        return default_metrics(ks or DEFAULT_KS)
    if ks:
        raise InputError(f"--k sets the cutoffs of the default metrics only; with {option} write the cutoff into "
                         "the name (e.g. recall@5) and drop --k")
    out = []
    for name in names:
        try:
            out.append(parse_metric(name))
        except InputError as exc:
            raise InputError(f"{option} {name}: {exc}") from None
    return list(dict.fromkeys(out))
