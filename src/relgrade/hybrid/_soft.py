"""The soft prediction's machinery (see :mod:`relgrade.hybrid._predict`): pools, features, cross-fitted fits,
expected metrics."""

from __future__ import annotations

from collections.abc import Sequence
import numpy as np

from relgrade.calibration._crossfit import query_folds
from relgrade.calibration._grade_model import PRIOR_SD, fit_grade_model
from relgrade.io import Qrels, Run
from relgrade.io._labels import DEFAULT_SCALE
from relgrade.metrics import Metric, join
from relgrade.hybrid._expect import expected_answerable, expected_block, expected_values
from relgrade.hybrid._values import answerable, per_query_values

MODEL = (f"multinomial logistic regression of the human grade on each judge's grade (one-hot, with a 'not graded' "
         f"column) and expected grade (residual from the grade, standardised), normal prior sd {PRIOR_SD:g} "
         "(relgrade.calibration._grade_model)")
EXPECTATION = ("each metric's expectation under the pair probabilities: recall@k, precision@k, mrr and the answerability "
               "with pairs independent given the judges (exact); nDCG with the expected gains plugged into the DCG and "
               "the ideal DCG; frac_recall with a query's pairs comonotone (one shared uniform; relgrade.hybrid._expect)")
BLEND = ("the mean of the calibrated expectation and the metric on the judges' own grades (over the judges that graded "
         "the query, each weighted by r^2 / (1 - r^2), r the correlation of its own metric with the calibrated "
         "expectation over all queries: one judge has weight 1; a query no judge graded: the calibrated expectation "
         "alone); the half-and-half is fixed in advance and no weight is fitted on the human values")


def soft_values(runs: Sequence[Run], human: Qrels, sets, metrics: Sequence[Metric], labeled: Sequence[str],
                unlabeled: Sequence[str], rel_threshold: int, n_folds: int, seed: int):
    """``(values (runs x queries x metrics), answerability (queries), description)``: cross-fitted soft predictions,
    blended with the metric on each judge's own grades (:data:`BLEND`; :mod:`relgrade.hybrid._predict`)."""
    population = tuple(labeled) + tuple(unlabeled)
    docs, orders = pools(runs, sets, population)
    X, columns, graded = features(sets, population, docs)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    classes = human_classes(human, sets)
    folds = query_folds(labeled, n_folds, seed)
    fold_of = {q: f for f, fold in enumerate(folds) for q in fold}
    models = []
    for f in range(len(folds)):
        train = [t for t, q in enumerate(labeled) if fold_of[q] != f]
        rows = np.concatenate([np.arange(offsets[t], offsets[t + 1]) for t in train]).astype(np.int64)
        grades = [human.labels.get(labeled[t], {}).get(d, 0) for t in train for d in docs[t]]
        models.append(fit_grade_model(X[rows], grades, classes))
    fold = np.array([fold_of.get(q, -1) for q in population], dtype=np.int64)
    values, ans = expectations_all(X, offsets, orders, models, fold, classes, metrics, rel_threshold)
    values, ans = _blend(values, ans, runs, sets, metrics, population, rel_threshold)
    unjudged = 0
    for o in orders:
        flat, lengths = _flat(o)
        unjudged += int(np.count_nonzero(~graded[np.repeat(offsets[:-1], lengths) + flat]))
    desc = {"folds": len(folds), "seed": seed, "model": MODEL, "features": columns, "classes": list(classes),
            "expectation": EXPECTATION, "blend": BLEND, "training_pairs": int(offsets[len(labeled)]),
            "retrieved_pairs_no_judge_graded": unjudged}
    return values, ans, desc


def _blend(values, ans, runs, sets, metrics, population, t):
    """The half-and-half blend of :data:`BLEND`: ``values`` and ``ans`` with the hard values of the judges that graded
    each query, weighted by :func:`judge_weights`; a query no judge graded keeps the calibrated expectation alone (its
    base rates)."""
    hards, hard_anss, seens = [], [], []
    for js in sets:
        own = js.grades if js.grades.labels is js.raw else Qrels(js.raw)  # unmapped grades: one Qrels
        seens.append(np.array([q in js.raw for q in population], dtype=np.float64))
        hards.append(np.stack([per_query_values(own, run, metrics, population, rel_threshold=t) for run in runs]))
        hard_anss.append(answerable(own, population, t))
    weight = judge_weights(values, hards, seens)  # judges x metrics
    hard, hard_ans = np.zeros_like(values), np.zeros_like(ans)
    total, total_ans = np.zeros(values.shape[1:]), np.zeros(len(population))
    for k, (h, a, seen) in enumerate(zip(hards, hard_anss, seens)):
        wk = seen[:, None] * weight[k][None, :]  # queries x metrics
        hard += wk[None] * h
        total += wk
        wa = seen * weight[k].mean()
        hard_ans += wa * a
        total_ans += wa
    graded = np.array(seens).max(axis=0) > 0
    share = np.where(graded, 0.5, 0.0)  # the hard share
    with np.errstate(invalid="ignore", divide="ignore"):
        hard = np.where(total[None] > 0, hard / np.where(total > 0, total, 1.0)[None], values)
        hard_ans = np.where(total_ans > 0, hard_ans / np.where(total_ans > 0, total_ans, 1.0), ans)
    return ((1 - share)[None, :, None] * values + share[None, :, None] * hard, (1 - share) * ans + share * hard_ans)


def judge_weights(expected: np.ndarray, hards, seens) -> np.ndarray:
    """Each judge's weight in the blend's hard part (judges x metrics), from how well the metric on its own grades
    tracks the calibrated expectation over every query it graded (``r``: their correlation over queries and runs):
    ``r^2 / (1 - r^2)``, the share of its spread that is signal over the share that is noise, so a judge whose own
    metric says little next to a better one's counts little (issue 35: two judges add up, a weak one never drags a
    strong one down). One judge: weight 1. Computed from the predictions alone, no human label read here."""
    if len(hards) == 1:
        return np.ones((1, expected.shape[2]))
    out = np.zeros((len(hards), expected.shape[2]))
    for k, (h, seen) in enumerate(zip(hards, seens)):
        at = seen > 0
        for j in range(expected.shape[2]):
            x, y = h[:, at, j].ravel(), expected[:, at, j].ravel()
            r = float(np.corrcoef(x, y)[0, 1]) if x.size > 2 and np.ptp(x) > 0 and np.ptp(y) > 0 else 0.0
            r = min(max(r, 0.0), 0.99)
            out[k, j] = r * r / (1 - r * r)
    none = out.sum(axis=0) <= 0
    out[:, none] = 1.0  # no judge tracks it: equal weights, as before
    return out


def pools(runs: Sequence[Run], sets, topics: Sequence[str]) -> tuple[list[list[str]], list[list[np.ndarray]]]:
    """Per topic, the pool's doc ids (every run's retrieved documents, then judged ones no run retrieved) and,
    per run, the pool index of each retrieved document in trec_eval order."""
    ranked = [join(Qrels({}), run, topics=topics) for run in runs]
    listed = [(rk.doc.tolist(), rk.starts.tolist(), rk.counts.tolist()) for rk in ranked]  # one pass, not per topic
    docs: list[list[str]] = []
    orders: list[list[np.ndarray]] = [[] for _ in runs]
    raws = [js.raw for js in sets]
    for t, q in enumerate(topics):
        index: dict[str, int] = {}
        for r, (ids, starts, counts) in enumerate(listed):
            s = starts[t]
            orders[r].append(np.array([index.setdefault(d, len(index)) for d in ids[s:s + counts[t]]],
                                      dtype=np.int64))
        for raw in raws:
            for d in raw.get(q, ()):
                index.setdefault(d, len(index))
        docs.append(list(index))
    return docs, orders


def features(sets, topics: Sequence[str], docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(pairs x features) for every pool pair, topic by topic, the features' names (module docstring of
    :mod:`relgrade.hybrid._predict`; columns that are 0 on every pair are dropped) and whether some judge graded
    each pair."""
    n_pairs = sum(len(ds) for ds in docs)
    blocks, names = [], []
    graded = np.zeros(n_pairs, dtype=bool)
    for js in sets:
        grades = sorted({g for ds in js.raw.values() for g in ds.values()})
        col = {g: i for i, g in enumerate(grades)}
        code, resid = [], []
        for q, ds in zip(topics, docs):
            raw, exp = js.raw.get(q, {}), js.expected.get(q, {})
            gs = [raw.get(d) for d in ds]
            code += [len(grades) if g is None else col[g] for g in gs]
            resid += [np.nan if g is None or exp.get(d) is None else exp[d] - g for d, g in zip(ds, gs)]
        code_a, resid_a = np.asarray(code, dtype=np.int64), np.asarray(resid, dtype=np.float64)
        onehot = np.zeros((n_pairs, len(grades) + 1))
        onehot[np.arange(n_pairs), code_a] = 1.0
        graded |= code_a < len(grades)
        blocks.append(onehot)
        names += [f"{js.name} grade {g}" for g in grades] + [f"{js.name} did not grade"]
        seen = ~np.isnan(resid_a)
        if seen.any():
            sd = resid_a[seen].std()
            blocks.append(np.where(seen, (resid_a - resid_a[seen].mean()) / (sd if sd > 0 else 1.0), 0.0)[:, None])
            names.append(f"{js.name} expected grade - grade")
    X = np.hstack(blocks) if n_pairs else np.zeros((0, len(names)))
    keep = X.any(axis=0) if len(X) else np.zeros(len(names), bool)
    return X[:, keep], [n for n, k in zip(names, keep) if k], graded


def human_classes(human: Qrels, sets) -> tuple[int, ...]:
    """The human grades the model gives probabilities to: 0/1 when the humans and the judges grade 0/1 (a binary
    judge beside binarized humans), else the default scale with every grade the humans used."""
    used = {g for ds in human.labels.values() for g in ds.values()}
    judged = {g for js in sets for ds in js.raw.values() for g in ds.values()}
    if used | judged <= {0, 1}:
        return (0, 1)
    return tuple(sorted(set(DEFAULT_SCALE) | used | {0}))


BLOCK = 1 << 20
"""Cells (models x queries x pool or ranking width) one block of :func:`expectations_all` holds at a time."""


def expectations_all(X: np.ndarray, offsets: np.ndarray, orders, models, fold: np.ndarray, classes: Sequence[int],
                     metrics: Sequence[Metric], rel_threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """((runs x queries x metrics) values, (queries) answerability) of every query's pool rows ``X[offsets[t]:
    offsets[t + 1]]``: a labeled query (``fold`` >= 0) under its own fold's model, another averaged over the fold
    models. Queries go through :func:`relgrade.hybrid._expect.expected_block` a block at a time (at most
    :data:`BLOCK` cells), so memory follows the block, not the number of queries; the same values as
    :func:`expectations` query by query (``tests/hybrid/test_soft_oracle.py``)."""
    cls = np.asarray(classes, dtype=np.float64)
    gains, relevant = np.maximum(cls, 0.0), cls >= rel_threshold
    sizes = np.diff(offsets)
    T = len(sizes)
    flats = [_flat(o) for o in orders]
    values = np.zeros((len(orders), T, len(metrics)))
    ans = np.zeros(T)
    frac = [j for j, m in enumerate(metrics) if m.measure == "frac_recall"]
    distinct, inverse = distinct_rows(X)  # each model's probabilities once per distinct feature row
    Pd = np.stack([m.predict_proba(distinct) for m in models])  # (S, distinct rows, C)
    pd_, gd = Pd @ relevant.astype(np.float64), Pd @ gains
    for lo, hi in _blocks(sizes, len(models)):
        at = inverse[offsets[lo]:offsets[hi]]
        p, g = pd_[:, at], gd[:, at]
        P = Pd[:, at] if frac else None  # (S, rows, C)
        start = offsets[lo:hi] - offsets[lo]
        ppool, gpool = _padded(p, start, sizes[lo:hi]), _padded(g, start, sizes[lo:hi])
        ans[lo:hi] = _per_query(1.0 - np.prod(1.0 - ppool, axis=2), fold[lo:hi])
        for r, (flat, lengths) in enumerate(flats):
            depth = lengths[lo:hi]
            rows = np.repeat(start, depth) + flat[_span(lengths, lo, hi)]
            block = expected_block(_padded(p[:, rows], _starts(depth), depth),
                                   _padded(g[:, rows], _starts(depth), depth), depth, gpool, metrics)
            values[r, lo:hi] = _per_query(block, fold[lo:hi])
            for t in range(lo, hi) if frac else ():
                use = [fold[t]] if fold[t] >= 0 else slice(None)
                Pt = P[use, start[t - lo]:start[t - lo] + sizes[t]]
                for j in frac:
                    values[r, t, j] = expected_values(Pt, orders[r][t], gains, relevant, [metrics[j]]).mean(axis=0)[0]
    return values, ans


def distinct_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, inverse)``: the distinct rows of ``X`` (equal bytes: the same numbers in, the same numbers out) and,
    per row of ``X``, its index among them. A judge's pool rows take few distinct values (a grade's one-hot, an
    expected grade), so the models' probabilities are computed once per distinct row."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not X.size:
        return X, np.zeros(len(X), np.int64)
    keys = X.view(np.dtype((np.void, X.itemsize * X.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return X[first], inverse.ravel().astype(np.int64)


def _per_query(block: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """(queries, ...) from (models, queries, ...): a labeled query's own fold model, the others' mean over models."""
    out = block.mean(axis=0)
    own = fold >= 0
    out[own] = block[fold[own], np.flatnonzero(own)]
    return out


def _blocks(sizes: np.ndarray, n_models: int):
    """``(lo, hi)`` runs of consecutive queries whose padded (models x queries x widest pool) cells stay within
    :data:`BLOCK` (a query wider than that gets a block of its own)."""
    lo, widest = 0, 0
    for t, n in enumerate(sizes.tolist()):
        w = max(widest, n, 1)
        if t > lo and n_models * (t + 1 - lo) * w > BLOCK:
            yield lo, t
            lo, w = t, max(n, 1)
        widest = w
    if lo < len(sizes):
        yield lo, len(sizes)


def _flat(order: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-topic index arrays as one flat array and their lengths."""
    lengths = np.fromiter((len(o) for o in order), dtype=np.int64, count=len(order))
    flat = np.concatenate(order).astype(np.int64) if len(order) else np.zeros(0, np.int64)
    return flat, lengths


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if len(lengths) else lengths


def _span(lengths: np.ndarray, lo: int, hi: int) -> slice:
    """The slice of a flat array (:func:`_flat`) holding topics ``lo..hi-1``."""
    before = int(lengths[:lo].sum())
    return slice(before, before + int(lengths[lo:hi].sum()))


def _padded(x: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """(S, rows) -> (S, queries, widest): each query's rows ``start:start + length``, 0 beyond its length."""
    width = int(length.max()) if len(length) else 0
    col = np.arange(width)
    valid = col[None, :] < length[:, None]
    idx = np.where(valid, start[:, None] + col[None, :], 0)
    out = x[:, idx] if x.shape[1] else np.zeros((x.shape[0],) + idx.shape)
    out[:, ~valid] = 0.0
    return out


def expectations(P: np.ndarray, orders: Sequence[np.ndarray], classes: Sequence[int], metrics: Sequence[Metric],
                 rel_threshold: int) -> tuple[np.ndarray, float]:
    """((runs x metrics) values, answerability) of one query from its pool's grade distributions ``P`` (S, n, C),
    averaged over the S models: the plain form :func:`expectations_all` is tested against."""
    cls = np.asarray(classes, dtype=np.float64)
    gains, relevant = np.maximum(cls, 0.0), cls >= rel_threshold
    values = np.stack([expected_values(P, order, gains, relevant, metrics).mean(axis=0) for order in orders])
    return values, float(expected_answerable(P, relevant).mean())
