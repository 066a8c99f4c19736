"""Issue 39.2: the column-wise soft prediction gives today's numbers.

``plain_soft_values`` below is the soft prediction as it was before it was vectorised (a frozen copy of
``relgrade.hybrid._soft.soft_values`` at d3fdccc: one query at a time through ``expectations``), kept here as the
oracle. On seeded worlds with tied scores, pairs no judge graded, pairs the humans did not label, runs that miss
queries, several judges (one with expected grades) and several systems, the fast path must give the same values,
answerabilities and descriptions, and ``estimate`` / ``rank_systems`` the same intervals, to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

import relgrade.hybrid._predict as predict_module
import relgrade.hybrid._ratio as ratio_module
import relgrade.hybrid._soft as soft
from relgrade.calibration._crossfit import query_folds
from relgrade.calibration._grade_model import fit_grade_model
from relgrade.hybrid import estimate, rank_systems
from relgrade.hybrid._predict import JudgeSet, judge_sets
from relgrade.io import Qrels, Run
from relgrade.metrics import join, parse_metrics

TOL = 1e-12
METRICS = parse_metrics(["recall@5", "recall@10", "precision@5", "precision@10", "ndcg@5", "ndcg@10", "mrr", "ndcg",
                         "mrr@3", "frac_recall@5"])


def plain_soft_values(runs, human, sets, metrics, labeled, unlabeled, rel_threshold, n_folds, seed):
    population = tuple(labeled) + tuple(unlabeled)
    ranked = [join(Qrels({}), run, topics=population) for run in runs]
    docs, orders = [], [[] for _ in runs]
    for t, q in enumerate(population):
        index: dict[str, int] = {}
        for r, rk in enumerate(ranked):
            top = rk.top(t, int(rk.counts[t]))
            orders[r].append(np.array([index.setdefault(d, len(index)) for d in top], dtype=np.int64))
        for js in sets:
            for d in js.raw.get(q, ()):
                index.setdefault(d, len(index))
        docs.append(list(index))
    X, columns = plain_features(sets, population, docs)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    classes = soft.human_classes(human, sets)
    folds = query_folds(labeled, n_folds, seed)
    fold_of = {q: f for f, fold in enumerate(folds) for q in fold}
    models = []
    for f in range(len(folds)):
        train = [t for t, q in enumerate(labeled) if fold_of[q] != f]
        rows = np.concatenate([np.arange(offsets[t], offsets[t + 1]) for t in train]).astype(np.int64)
        grades = [human.labels.get(labeled[t], {}).get(d, 0) for t in train for d in docs[t]]
        models.append(fit_grade_model(X[rows], grades, classes))
    values = np.zeros((len(runs), len(population), len(metrics)))
    ans = np.zeros(len(population))
    for t, q in enumerate(population):
        rows = X[offsets[t]:offsets[t + 1]]
        use = [models[fold_of[q]]] if q in fold_of else models
        P = np.stack([m.predict_proba(rows) for m in use])
        values[:, t], ans[t] = soft.expectations(P, [o[t] for o in orders], classes, metrics, rel_threshold)
    values, ans = soft._blend(values, ans, runs, sets, metrics, population, rel_threshold)
    graded = {(q, d) for js in sets for q, ds in js.raw.items() for d in ds}
    unjudged = sum(1 for t, q in enumerate(population) for o in orders for i in o[t] if (q, docs[t][i]) not in graded)
    desc = {"folds": len(folds), "seed": seed, "model": soft.MODEL, "features": columns, "classes": list(classes),
            "expectation": soft.EXPECTATION, "blend": soft.BLEND, "training_pairs": int(offsets[len(labeled)]),
            "retrieved_pairs_no_judge_graded": unjudged}
    return values, ans, desc


def plain_features(sets, topics, docs):
    pairs = [(q, d) for q, ds in zip(topics, docs) for d in ds]
    blocks, names = [], []
    for js in sets:
        grades = sorted({g for ds in js.raw.values() for g in ds.values()})
        col = {g: i for i, g in enumerate(grades)}
        onehot = np.zeros((len(pairs), len(grades) + 1))
        resid = np.full(len(pairs), np.nan)
        for r, (q, d) in enumerate(pairs):
            g = js.raw.get(q, {}).get(d)
            onehot[r, len(grades) if g is None else col[g]] = 1.0
            e = None if g is None else js.expected.get(q, {}).get(d)
            if e is not None:
                resid[r] = e - g
        blocks.append(onehot)
        names += [f"{js.name} grade {g}" for g in grades] + [f"{js.name} did not grade"]
        seen = ~np.isnan(resid)
        if seen.any():
            sd = resid[seen].std()
            blocks.append(np.where(seen, (resid - resid[seen].mean()) / (sd if sd > 0 else 1.0), 0.0)[:, None])
            names.append(f"{js.name} expected grade - grade")
    X = np.hstack(blocks) if pairs else np.zeros((0, len(names)))
    keep = X.any(axis=0) if len(X) else np.zeros(len(names), bool)
    return X[:, keep], [n for n, k in zip(names, keep) if k]


def world(seed: int, n_queries: int = 60, n_labeled: int = 15, n_runs: int = 3, n_judges: int = 2):
    """Human labels, judge sets and runs with ties, gaps and uneven depths."""
    rng = np.random.default_rng(seed)
    human, judges, expected, runs = {}, [{} for _ in range(n_judges)], {}, [{} for _ in range(n_runs)]
    for i in range(n_queries):
        q = f"q{i}"
        n = int(rng.integers(1, 14))
        docs = [f"{q}d{j}" for j in range(n)]
        truth = rng.choice(4, size=n, p=[0.5, 0.2, 0.2, 0.1])
        if i < n_labeled:
            human[q] = {d: int(g) for d, g in zip(docs, truth) if rng.random() < 0.85}  # some pairs unlabeled
            if not human[q]:
                human[q] = {docs[0]: int(truth[0])}
        for k in range(n_judges):
            if k > 0 and rng.random() < 0.2:
                continue  # this judge skipped the query
            noisy = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 4, n))
            judges[k][q] = {d: int(g) for d, g in zip(docs, noisy) if rng.random() < 0.9}  # some pairs ungraded
            if k == 0:
                expected[q] = {d: float(np.clip(g + rng.normal(0, 0.5), 0, 3)) for d, g in judges[k][q].items()
                               if rng.random() < 0.8}
        for r in range(n_runs):
            if rng.random() < 0.05:
                continue  # the run misses this query
            depth = int(rng.integers(0, n + 1))
            picked = rng.choice(n, size=depth, replace=False)
            extra = [f"{q}x{r}_{j}" for j in range(int(rng.integers(0, 3)))]  # retrieved, never graded
            scores = np.round(truth[picked] + rng.normal(0, 1 + r, depth), 0)  # rounded: ties
            runs[r][q] = {docs[j]: float(s) for j, s in zip(picked, scores)}
            runs[r][q].update({d: float(rng.integers(-2, 2)) for d in extra})
    sets = [JudgeSet(f"j{k}", Qrels.from_dict(judges[k]), judges[k], expected if k == 0 else {})
            for k in range(n_judges)]
    runs = [Run.from_dict(run, name=f"sys{r}") for r, run in enumerate(runs)]
    return human, sets, runs


class DenseShifted:
    """The ratio's unlabeled ``Z_r`` as the plain code built it: the array ``np.tile(Yu, k) - r * Au``."""

    def __init__(self, Yu, Au):
        self.Yu, self.Au = Yu, Au[:, None]

    def at(self, r, k=1):
        return np.tile(self.Yu, k) - r * self.Au


def _both(monkeypatch, call):
    """``call()`` with the fast soft prediction and ratio, then with the plain ones."""
    fast = call()
    with monkeypatch.context() as m:
        m.setattr(predict_module, "soft_values", plain_soft_values)
        m.setattr(ratio_module, "Shifted", DenseShifted)
        plain = call()
    return fast, plain


@pytest.mark.parametrize("seed, n_judges, block", [(0, 1, None), (1, 2, None), (2, 2, 64), (3, 3, 200), (4, 1, 7)])
def test_fast_soft_values_equal_the_plain_ones(monkeypatch, seed, n_judges, block):
    if block is not None:
        monkeypatch.setattr(soft, "BLOCK", block)  # many small blocks, and queries wider than a block
    human, sets, runs = world(seed, n_judges=n_judges)
    human_q = Qrels.from_dict(human)
    sets = judge_sets(sets)
    labeled = tuple(human_q.topics)
    unlabeled = tuple(q for js in sets for q in js.grades.topics if q not in set(labeled))
    unlabeled = tuple(dict.fromkeys(unlabeled))
    args = (runs, human_q, sets, METRICS, labeled, unlabeled, 1, 5, seed)
    values, ans, desc = soft.soft_values(*args)
    v0, a0, d0 = plain_soft_values(*args)
    assert values.shape == v0.shape and np.abs(values - v0).max() <= TOL
    assert np.abs(ans - a0).max() <= TOL
    assert desc == d0
    assert desc["retrieved_pairs_no_judge_graded"] > 0  # the worlds do have retrieved pairs no judge graded
    assert 0 < values.std()  # not a degenerate world


@pytest.mark.parametrize("seed, no_answer", [(5, "exclude"), (6, "zero")])
def test_estimate_intervals_equal_the_plain_ones(monkeypatch, seed, no_answer):
    human, sets, runs = world(seed, n_judges=2)
    metrics = ["recall@5", "precision@10", "ndcg@10", "mrr"]

    def call():
        report = estimate(runs[0], human, list(sets), metrics, no_answer=no_answer, seed=seed)
        return {m: [e.ppi, *e.ppi_ci95, e.human_only, *e.human_ci95, e.lam, *(e.half_widths or ())]
                for m, e in report.estimates.items()}

    fast, plain = _both(monkeypatch, call)
    for m in metrics:
        assert np.abs(np.array(fast[m]) - np.array(plain[m])).max() <= TOL, m


def test_rank_systems_intervals_equal_the_plain_ones(monkeypatch):
    human, sets, runs = world(7, n_queries=80, n_labeled=20, n_runs=4, n_judges=2)

    def call():
        return rank_systems(runs, human, list(sets), "ndcg@10", n_boot=50, n_perm=200, seed=3).to_dict()

    fast, plain = _both(monkeypatch, call)
    for source in ("human", "judge", "ppi"):
        assert fast["values"][source] == pytest.approx(plain["values"][source], abs=TOL)
    assert fast["rankings"] == plain["rankings"] and fast["flipped_pairs"] == plain["flipped_pairs"]
    for a, b in zip(fast["pairs"], plain["pairs"]):
        assert a["ppi"]["ci95"] == pytest.approx(b["ppi"]["ci95"], abs=TOL)
        assert a["ppi"]["p_value"] == pytest.approx(b["ppi"]["p_value"], abs=TOL)
    assert fast["own_estimates"] == pytest.approx(plain["own_estimates"], abs=TOL)


def _ratio_inputs(seed: int, n: int, N: int):
    rng = np.random.default_rng(seed)
    A = (rng.random(n) < 0.7).astype(float)
    A[:2] = 1.0
    Y = rng.random((n, 6)) * A[:, None]
    Y[:, 1] = np.round(Y[:, 1]) * A  # a 0/1 column
    Y[:, 2] = A  # a constant column over the answerable queries
    Ahat, Ahat_u = rng.random(n), rng.random(N)
    Yhat, Yu = rng.random((n, 6)) * Ahat[:, None], rng.random((N, 6)) * Ahat_u[:, None]
    Yu[:, 3] = 0.25  # a constant judge column
    Yu[:, 4] = Ahat_u  # Z_r = (1 - r) Ahat_u: cancels to 0 at r = 1
    Yhat[:, 5] = Yu[:, 5] = 0.0  # the judge says 0 throughout
    return Y, A, Yhat, Ahat, Yu, Ahat_u


@pytest.mark.parametrize("seed, n, N, constant_a", [(0, 12, 300, False), (1, 5, 40, True), (2, 20, 1, False),
                                                    (3, 8, 2, False), (4, 30, 3, True), (5, 10, 2000, False)])
@pytest.mark.parametrize("lam", [None, 0.0, 0.6])
def test_ratio_from_sums_equals_the_array(monkeypatch, seed, n, N, constant_a, lam):
    from relgrade.hybrid._ratio import ratio_means

    Y, A, Yhat, Ahat, Yu, Ahat_u = _ratio_inputs(seed, n, N)
    if constant_a:
        Ahat_u = np.ones(N)
    fast = ratio_means(Y, A, Yhat, Ahat, Yu, Ahat_u, lam=lam)
    monkeypatch.setattr(ratio_module, "Shifted", DenseShifted)
    plain = ratio_means(Y, A, Yhat, Ahat, Yu, Ahat_u, lam=lam)
    for name in ("value", "lo", "hi", "lam", "half"):
        assert np.abs(getattr(fast, name) - getattr(plain, name)).max() <= TOL, name
    assert fast.notes == plain.notes
    assert np.ptp(fast.hi - fast.lo) > 0  # columns of different widths: not a degenerate case


@pytest.mark.parametrize("seed, n_judges", [(8, 1), (9, 2)])
def test_estimate_on_details_read_as_columns_equals_the_plain_reading(tmp_path, monkeypatch, seed, n_judges):
    """Issue 39.2: the judges' details files read as columns (``relgrade.io._details``, the Label rows never built)
    give the intervals of the line-by-line reading, and the same prediction description."""
    import json

    import relgrade.io._details as details_module
    from relgrade.hybrid import read_judge_labels
    from relgrade.hybrid._inputs import JudgeLabels

    human, sets, runs = world(seed, n_judges=n_judges)
    paths = []
    for k, js in enumerate(sets):
        path = tmp_path / f"j{k}.details.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for q, docs in js.raw.items():
                for d, g in docs.items():
                    e = js.expected.get(q, {}).get(d)
                    fh.write(json.dumps({"query_id": q, "doc_id": d, "grade": g, "model": f"m{k}",
                                         **({"expected_grade": e} if e is not None else {})}) + "\n")
                fh.write(json.dumps({"query_id": q, "doc_id": "never", "grade": None, "model": f"m{k}"}) + "\n")
        paths.append(path)
    metrics = ["recall@5", "precision@10", "ndcg@10", "mrr"]

    def call():
        jins = [read_judge_labels(p) for p in paths]
        report = estimate(runs[0], human, jins, metrics, seed=seed)
        return jins, report

    jins, fast = call()
    assert all(isinstance(j.labels, JudgeLabels) for j in jins)
    monkeypatch.setattr(details_module, "read_details_columns", lambda *a, **k: None)
    jins, plain = call()
    assert not any(isinstance(j.labels, JudgeLabels) for j in jins)
    assert fast.settings["prediction"] == plain.settings["prediction"]
    for m in metrics:
        a, b = fast.estimates[m], plain.estimates[m]
        got = np.array([a.ppi, *a.ppi_ci95, a.human_only, *a.human_ci95, a.lam])
        want = np.array([b.ppi, *b.ppi_ci95, b.human_only, *b.human_ci95, b.lam])
        assert np.abs(got - want).max() <= TOL, m


def test_distinct_rows_give_every_row_back():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(500, 4)), 1)
    X[::7] = X[0]
    X[3, 1] = -0.0 if X[0, 1] == 0 else X[3, 1]
    rows, inverse = soft.distinct_rows(X)
    assert np.array_equal(rows[inverse], X) and len(rows) < len(X)
    assert len(np.unique(rows.view(np.dtype((np.void, 32))))) == len(rows)
    for empty in (np.zeros((0, 3)), np.zeros((4, 0))):
        rows, inverse = soft.distinct_rows(empty)
        assert rows[inverse].shape == empty.shape
