"""The bundled demo data holds what the guide asks a golden set to hold, and the retrievers behave as documented."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict

import pytest

from relgrade import demo
from relgrade.io import read_run
from relgrade.metrics import evaluate

MIN_TAGS = {"keyword": 10, "paraphrase": 12, "ambiguous": 6, "multi-doc": 7, "no-answer": 6, "tenant": 6}


@pytest.fixture(scope="module")
def records():
    return demo.corpus_records()


@pytest.fixture(scope="module")
def golden():
    return demo.golden()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    paths = demo.write_runs(tmp_path_factory.mktemp("runs"), k=10)
    return {name: read_run(path) for name, path in paths.items()}


def test_corpus_is_large_enough_and_well_formed(records):
    assert len(records) >= 60
    ids = [r["doc_id"] for r in records]
    assert len(set(ids)) == len(ids)
    for r in records:
        assert r["title"] and r["section"] and 30 <= len(r["text"].split()) <= 160, r["doc_id"]
    assert len({r["section"] for r in records}) >= 8


def test_golden_covers_the_guides_case_kinds(golden, records):
    ids = {r["doc_id"]: r for r in records}
    assert len(golden.cases) >= 50
    tags = Counter(t for c in golden.cases for t in set(c.tags))
    for tag, least in MIN_TAGS.items():
        assert tags[tag] >= least, (tag, tags[tag])
    for case in golden.cases:
        for doc in [*case.relevant_doc_ids, *case.relevance_grades, *case.forbidden_doc_ids]:
            assert doc in ids, (case.query_id, doc)
        if "no-answer" in case.tags:
            assert case.no_answer, case.query_id
        if "multi-doc" in case.tags:
            assert sum(g >= 2 for g in case.grades().values()) >= 2, case.query_id
        if "tenant" in case.tags:
            tenant = demo.tenant_of(case)
            assert tenant and case.forbidden_doc_ids, case.query_id
            assert all(ids[d]["tenant"] not in (None, tenant) for d in case.forbidden_doc_ids), case.query_id


def test_both_runs_cover_every_query_with_texts(runs, golden):
    assert set(runs) == {"bm25", "tfidf"}
    for run in runs.values():
        ranked = run.ranked()
        assert set(ranked) <= {c.query_id for c in golden.cases}
        assert len(ranked) >= len(golden.cases) - 2  # a query of stopwords only may retrieve nothing
        assert all(len(docs) <= 10 for docs in ranked.values())
        assert all(d in run.texts for docs in ranked.values() for d in docs)


def test_baseline_filters_tenants_and_candidate_leaks(runs, golden, records):
    tenant_of_doc = {r["doc_id"]: r["tenant"] for r in records}
    base = evaluate(golden, runs["bm25"], ["recall@5"])
    cand = evaluate(golden, runs["tfidf"], ["recall@5"])
    assert base.leaks == []
    assert cand.leaks, "the tfidf candidate has no tenant filter: some tenant query should see another tenant's chunk"
    for case in golden.cases:
        mine = demo.tenant_of(case)
        for doc in runs["bm25"].ranked().get(case.query_id, []):
            assert tenant_of_doc[doc] in (None, mine), (case.query_id, doc)


def test_human_labels_fully_label_the_top5_pool_of_the_labeled_queries(runs, golden):
    rows = list(csv.DictReader(open(demo.human_labels_path(), encoding="utf-8")))
    assert rows and set(rows[0]) == {"query_id", "doc_id", "grade", "annotator"}
    by_annotator = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        assert int(row["grade"]) in (0, 1, 2, 3)
        by_annotator[row["annotator"]][row["query_id"]][row["doc_id"]] = int(row["grade"])
    assert len(by_annotator) == 2
    primary, second = sorted(by_annotator.values(), key=len, reverse=True)
    assert 25 <= len(primary) <= len(golden.cases) - 10  # a subset, as PPI expects
    assert len(second) >= 8 and set(second) <= set(primary)
    for qid, docs in primary.items():
        pooled = set().union(*(run.ranked().get(qid, [])[:5] for run in runs.values()))
        assert pooled <= set(docs), (qid, pooled - set(docs))
    qrels = demo.human_qrels()
    assert set(qrels.labels) == set(primary)
    assert any(len(a) == 2 for a in qrels.annotations.values())


def test_runs_are_readable_by_the_judge_pooler(tmp_path):
    paths = demo.write_runs(tmp_path, k=3)
    line = json.loads(paths["bm25"].read_text(encoding="utf-8").splitlines()[0])
    assert set(line) == {"query_id", "query", "results"} and 1 <= len(line["results"]) <= 3
    assert all(set(r) == {"doc_id", "text"} for r in line["results"])


def test_demo_bad_options_exit_2_with_one_line_before_any_work(tmp_path, capsys):
    from relgrade.cli import main

    afile = tmp_path / "report.txt"
    afile.write_text("keep me")
    assert main(["demo", "--out", str(afile)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "not a directory" in err[0]
    assert afile.read_text() == "keep me"
    assert main(["demo", "--out", str(tmp_path / "d"), "--depth", "0"]) == 2
    assert "--depth" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
