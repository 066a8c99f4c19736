"""The metrics core against trec_eval itself (pytrec_eval-terrier) on generated data.

The data have ties in scores (broken by doc id descending in trec_eval), unjudged retrieved
documents, judged documents never retrieved, queries missing from the run (scored 0, trec_eval
-c), run queries absent from the qrels, and queries without any relevant document.
"""

from __future__ import annotations

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from relgrade import Qrels, Run, evaluate, read_qrels, read_run
from relgrade.metrics import compute, join, parse_metric

CUTS = (1, 3, 5, 10)
ORACLE = {
    **{f"recall@{k}": f"success_{k}" for k in CUTS},
    **{f"precision@{k}": f"P_{k}" for k in CUTS},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in CUTS},
    **{f"frac_recall@{k}": f"recall_{k}" for k in CUTS},
    "mrr": "recip_rank",
    "ndcg": "ndcg",
}
MEASURES = {"success.1,3,5,10", "P.1,3,5,10", "ndcg_cut.1,3,5,10", "recall.1,3,5,10", "recip_rank", "ndcg"}


def generate(seed: int, n_queries: int = 60, n_docs: int = 40):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{i}" for i in rng.choice(n_docs * 3, size=n_docs, replace=False)]
        judged = rng.choice(docs, size=int(rng.integers(1, 15)), replace=False)
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=len(judged))
        if q % 11 == 0:
            grades[:] = 0  # a query with no relevant document
        qrels[qid] = {d: int(g) for d, g in zip(judged, grades)}
        if q % 13 == 5:
            continue  # in the qrels, missing from the run
        retrieved = rng.choice(docs, size=int(rng.integers(1, 30)), replace=False)
        # integer-valued scores force many ties
        run[qid] = {d: float(rng.integers(0, 6)) for d in retrieved}
    run["q_not_in_qrels"] = {"d1": 1.0, "d2": 0.5}
    return qrels, run


def oracle(qrels, run, threshold):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=threshold)
    return evaluator.evaluate(run)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [1, 2])
def test_per_query_values_equal_trec_eval(seed, threshold):
    qrels, run = generate(seed)
    expected = oracle(qrels, run, threshold)
    report = evaluate(qrels, run, list(ORACLE), rel_threshold=threshold, no_answer="zero", ci=False)
    checked = 0
    for qid, values in expected.items():
        for ours, theirs in ORACLE.items():
            assert report.per_query[qid][ours] == pytest.approx(values[theirs], abs=1e-12), (qid, ours)
            checked += 1
    assert checked > 500
    # queries missing from the run count as zero (trec_eval -c)
    missing = [q for q in qrels if q not in run]
    assert missing and set(missing) == set(report.missing_queries)
    for qid in missing:
        assert all(v == 0.0 for v in report.per_query[qid].values())
    assert report.ignored_queries == ["q_not_in_qrels"]


@pytest.mark.parametrize("threshold", [1, 2])
def test_aggregates_equal_trec_eval_with_c(threshold):
    qrels, run = generate(7)
    expected = oracle(qrels, run, threshold)
    report = evaluate(qrels, run, list(ORACLE), rel_threshold=threshold, no_answer="zero", ci=False)
    for ours, theirs in ORACLE.items():
        mean_c = sum(expected[q][theirs] for q in expected) / len(qrels)  # -c: average over all qrels queries
        assert report.aggregate[ours].value == pytest.approx(mean_c, abs=1e-12), ours


def test_no_answer_queries_are_reported_apart_and_excluded_by_default():
    qrels, run = generate(3)
    expected = oracle(qrels, run, 1)
    report = evaluate(qrels, run, ["recall@5", "ndcg@10"], ci=False)
    no_rel = {q for q, docs in qrels.items() if not any(g >= 1 for g in docs.values())}
    assert no_rel and {row["query_id"] for row in report.no_answer} == no_rel
    assert not no_rel & set(report.per_query)
    kept = [q for q in qrels if q not in no_rel]
    mean = sum(expected.get(q, {}).get("success_5", 0.0) for q in kept) / len(kept)
    assert report.aggregate["recall@5"].value == pytest.approx(mean, abs=1e-12)


def test_tie_breaking_is_by_doc_id_descending_and_rank_column_is_ignored(tmp_path):
    # ties: "d2" > "d10" lexicographically, so d2 ranks first; the file's rank column says otherwise.
    (tmp_path / "qrels.txt").write_text("q 0 d10 1\n")
    (tmp_path / "run.txt").write_text("q Q0 d10 1 5.0 t\nq Q0 d2 2 5.0 t\n")
    report = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), ["mrr", "recall@1"], ci=False)
    theirs = oracle({"q": {"d10": 1}}, {"q": {"d10": 5.0, "d2": 5.0}}, 1)["q"]
    assert report.per_query["q"]["mrr"] == theirs["recip_rank"] == 0.5
    assert report.per_query["q"]["recall@1"] == theirs["success_1"] == 0.0


def test_files_round_trip_gives_the_same_numbers(tmp_path):
    qrels, run = generate(11, n_queries=30)
    lines = [f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()]
    (tmp_path / "qrels.txt").write_text("".join(lines))
    rows = [f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    (tmp_path / "run.txt").write_text("".join(rows))
    from_files = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), list(ORACLE), no_answer="zero", ci=False)
    in_memory = evaluate(qrels, run, list(ORACLE), no_answer="zero", ci=False)
    assert from_files.per_query == in_memory.per_query


def test_mrr_at_k_is_reciprocal_rank_within_the_cutoff():
    qrels, run = generate(5)
    report = evaluate(qrels, run, ["mrr@3", "mrr"], no_answer="zero", ci=False)
    ranked = Run.from_dict(run).ranked()
    for qid in qrels:
        docs = ranked.get(qid, [])
        first = next((i + 1 for i, d in enumerate(docs) if qrels[qid].get(d, 0) >= 1), None)
        expected = 1.0 / first if first and first <= 3 else 0.0
        assert report.per_query[qid]["mrr@3"] == pytest.approx(expected)


def test_compute_on_empty_run_scores_zero():
    qrels = Qrels({"a": {"x": 2}})
    ranked = join(qrels, Run.from_dict({}))
    values = compute(ranked, [parse_metric("ndcg@10"), parse_metric("mrr")])
    assert values["ndcg@10"].tolist() == [0.0] and values["mrr"].tolist() == [0.0]


@pytest.mark.parametrize("n_topics_hint", [50, 2**40])
def test_sort_key_paths_equal_lexsort(n_topics_hint):
    """The single-key sort and its overflow fallback both give trec_eval's order."""
    from relgrade.metrics._core import _trec_order

    rng = np.random.default_rng(0)
    topic = rng.integers(0, 50, 20000)
    score = rng.integers(0, 5, 20000).astype(float)
    code = rng.integers(0, 300, 20000)
    order = _trec_order(topic, score, code, n_topics_hint, 300)
    assert (order == np.lexsort((-code, -score, topic))).all()


def test_float_near_ties_are_ordered_as_trec_eval_does(tmp_path):
    """trec_eval stores scores as C floats: 0.30000000000000004 and 0.3 tie and the doc id decides (issue 15)."""
    theirs = oracle({"q": {"a": 1}}, {"q": {"a": 0.30000000000000004, "b": 0.3}}, 1)["q"]["recip_rank"]
    ours = evaluate({"q": {"a": 1}}, {"q": {"a": 0.30000000000000004, "b": 0.3}}, ["mrr"], ci=False)
    assert theirs == 0.5 and ours.per_query["q"]["mrr"] == 0.5
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.30000000000000004 t\nq Q0 b 2 0.3 t\n")
    from_file = evaluate(Qrels({"q": {"a": 1}}), read_run(tmp_path / "run.txt"), ["mrr"], ci=False)
    assert from_file.per_query["q"]["mrr"] == 0.5
    assert read_run(tmp_path / "run.txt").ranked() == {"q": ["b", "a"]}


@pytest.mark.parametrize("seed", [0, 1])
def test_random_float_near_ties_equal_trec_eval(seed):
    """Scores that differ below float32 precision (and some that differ just above it) on 200 queries."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(200):
        docs = [f"d{i}" for i in range(8)]
        base = float(rng.uniform(0, 1))
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 4, replace=False)}
        ulp32 = float(np.spacing(np.float32(base)))
        run[f"q{q}"] = {d: base + float(rng.choice([0.0, 1e-12, 1e-10, -1e-11, 2 * ulp32, -3 * ulp32])) for d in docs}
    expected = oracle(qrels, run, 1)
    report = evaluate(qrels, run, list(ORACLE), no_answer="zero", ci=False)
    for qid, values in expected.items():
        for ours, theirs in ORACLE.items():
            assert report.per_query[qid][ours] == pytest.approx(values[theirs], abs=1e-12), (qid, ours)


def test_ids_like_na_stay_ids_in_trec_files(tmp_path):
    """``NA``, ``NULL``, ``None``, ``nan``, ``N/A``, ``<NA>`` are ids (pandas must not read them as missing)."""
    ids = ["NA", "NULL", "None", "nan", "N/A", "<NA>"]
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {q} 1\n" for q in ids))
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 other 1 2.0 t\n{q} Q0 {q} 2 1.0 t\n" for q in ids))
    qrels, run = read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt")
    assert sorted(qrels.labels) == sorted(ids) and set(run.doc_id.tolist()) == {"other", *ids}
    report = evaluate(qrels, run, ["mrr"], ci=False)
    expected = oracle({q: {q: 1} for q in ids}, {q: {"other": 2.0, q: 1.0} for q in ids}, 1)
    assert {q: report.per_query[q]["mrr"] for q in ids} == {q: expected[q]["recip_rank"] for q in ids} == \
        {q: 0.5 for q in ids}


# -- a 1M-line case with hostile data (issue 28) -------------------------------------------------------------------
ODD_IDS = ["NA", "NULL", "None", "nan", "N/A", "<NA>", "doc one", "d 2 3", "déjà vu"]


def hostile(n_queries: int, depth: int, seed: int = 0):
    """qrels and a run of about ``n_queries * depth`` lines: scores that tie exactly and ties only in float32,
    NA-like ids and ids with spaces (queries and docs), unjudged retrieved docs, judged docs never retrieved,
    queries of the qrels missing from the run, run queries absent from the qrels, queries with no relevant doc."""
    rng = np.random.default_rng(seed)
    pool = np.array([f"d{i}" for i in range(5 * depth)] + ODD_IDS, dtype=object)
    base = rng.integers(0, 25, size=(n_queries, depth)) / 7.0
    nudge = rng.choice([0.0, 0.0, 1e-12, 1e-9, 3e-8], size=(n_queries, depth))  # below float32's precision
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = ODD_IDS[q] if q < len(ODD_IDS) else f"q{q}"
        docs = pool[rng.choice(len(pool), size=depth + 8, replace=False)].tolist()
        retrieved, never = docs[:depth], docs[depth:]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=20)
        if q % 11 == 0:
            grades[:] = 0
        qrels[qid] = dict(zip(retrieved[:12] + never, grades.tolist()))
        if q % 13 != 5:
            run[qid] = dict(zip(retrieved, (base[q] + nudge[q]).tolist()))
    run["not in the qrels"] = {"d1": 1.0}
    return qrels, run


def _assert_equal_trec_eval(report, qrels, run):
    expected = oracle(qrels, run, 1)
    names = list(ORACLE)
    ours = np.array([[report.per_query[q][m] for m in names] for q in qrels])
    theirs = np.array([[expected.get(q, {}).get(ORACLE[m], 0.0) for m in names] for q in qrels])
    assert ours.shape == (len(qrels), len(names)) and np.abs(ours - theirs).max() < 1e-12


def test_a_million_hostile_lines_in_memory_equal_trec_eval():
    qrels, run = hostile(11_000, 100)
    assert sum(map(len, run.values())) >= 1_000_000
    report = evaluate(qrels, run, list(ORACLE), no_answer="zero", ci=False)
    _assert_equal_trec_eval(report, qrels, run)
    assert set(report.missing_queries) == {q for q in qrels if q not in run} and report.ignored_queries == ["not in the qrels"]


def test_a_million_hostile_lines_from_files_equal_trec_eval(tmp_path):
    """The same data from files: a TREC run (ids with spaces cannot be written there, so docs with spaces are only
    judged, never retrieved) and CSV qrels whose ids carry spaces inside and around them (the id rule strips the
    outer ones)."""
    qrels, run = hostile(11_000, 100, seed=1)
    run = {q: {d: s for d, s in docs.items() if " " not in d} for q, docs in run.items() if " " not in q}
    assert sum(map(len, run.values())) >= 1_000_000
    with open(tmp_path / "run.txt", "w", encoding="utf-8") as fh:
        for q, docs in run.items():
            fh.write("".join(f"{q} Q0 {d} {i} {s!r} tag\n" for i, (d, s) in enumerate(docs.items(), 1)))
    with open(tmp_path / "qrels.csv", "w", encoding="utf-8") as fh:
        fh.write("query_id,doc_id,grade\n")
        fh.write("".join(f" {q},{d}\u00a0,{g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    report = evaluate(read_qrels(tmp_path / "qrels.csv"), read_run(tmp_path / "run.txt"), list(ORACLE),
                      no_answer="zero", ci=False)
    _assert_equal_trec_eval(report, qrels, run)
