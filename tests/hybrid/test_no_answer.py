"""One --no-answer rule for estimate and rank-systems, as in evaluate; leaks in estimate reports; shared queries."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest

import relgrade
from relgrade._errors import InputError
from relgrade.cli import main
from relgrade.hybrid import estimate, rank_systems
from relgrade.hybrid._ratio import ratio_means
from relgrade.io import Run
from relgrade.metrics import DEFAULT_NO_ANSWER, evaluate
from relgrade.stats import mean_intervals

METRICS = ["ndcg@5", "recall@3", "mrr"]
EMPTY = ("q1", "q3", "q7", "q15", "q20", "q33")  # queries without any relevant document


@pytest.fixture()
def sparse(world):
    """The world with six no-answer queries (three of them human-labeled); the judge agrees on four of six."""
    truth, human, judge, texts, runs = world
    truth = {q: ({d: 0 for d in docs} if q in EMPTY else docs) for q, docs in truth.items()}
    judge = {q: ({d: 0 for d in docs} if q in EMPTY[:4] else docs) for q, docs in judge.items()}
    human = {q: truth[q] for q in human}
    return truth, human, judge, texts, runs


def test_one_default_everywhere(world):
    truth, human, judge, _, runs = world
    run = Run.from_dict(runs["a"])
    ev, est = evaluate(truth, run), estimate(run, human, judge)
    assert DEFAULT_NO_ANSWER == "exclude"
    assert ev.settings["no_answer"] == est.settings["no_answer"] == DEFAULT_NO_ANSWER
    # one parser, one default list: the same metrics and cutoffs in evaluate and estimate
    assert ev.settings["metrics"] == est.settings["metrics"] == [str(m) for m in relgrade.parse_metrics(None)]
    assert evaluate(truth, run, ["P_5", "ndcg_cut_10"]).settings["metrics"] == \
        estimate(run, human, judge, ["P_5", "ndcg_cut_10"]).settings["metrics"] == ["precision@5", "ndcg@10"]


def test_exclude_with_every_query_labeled_is_the_evaluate_mean(sparse):
    truth, _, judge, _, runs = sparse
    run = Run.from_dict(runs["b"])
    rep = estimate(run, truth, judge, METRICS, no_answer="exclude")  # no unlabeled query: the classical ratio
    ref = evaluate(truth, run, METRICS, no_answer="exclude", ci=False)
    zero = evaluate(truth, run, METRICS, no_answer="zero", ci=False)
    for m in METRICS:
        e = rep.estimates[m]
        assert e.ppi == pytest.approx(ref.aggregate[m].value, abs=1e-12)
        assert e.human_only == pytest.approx(ref.aggregate[m].value)
        assert e.ppi != pytest.approx(zero.aggregate[m].value)  # the rules give different numbers here
        assert e.ppi_ci95[0] < e.ppi < e.ppi_ci95[1]


def test_zero_is_plain_ppi_and_exclude_differs(sparse):
    truth, human, judge, _, runs = sparse
    run = Run.from_dict(runs["b"])
    zero = estimate(run, human, judge, METRICS, no_answer="zero", prediction="hard")
    excl = estimate(run, human, judge, METRICS, prediction="hard")
    labeled, population = list(human), list(judge)
    Y = np.array([[evaluate(human, run, [m], no_answer="zero", ci=False).per_query[q][m] for m in METRICS] for q in labeled])
    J = np.array([[evaluate(judge, run, [m], no_answer="zero", ci=False).per_query[q][m] for m in METRICS]
                  for q in population])
    n = len(labeled)
    for j, m in enumerate(METRICS):
        # ppi-python's PPI++ point at the lam the report used
        assert zero.estimates[m].ppi == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(
            Y[:, j], J[:n, j], J[n:, j], lam=zero.estimates[m].lam))[0]))
        answered = [q not in EMPTY for q in labeled]
        assert excl.estimates[m].human_only == pytest.approx(Y[answered, j].mean())
        assert excl.estimates[m].human_only > zero.estimates[m].human_only
    assert excl.settings["no_answer"] == "exclude" and zero.settings["no_answer"] == "zero"
    assert any("no relevant document" in note for note in excl.notes)


def test_ratio_interval_covers_at_30_labeled_queries():
    """Simulation: 0/1 metric, 70% answerable queries, a judge wrong on 20% of values and 10% of answerability."""
    rng = np.random.default_rng(7)
    truth, cover, reps, n = 0.6, 0, 150, 30
    for _ in range(reps):
        A = (rng.random(230) < 0.7).astype(float)
        Y = A * (rng.random(230) < truth)
        Yh = np.where(rng.random(230) < 0.2, 1 - Y, Y) * A
        Ah = np.where(rng.random(230) < 0.1, 1 - A, A)
        res = ratio_means(Y[:n, None], A[:n], Yh[:n, None], Ah[:n], Yh[n:, None], Ah[n:])
        assert res.lo[0] <= res.value[0] <= res.hi[0] and res.hi[0] - res.lo[0] > 0
        cover += res.lo[0] <= truth <= res.hi[0]
    assert cover / reps >= 0.9


def test_too_few_answerable_labeled_queries(sparse):
    truth, human, judge, _, runs = sparse
    two = {q: human[q] for q in ("q1", "q3", "q0")}  # one answerable of three
    with pytest.raises(InputError, match="--no-answer zero"):
        estimate(Run.from_dict(runs["a"]), two, judge, METRICS)
    assert estimate(Run.from_dict(runs["a"]), two, judge, METRICS, no_answer="zero").estimates


def test_rank_systems_follows_the_rule(sparse):
    truth, human, judge, _, runs_raw = sparse
    runs = {n: Run.from_dict(r, name=n) for n, r in runs_raw.items()}
    excl = rank_systems(runs, human, judge, "ndcg@5", n_boot=50, n_perm=500)
    zero = rank_systems(runs, human, judge, "ndcg@5", no_answer="zero", n_boot=50, n_perm=500)
    for name, run in runs.items():
        ev = evaluate(human, run, ["ndcg@5"], no_answer="exclude", ci=False)
        assert excl.values["human"][name] == pytest.approx(ev.aggregate["ndcg@5"].value)
        assert excl.values["human"][name] > zero.values["human"][name]
    # a no-answer query scores 0 for every system: the paired tests do not depend on the rule
    pe, pz = excl.pairs[0].by_source, zero.pairs[0].by_source
    assert pe["ppi"].p_value == pytest.approx(pz["ppi"].p_value)
    assert pe["ppi"].ci95[0] <= pe["ppi"].diff <= pe["ppi"].ci95[1]
    assert excl.rankings["human"] == zero.rankings["human"]
    assert excl.to_dict()["settings"]["no_answer"] == "exclude"


def test_estimate_reports_carry_leaks_and_gate_keeps_the_guard(files, tmp_path, capsys):
    top = json.loads(files["run_b"].read_text().splitlines()[0])["results"][1]["doc_id"]  # rank 2 of q0 in run b
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "q0", "query": "query q0", "relevant_doc_ids": ["q0d0"],
                                  "forbidden_doc_ids": [top]}) + "\n")
    outs = {}
    for name in ("a", "b"):
        outs[name] = tmp_path / f"{name}.json"
        assert main(["estimate", "--run", str(files[f"run_{name}"]), "--human", str(files["human"]), "--judge",
                     str(files["judge"]), "--metric", "ndcg@5", "--forbidden", str(golden), "--json", str(outs[name])]) == 0
    b = json.loads(outs["b"].read_text())
    assert b["leaks"] == [{"query_id": "q0", "query": "query q0", "doc_id": top, "rank": 2}]
    assert isinstance(json.loads(outs["a"].read_text())["leaks"], list)
    capsys.readouterr()
    # b against itself: no drop, but the leak fails the gate, also with --beyond-ci
    assert main(["gate", "--baseline", str(outs["b"]), "--current", str(outs["b"]), "--metric", "ndcg@5",
                 "--beyond-ci"]) == 1
    assert "FAIL: 1 leak (forbidden document in the top k)" in capsys.readouterr().out
    # without --forbidden the report carries no leak check: the gate fails rather than skip the guard
    bare = tmp_path / "bare.json"
    assert main(["estimate", "--run", str(files["run_b"]), "--human", str(files["human"]), "--judge",
                 str(files["judge"]), "--metric", "ndcg@5", "--json", str(bare)]) == 0
    assert json.loads(bare.read_text())["leaks"] is None
    assert main(["gate", "--baseline", str(bare), "--current", str(bare), "--metric", "ndcg@5", "--beyond-ci"]) == 1
    assert "no leak information" in capsys.readouterr().out


def test_gate_refuses_estimate_reports_of_different_rules(files, tmp_path, capsys):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "q0", "query": "q", "relevant_doc_ids": ["q0d0"]}) + "\n")
    outs = []
    for rule in ("exclude", "zero"):
        out = tmp_path / f"{rule}.json"
        assert main(["estimate", "--run", str(files["run_a"]), "--human", str(files["human"]), "--judge",
                     str(files["judge"]), "--metric", "ndcg@5", "--no-answer", rule, "--forbidden", str(golden),
                     "--json", str(out)]) == 0
        outs.append(out)
    assert main(["gate", "--baseline", str(outs[0]), "--current", str(outs[0]), "--metric", "ndcg@5"]) == 0
    capsys.readouterr()
    assert main(["gate", "--baseline", str(outs[0]), "--current", str(outs[1]), "--metric", "ndcg@5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no_answer 'exclude' vs 'zero'" in err


def test_runs_sharing_no_query_with_the_labels_exit_2(files, tmp_path, capsys):
    stranger = tmp_path / "stranger.txt"
    stranger.write_text("x1 Q0 q0d0 1 2.0 t\nx2 Q0 q1d0 1 2.0 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 q0d0 1\nq1 0 q1d1 1\n")
    commands = [
        ["estimate", "--run", str(stranger), "--human", str(files["human"]), "--judge", str(files["judge"])],
        ["rank-systems", "--run", str(files["run_a"]), "--run", str(stranger), "--human", str(files["human"]),
         "--judge", str(files["judge"])],
        ["compare", "--run-a", str(stranger), "--run-b", str(stranger), "--qrels", str(qrels)],
        ["evaluate", "--run", str(stranger), "--qrels", str(qrels)],
    ]
    for argv in commands:
        assert main(argv) == 2, argv[0]
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "stranger.txt has no result for any of the" in err, err
        assert "'x1'" in err and "same query ids" in err


@pytest.mark.parametrize("value", ["0", "-5"])
def test_n_boot_below_one_exits_2_everywhere(files, tmp_path, capsys, value):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 q0d0 1\nq1 0 q1d1 1\n")
    for argv in (["evaluate", "--run", str(files["run_a"]), "--qrels", str(qrels)],
                 ["compare", "--run-a", str(files["run_a"]), "--run-b", str(files["run_b"]), "--qrels", str(qrels)],
                 ["rank-systems", "--run", str(files["run_a"]), "--run", str(files["run_b"]), "--human",
                  str(files["human"]), "--judge", str(files["judge"])],
                 ["calibrate", "--judge", str(files["judge"]), "--human", str(files["human"])]):
        assert main([*argv, "--n-boot", value]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"relgrade: error: --n-boot must be a whole number >= 1 (e.g. 1000), got {value}"


def test_estimate_table_columns_are_separated(world):
    import re

    truth, human, judge, _, runs = world
    table = estimate(Run.from_dict(runs["b"]), human, judge, METRICS).table().splitlines()
    assert "(--no-answer exclude)" in table[0]
    head, rows = table[1], table[2:2 + len(METRICS)]
    for row in rows:
        cells = re.split(r"\s{2,}", row.strip())
        assert len(cells) == 8 and cells[2].startswith("[") and cells[4].startswith("[")
        assert row.index("[") == head.index("95% CI")


def test_crossfit_estimate_follows_the_rule(sparse):
    """With cross-fitted judge grades, answerability on the judge side comes from the fold mappings too."""
    from relgrade.calibration import crossfit_mapping

    truth, human, judge, _, runs = sparse
    run = Run.from_dict(runs["b"])
    # a lenient judge: every grade one higher, so the no-answer queries look answerable to it
    lenient = {q: {d: min(3, g + 1) for d, g in docs.items()} for q, docs in judge.items()}
    cf = crossfit_mapping(lenient, human, n_splits=3, n_boot=50)
    excl = estimate(run, human, lenient, ["ndcg@5"], crossfit=cf, prediction="hard")
    zero = estimate(run, human, lenient, ["ndcg@5"], crossfit=cf, no_answer="zero", prediction="hard")
    e = excl.estimates["ndcg@5"]
    assert e.ppi_ci95[0] <= e.ppi <= e.ppi_ci95[1]
    assert e.ppi > zero.estimates["ndcg@5"].ppi  # three labeled no-answer queries leave the mean
    assert excl.settings["crossfit"] is True
    assert e.human_only == pytest.approx(np.mean([v["ndcg@5"] for q, v in excl.per_query["human"].items()
                                                  if q not in EMPTY]))


def test_a_lucky_sample_never_gives_a_zero_width_ratio_interval():
    """Every labeled answerable query hits (recall 1), two labeled queries have no answer: not a point."""
    A = np.array([1.0] * 28 + [0.0, 0.0])
    Y = A[:, None].copy()
    Yh, Ah = Y.copy(), A.copy()
    Yu, Au = np.ones((26, 1)), np.ones(26)
    res = ratio_means(Y, A, Yh, Ah, Yu, Au)
    assert res.value[0] == 1.0 and res.hi[0] == 1.0  # exactly: value <= hi
    # recall is 0/1 here: the plus-two pseudo-queries keep the width, about that of the human-only plus-two
    human = ratio_means(Y, A, Yh, Ah, Yu, Au, lam=0.0)
    plain = mean_intervals(Y[A > 0])
    assert 0.85 < res.lo[0] < 0.95 and res.hi[0] - res.lo[0] > 0.05
    assert human.lo[0] == pytest.approx(plain.lo[0], abs=0.03)  # Fieller's inversion, close to the 28-query interval


def test_ratio_interval_at_5_labeled_queries_is_informative():
    """issue 29: at 5 labeled queries the inversion returned [0, 1] in half of the draws for mrr (human-only: never),
    because a variance floor at -1 kept r = 0 inside; the floor is now the metric's own at each r."""
    rng = np.random.default_rng(4)
    counts, draws = np.zeros(4), 0
    for _ in range(300):
        A = (rng.random(40) < 0.8).astype(float)
        Y = A * np.where(rng.random(40) < 0.7, 1.0, 1 / rng.integers(2, 6, 40))
        Yh = np.clip(Y + rng.normal(0, 0.2, 40), 0, 1) * A
        if A[:5].sum() < 2:
            continue
        args = (Y[:5, None], A[:5], Yh[:5, None], A[:5], Yh[5:, None], A[5:])
        ppi, human = ratio_means(*args), ratio_means(*args, lam=0.0)
        counts += [ppi.lo[0] > 0, human.lo[0] > 0, ppi.hi[0] - ppi.lo[0] == 1, human.hi[0] - human.lo[0] == 1]
        draws += 1
    ppi_rejects_0, human_rejects_0, ppi_whole, human_whole = counts / draws
    assert ppi_rejects_0 > human_rejects_0 and ppi_whole < human_whole and ppi_whole < 0.25
    # the mechanism itself: five answerable queries at MRR 1 and a judge that agrees rule r = 0 out
    ones = np.ones((5, 1))
    lucky = ratio_means(ones, np.ones(5), ones, np.ones(5), np.r_[np.ones(30), np.zeros(5)][:, None], np.ones(35))
    assert lucky.lo[0] > 0.3 and lucky.hi[0] == 1.0


def test_a_ppi_value_outside_the_metric_range_is_reported_inside_it_with_a_note():
    # precision@2: the judge finds one more relevant document than the humans on every labeled query, and one on
    # half of the 20 unlabeled ones; PPI++ = mean(Y) + lam (0.25 - mean(Yhat)) is below 0 for lam > 1/2, which
    # a metric cannot be (and the gate would refuse as malformed), while its interval still reaches [0, 1]
    run = Run.from_dict({f"q{i}": {"d1": 2.0, "d2": 1.0} for i in range(30)})
    human = {f"q{i}": {"d1": 1 if i < 5 else 0, "d2": 0} for i in range(10)}
    judge = {f"q{i}": ({"d1": 1, "d2": 1 if i < 5 else 0} if i < 10 else {"d1": 1 if i < 20 else 0, "d2": 0})
             for i in range(30)}
    e = estimate(run, human, judge, ["precision@2"], no_answer="zero", prediction="hard").estimates["precision@2"]
    raw = float(np.ravel(ppi_py.ppi_mean_pointestimate(np.r_[[0.5] * 5, [0.0] * 5], np.r_[[1.0] * 5, [0.5] * 5],
                                                       np.r_[[0.5] * 10, [0.0] * 10], lam=e.lam))[0])
    assert raw < 0 and e.lam > 1 / 2
    assert e.ppi == 0.0 and "outside [0, 1]" in e.note
    assert e.ppi_ci95[0] == 0.0 < e.ppi_ci95[1]


def test_beyond_ci_refuses_an_interval_that_is_not_95_percent(files, tmp_path, capsys):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "q0", "query": "q", "relevant_doc_ids": ["q0d0"]}) + "\n")
    outs = {}
    for alpha in ("0.05", "0.1"):
        outs[alpha] = tmp_path / f"a{alpha}.json"
        assert main(["estimate", "--run", str(files["run_a"]), "--human", str(files["human"]), "--judge",
                     str(files["judge"]), "--metric", "ndcg@5", "--alpha", alpha, "--forbidden", str(golden),
                     "--json", str(outs[alpha])]) == 0
    capsys.readouterr()
    assert main(["gate", "--baseline", str(outs["0.05"]), "--current", str(outs["0.1"]), "--metric", "ndcg@5",
                 "--beyond-ci"]) == 2
    assert "reads the 95% interval, but the report's intervals are 90% (--alpha 0.1)" in capsys.readouterr().err
    # the point values do not depend on alpha: the plain gate compares them
    assert main(["gate", "--baseline", str(outs["0.05"]), "--current", str(outs["0.1"]), "--metric", "ndcg@5"]) == 0
