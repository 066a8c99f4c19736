"""ragas datasets <-> relgrade golden sets and runs, checked against ragas itself."""

from __future__ import annotations

import json

import pytest

ragas = pytest.importorskip("ragas")

from ragas import EvaluationDataset, SingleTurnSample  # noqa: E402

from relgrade._errors import InputError  # noqa: E402
from relgrade.io import GoldenCase, GoldenSet, Run, query_id_for  # noqa: E402
from relgrade.metrics import evaluate  # noqa: E402
from relgrade.ragas import (  # noqa: E402
    chunk_id_for, golden_from_ragas, run_from_ragas, to_ragas, write_ragas_jsonl,
)

SAMPLES = [
    {"user_input": "who wrote \"Faust\"?", "retrieved_contexts": ["Goethe wrote Faust.", "Schiller was a poet.",
                                                                  "Faust — a tragedy\nin two parts", "Weimar", "Ünïcode ✓"],
     "retrieved_context_ids": ["d1", "d2", "d3", "d4", "d5"], "reference_context_ids": ["d1", "d3", "d9"]},
    {"user_input": "capital of France", "retrieved_contexts": ["Paris", "Lyon", "Nice", "Lille", "Metz"],
     "retrieved_context_ids": [11, 12, 13, 14, 15], "reference_context_ids": [11]},
    {"user_input": "no such thing", "retrieved_contexts": ["a", "b", "c", "d", "e"],
     "retrieved_context_ids": ["x1", "x2", "x3", "x4", "x5"], "reference_context_ids": []},
]


def _dataset():
    return EvaluationDataset.from_list([dict(s) for s in SAMPLES])


def test_golden_and_run_from_ragas_dataset():
    golden = golden_from_ragas(_dataset())
    run = run_from_ragas(_dataset())
    qid = query_id_for(SAMPLES[0]["user_input"])
    assert [c.query_id for c in golden] == [query_id_for(s["user_input"]) for s in SAMPLES]
    assert golden.cases[0].relevant_doc_ids == ("d1", "d3", "d9")
    assert golden.cases[1].relevant_doc_ids == ("11",)  # integer ids become strings
    assert golden.cases[2].no_answer
    assert run.ranked()[qid] == ["d1", "d2", "d3", "d4", "d5"]
    assert run.queries[qid] == SAMPLES[0]["user_input"]
    assert run.texts["d3"] == "Faust — a tragedy\nin two parts"


def test_metrics_match_ragas_id_based_precision_and_recall():
    """relgrade precision@5 / recall fraction@5 on the converted data equal ragas' own ID-based metrics."""
    from ragas.metrics._context_precision import IDBasedContextPrecision
    from ragas.metrics._context_recall import IDBasedContextRecall

    report = evaluate(golden_from_ragas(_dataset()), run_from_ragas(_dataset()), ["precision@5", "frac_recall@5"],
                      ci=False)
    for sample in _dataset():
        qid = query_id_for(sample.user_input)
        if not sample.reference_context_ids:
            assert qid not in report.per_query  # a no-answer query is reported apart, as the guide says
            continue
        precision = IDBasedContextPrecision().single_turn_score(sample)
        recall = IDBasedContextRecall().single_turn_score(sample)
        assert report.per_query[qid]["precision@5"] == pytest.approx(precision)
        assert report.per_query[qid]["frac_recall@5"] == pytest.approx(recall)


def test_to_ragas_round_trip_and_jsonl_is_ragas_own(tmp_path):
    golden, run = golden_from_ragas(_dataset()), run_from_ragas(_dataset())
    back = to_ragas(golden, run, k=10)
    assert isinstance(back, EvaluationDataset)
    expected = [dict(s, retrieved_context_ids=[str(i) for i in s["retrieved_context_ids"]],
                     reference_context_ids=[str(i) for i in s["reference_context_ids"]]) for s in SAMPLES]
    # the reference text of doc 11 is known from the run, so it is written as reference_contexts too;
    # doc d9 of the first query was never retrieved, so that sample gets ids only
    expected[1] = {**expected[1], "reference_contexts": ["Paris"]}
    expected[1] = {f: expected[1][f] for f in ("user_input", "retrieved_contexts", "reference_contexts",
                                              "retrieved_context_ids", "reference_context_ids")}
    assert back.to_list() == expected
    # our JSONL writer writes what ragas' to_jsonl writes, byte for byte, and ragas reads it back
    ours = write_ragas_jsonl(tmp_path / "ours.jsonl", golden, run, k=10)
    back.to_jsonl(tmp_path / "theirs.jsonl")
    assert ours.read_bytes() == (tmp_path / "theirs.jsonl").read_bytes()
    assert EvaluationDataset.from_jsonl(ours).to_list() == expected
    # and the JSONL path reads without going through ragas objects
    assert golden_from_ragas(ours).cases == golden.cases
    assert run_from_ragas(ours).ranked() == run.ranked()


def test_to_ragas_cuts_at_k_and_fills_reference_texts():
    run = Run.from_dict({"q": ["a", "b", "c"]}, queries={"q": "query"}, texts={"a": "A", "b": "B", "c": "C"})
    golden = GoldenSet((GoldenCase(query="query", query_id="q", relevant_doc_ids=("c",),
                                   relevance_grades={"b": 0, "c": 3}),))
    [row] = to_ragas(golden, run, k=2).to_list()
    assert row == {"user_input": "query", "retrieved_contexts": ["A", "B"], "reference_contexts": ["C"],
                   "retrieved_context_ids": ["a", "b"], "reference_context_ids": ["c"]}
    # a run without texts gives ids only; a query only in the run has no references
    only = to_ragas(None, Run.from_dict({"q2": ["z"]}, queries={"q2": "other"}), k=5).to_list()
    assert only == [{"user_input": "other", "retrieved_context_ids": ["z"]}]


def test_contexts_without_ids_match_by_text():
    sample = SingleTurnSample(user_input="q", retrieved_contexts=["alpha", "beta"], reference_contexts=["beta"])
    run, golden = run_from_ragas([sample]), golden_from_ragas([sample])
    assert run.ranked()[query_id_for("q")] == [chunk_id_for("alpha"), chunk_id_for("beta")]
    assert golden.cases[0].relevant_doc_ids == (chunk_id_for("beta"),)
    assert evaluate(golden, run, ["mrr"], ci=False).value("mrr") == pytest.approx(0.5)


@pytest.mark.parametrize("rows, fragment", [
    ([{"user_input": "q", "retrieved_contexts": ["a"], "retrieved_context_ids": ["1", "2"]}], "2 retrieved_context_ids but 1"),
    ([{"user_input": "q", "retrieved_context_ids": ["1"]}, {"user_input": "q", "retrieved_context_ids": ["2"]}],
     "repeats the user_input of sample 1"),
    ([{"user_input": [{"content": "hi", "type": "human"}]}], "multi-turn"),
    ([{"retrieved_context_ids": ["1"]}], "missing 'user_input'"),
    ([{"user_input": "q"}], "no 'retrieved_context_ids' or 'retrieved_contexts'"),
    ([{"user_input": "q", "retrieved_context_ids": ["1", "1"]}], "appears twice"),
])
def test_run_input_errors_name_the_sample(rows, fragment):
    with pytest.raises(InputError, match="sample") as err:
        run_from_ragas(rows)
    assert fragment in str(err.value)


def test_jsonl_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"user_input": "q", "reference_context_ids": ["1"]}) + "\n"
                    + json.dumps({"user_input": "r"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        golden_from_ragas(path)
    assert str(err.value).startswith(f"{path}:2: ")
    assert "reference_context_ids" in str(err.value)


def test_missing_ragas_is_one_clear_error(monkeypatch):
    import builtins

    from relgrade.ragas import require_ragas

    real = builtins.__import__

    def no_ragas(name, *args, **kwargs):
        if name == "ragas" or name.startswith("ragas."):
            raise ImportError("No module named 'ragas'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ragas)
    with pytest.raises(InputError, match=r"needs the 'ragas' extra: pip install 'relgrade\[ragas\]'"):
        require_ragas()
