"""Expected metric values (relgrade.hybrid._expect) against brute-force enumeration of every grade assignment.

The oracle is the metrics core itself: each assignment of grades to the pool's documents is one topic of one
Qrels, scored by ``compute(join(...))`` in one call, and weighted by its probability under independent
documents. Exact forms must agree to 1e-12; nDCG's approximation has its error measured and bounded.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from relgrade.hybrid._expect import capped_leave_one_out, expected_answerable, expected_values, leave_one_out
from relgrade.io import Qrels, Run
from relgrade.metrics import compute, join, parse_metrics

EXACT = parse_metrics(["recall@1", "recall@3", "recall@10", "precision@2", "precision@5", "mrr", "mrr@2",
                       "frac_recall@2", "frac_recall@10"])
NDCG = parse_metrics(["ndcg@1", "ndcg@3", "ndcg"])


def brute_force(P: np.ndarray, order, classes, metrics, threshold: int):
    """(expected values, P(answerable)) over all len(classes)**n assignments, by the metrics core."""
    n = len(P)
    docs = [f"d{i}" for i in range(n)]
    assignments = list(itertools.product(range(len(classes)), repeat=n))
    topics = [f"a{i}" for i in range(len(assignments))]
    qrels = Qrels({t: {docs[i]: int(classes[c]) for i, c in enumerate(a)} for t, a in zip(topics, assignments)})
    ranking = {docs[i]: float(len(order) - rank) for rank, i in enumerate(order)}
    run = Run.from_dict({t: ranking for t in topics})
    values = compute(join(qrels, run, rel_threshold=threshold, topics=topics), metrics, rel_threshold=threshold)
    weight = np.array([np.prod([P[i, c] for i, c in enumerate(a)]) for a in assignments])
    relevant = np.array([any(classes[c] >= threshold for c in a) for a in assignments])
    return np.array([weight @ values[m.name] for m in metrics]), float(weight @ relevant)


def _case(rng, n_max=5, classes=(0, 1, 2, 3), alpha=0.7):
    n = int(rng.integers(1, n_max + 1))
    P = rng.dirichlet(np.full(len(classes), alpha), size=n)
    if n >= 3 and rng.random() < 0.4:  # equal distributions (the base rate of unjudged documents)
        P[1:3] = P[0]
    order = rng.permutation(n)[: int(rng.integers(1, n + 1))]  # the run may leave pool documents unretrieved
    return P, order


@pytest.mark.parametrize("classes", [(0, 1, 2, 3), (0, 1)])
def test_exact_forms_equal_brute_force(classes):
    rng = np.random.default_rng(len(classes))
    cls = np.array(classes, dtype=float)
    for _ in range(25):
        P, order = _case(rng, classes=classes)
        threshold = int(rng.integers(1, len(classes)))
        want, answerable = brute_force(P, order, classes, EXACT, threshold)
        got = expected_values(P[None], order, np.maximum(cls, 0), cls >= threshold, EXACT)[0]
        assert got == pytest.approx(want, abs=1e-12)
        assert expected_answerable(P[None], cls >= threshold)[0] == pytest.approx(answerable, abs=1e-12)


def test_several_models_are_computed_side_by_side():
    rng = np.random.default_rng(3)
    cls = np.arange(4.0)
    P = rng.dirichlet(np.ones(4), size=(3, 4))  # three models' distributions of the same four documents
    order = np.array([2, 0, 3])
    both = expected_values(P, order, cls, cls >= 1, EXACT + NDCG)
    for s in range(3):
        assert both[s] == pytest.approx(expected_values(P[s:s + 1], order, cls, cls >= 1, EXACT + NDCG)[0])


def test_leave_one_out_expectations_are_exact():
    """E[f(C_-j)] for a Poisson-binomial count, every j, against enumeration, with equal columns grouped; and the
    distribution of the count capped at 3 (what nDCG@k needs, by prefix and suffix sums)."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 5, 20):
        q = rng.random((2, n))
        q[:, : n // 2] = q[:, :1]  # a group of equal documents
        fs = rng.normal(size=(3, n))
        got = leave_one_out(q, fs)
        capped = capped_leave_one_out(q, 3)
        for s in range(2):
            for j in range(n):
                others = np.delete(q[s], j)
                pmf = np.array([1.0])
                for p in others:
                    pmf = np.convolve(pmf, [1 - p, p])
                want = fs[:, : len(pmf)] @ pmf
                assert got[s, j] == pytest.approx(want, abs=1e-12)
                top = np.r_[pmf[:3], pmf[3:].sum()] if len(pmf) > 3 else np.r_[pmf, np.zeros(4 - len(pmf))]
                assert capped[s, j] == pytest.approx(top, abs=1e-12)  # the count capped at 3


def test_ndcg_approximation_error_is_small_on_small_pools():
    """E[DCG/IDCG] with E[1/IDCG | g_i] by a second-order expansion: measured against brute force."""
    rng = np.random.default_rng(5)
    cls = np.arange(4.0)
    errors = []
    for alpha in (0.5, 1.0, 3.0):  # very uncertain to moderately uncertain documents
        for _ in range(20):
            P, order = _case(rng, n_max=6, alpha=alpha)
            want, _ = brute_force(P, order, (0, 1, 2, 3), NDCG, 1)
            errors.append(np.abs(expected_values(P[None], order, cls, cls >= 1, NDCG)[0] - want))
    errors = np.array(errors)
    print(f"nDCG approximation on {len(errors)} small pools: max error {errors.max():.4f}, mean {errors.mean():.4f}")
    assert errors.max() < 0.06 and errors.mean() < 0.01


def test_ndcg_is_exact_when_one_document_is_uncertain_and_retrieved_alone():
    # the case plugging expected gains into both DCGs gets wrong: p = 0.5 of grade 3, else 0 -> E[nDCG] = 0.5
    P = np.array([[0.5, 0.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
    cls = np.arange(4.0)
    got = expected_values(P[None], np.array([0, 1]), cls, cls >= 1, NDCG)[0]
    assert got == pytest.approx([0.5, 0.5, 0.5], abs=1e-12)


def test_empty_pool_and_empty_ranking_score_zero():
    cls = np.arange(4.0)
    assert (expected_values(np.zeros((1, 0, 4)), np.zeros(0, int), cls, cls >= 1, EXACT + NDCG) == 0).all()
    P = np.full((1, 2, 4), 0.25)
    assert (expected_values(P, np.zeros(0, int), cls, cls >= 1, EXACT + NDCG) == 0).all()
    assert expected_answerable(P, cls >= 1)[0] == pytest.approx(1 - 0.25 ** 2)
