"""Human labels of an active sample (relgrade sample --design active) through estimate, compare and rank-systems:
the design is read from the labels, the inverse-probability-weighted PPI++ is used, and what cannot be one
active sample is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from relgrade._errors import InputError
from relgrade.calibration import sample_active
from relgrade.hybrid import estimate, rank_systems, read_design
from relgrade.hybrid._ab import compare_runs
from relgrade.io import Label, Run
from relgrade.stats._weighted import ACTIVE_INTERVAL, design_probabilities


def _active(world, n=8, seed=0):
    truth, _, judge, _, _ = world
    pool = {q: tuple(sorted(docs)) for q, docs in judge.items()}
    u = {q: float(i % 5) for i, q in enumerate(sorted(pool))}
    s = sample_active(judge, pool, u, n=n, seed=seed)
    labels = [Label(it.query_id, it.doc_id, truth[it.query_id][it.doc_id], "human", design="active",
                    weight=it.weight, draws=it.draws, pool=it.pool) for it in s.items]
    human = {}
    for lab in labels:
        human.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
    q = dict(zip(sorted(pool), design_probabilities([u[x] for x in sorted(pool)])))
    return labels, human, q


def test_the_design_is_read_back_from_the_labels(world):
    labels, _, q = _active(world)
    design = read_design(labels, "h.csv")
    assert design.pool == 40 and design.n == 8
    for query, p in design.q.items():
        assert p == pytest.approx(q[query], rel=1e-12)
    assert read_design([Label("a", "b", 1, "human", design="queries", weight=3.0)]) is None


@pytest.mark.parametrize("bad, message", [
    (lambda labs: labs + [Label("zz", "d", 1, "human")], "lack design 'active'"),
    (lambda labs: [labs[0].__class__(**{**labs[0].__dict__, "weight": labs[0].weight * 2})] + labs[1:],
     "disagree on weight"),
    (lambda labs: [Label(x.query_id, x.doc_id, x.grade, "human", design="active", weight=x.weight / 40, draws=x.draws,
                         pool=x.pool) for x in labs], "sum to"),
    (lambda labs: [Label(x.query_id, x.doc_id, x.grade, "human", design="active", weight=x.weight) for x in labs],
     "without its weight"),
])
def test_what_cannot_be_one_active_sample_is_refused(world, bad, message):
    labels, _, _ = _active(world)
    if "disagree" in message:  # the first query's other rows keep their weight
        assert sum(lab.query_id == labels[0].query_id for lab in labels) > 1
    with pytest.raises(InputError, match=message):
        read_design(bad(labels), "h.csv")


def test_estimate_is_the_weighted_ppi_by_hand(world):
    _, _, judge, _, runs = world
    labels, human, q = _active(world)
    design = read_design(labels)
    rep = estimate(Run.from_dict(runs["a"]), human, judge, ["ndcg@5", "p@5"], no_answer="zero", prediction="hard",
                   design=design)
    assert rep.settings["design"] == {"name": "active", "draws": 8, "pool": 40}
    J, H = rep.per_query["judge"], rep.per_query["human"]
    for name, e in rep.estimates.items():
        assert e.interval == ACTIVE_INTERVAL and e.n_queries == 40
        pool_mean = np.mean([J[x][name] for x in J])
        draws = [x for x in design.q for _ in range(design.draws[x])]
        w = np.array([1 / (40 * q[x]) for x in draws])
        r = np.array([H[x][name] - e.lam * J[x][name] for x in draws])
        value = e.lam * pool_mean + (w * r).sum() / w.sum()
        assert e.ppi == pytest.approx(min(1.0, max(0.0, value)), abs=1e-12)
        assert e.ppi_ci95[0] <= e.ppi <= e.ppi_ci95[1]
        hajek = (w * np.array([H[x][name] for x in draws])).sum() / w.sum()
        assert e.human_only == pytest.approx(hajek, abs=1e-12)


def test_a_constant_sample_gets_the_floor_not_a_zero_width(world):
    _, _, judge, _, runs = world
    labels, human, _ = _active(world)
    e = estimate(Run.from_dict(runs["a"]), human, judge, ["ndcg@5"], no_answer="zero", prediction="hard",
                 design=read_design(labels)).estimates["ndcg@5"]
    assert e.human_ci95[1] - e.human_ci95[0] > 0.05  # every labeled query at nDCG 1: the floor, not [1, 1]


def test_a_pool_other_than_the_drawn_one_is_refused(world):
    _, _, judge, _, runs = world
    labels, human, _ = _active(world)
    smaller = {x: docs for x, docs in judge.items() if x in human or int(x[1:]) < 30}
    with pytest.raises(InputError, match="pool of 40 judged queries"):
        estimate(Run.from_dict(runs["a"]), human, smaller, ["ndcg@5"], design=read_design(labels))


def test_compare_and_rank_read_the_same_design(world):
    _, _, judge, _, runs = world
    labels, human, _ = _active(world, n=10, seed=3)
    design = read_design(labels)
    mixed = {x: {d: s + 0.3 * runs["a"][x][d] for d, s in docs.items()} for x, docs in runs["b"].items()}
    for rule in ("zero", "exclude"):
        rep = compare_runs(Run.from_dict(mixed), Run.from_dict(runs["b"]), human, judge, ["ndcg@5"],
                           no_answer=rule, prediction="hard", design=design)
        d = rep.differences["ndcg@5"]
        assert 0 < d.a < 1 and 0 < d.b < 1
        assert d.diff == pytest.approx(d.b - d.a, abs=1e-12)
        assert d.ci95[0] <= d.diff <= d.ci95[1]
        assert "active" in d.interval
        ranked = rank_systems([Run.from_dict(runs["a"], name="a"), Run.from_dict(runs["b"], name="b")], human, judge,
                              "ndcg@5", no_answer=rule, prediction="hard", design=design, n_boot=50, n_perm=200)
        assert "active" in ranked.settings["interval"]
        pair = ranked.pairs[0].by_source["ppi"]
        assert pair.diff == pytest.approx(ranked.values["ppi"]["b"] - ranked.values["ppi"]["a"], abs=1e-12)
        assert pair.ci95[0] <= pair.diff <= pair.ci95[1]


def test_target_width_plans_draws_of_the_active_design(world):
    _, _, judge, _, runs = world
    labels, human, _ = _active(world, n=10, seed=3)
    design = read_design(labels)
    e = estimate(Run.from_dict(runs["b"]), human, judge, ["ndcg@5"], no_answer="zero", prediction="hard",
                 design=design, target_width=0.1).estimates["ndcg@5"]
    plan = e.plan
    assert plan.design == "active" and plan.to_dict()["design"] == "active"
    half_p, half_h = e.half_widths
    from scipy import stats

    def width(half, m):
        return 2 * half * np.sqrt(10 / m) * stats.t.ppf(0.975, m - 1) / stats.t.ppf(0.975, 9)

    m = plan.human_queries
    assert width(half_h, m) <= 0.1 < width(half_h, m - 1)
    assert plan.ppi_queries <= m
    assert "drawn as these were" in plan.sentence("ndcg@5", 10)
