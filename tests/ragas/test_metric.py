"""relgrade's judge as a ragas metric inside ``ragas.evaluate``, on the fake OpenAI server."""

from __future__ import annotations

import logging
import math

import pytest

pytest.importorskip("ragas")

from ragas import EvaluationDataset, evaluate  # noqa: E402

from relgrade.calibration import GradeMapping  # noqa: E402
from relgrade.io import query_id_for  # noqa: E402
from relgrade.ragas import RelgradeContextPrecision, average_precision  # noqa: E402

from .conftest import fast_config  # noqa: E402

MODEL = "openai/gpt-4o-mini"
ROWS = [
    {"user_input": "q one", "retrieved_contexts": ["a [[grade=3]]", "b [[grade=0]]", "c [[grade=2]]"]},
    {"user_input": "q two", "retrieved_contexts": ["g [[grade=3]] [[faults=garbage;garbage]]", "h [[grade=3]]",
                                                   "i [[grade=0]]"], "retrieved_context_ids": ["g", "h", "i"]},
    {"user_input": "q three", "retrieved_contexts": ["y [[grade=1]]", "z [[grade=2]] [[faults=429:0.05]]"]},
    {"user_input": "q four", "retrieved_contexts": ["only [[grade=2]] [[faults=garbage;garbage]]"]},
]


def test_average_precision_is_ragas_formula():
    from ragas.metrics._context_precision import LLMContextPrecisionWithoutReference, Verification

    ragas_ap = LLMContextPrecisionWithoutReference()._calculate_average_precision
    for rels in ([1, 0, 1], [0, 0, 1, 1], [0, 0], [1], [0, 1, 0, 1, 1]):
        verdicts = [Verification(reason="", verdict=r) for r in rels]
        assert average_precision(rels) == pytest.approx(ragas_ap(verdicts), abs=1e-9)


def _metric(server, tmp_path, **kw):
    kw.setdefault("config", fast_config(concurrency=4))
    return RelgradeContextPrecision(model=MODEL, api_base=server.base_url, store=str(tmp_path / "s.sqlite"), **kw)


def test_evaluate_scores_the_judged_contexts_and_says_what_was_not(server, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    metric = _metric(server, tmp_path)
    with caplog.at_level(logging.WARNING, logger="relgrade.ragas"):
        result = evaluate(EvaluationDataset.from_list(ROWS), metrics=[metric], show_progress=False)
    scores = [row["relgrade_context_precision"] for row in result.scores]
    # graded prompt, relevant = grade >= 2: q one [1,0,1]; q two: g unjudged, [1,0]; q three [0,1]; q four nothing
    assert scores[:3] == pytest.approx([(1 + 2 / 3) / 2, 1.0, 0.5])
    assert math.isnan(scores[3])
    by_query = {r.user_input: r for r in metric.results}
    assert by_query["q two"].grades == (None, 3, 0) and by_query["q two"].unjudged == 1
    assert by_query["q four"].judged == 0 and by_query["q four"].unjudged == 1
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert query_id_for("q two") in warned and query_id_for("q four") in warned and "score is NaN" in warned
    paid = server.stats()["requests"]
    again = evaluate(EvaluationDataset.from_list(ROWS), metrics=[_metric(server, tmp_path)], show_progress=False)
    assert server.stats()["requests"] == paid  # the store answers the second evaluate
    assert [r["relgrade_context_precision"] for r in again.scores][:3] == pytest.approx(scores[:3])


def test_calibration_mapping_and_ragas_prompt_inside_the_metric(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    rows = ROWS[:1] + ROWS[2:3]
    # humans say the judge's 1 is a 2 (and 2 stays 2): q three becomes [1, 1]
    mapping = GradeMapping(True, "grade", (0, 1, 2, 3), ((0.0, 0.0), (1.0, 2.0), (2.0, 2.0), (3.0, 3.0)), "kappa",
                           None, None, None, 5, "test mapping")
    mapped = _metric(server, tmp_path, mapping=mapping)
    result = evaluate(EvaluationDataset.from_list(rows), metrics=[mapped], show_progress=False)
    assert [r["relgrade_context_precision"] for r in result.scores] == pytest.approx([(1 + 2 / 3) / 2, 1.0])
    # ragas' own context precision prompt as the judge: verdicts 1,0,1 and 1,1
    verdicts = _metric(server, tmp_path, prompt="ragas:context_precision", name="relgrade_ragas_cp")
    assert verdicts.threshold == 1
    result = evaluate(EvaluationDataset.from_list(rows), metrics=[verdicts], show_progress=False)
    assert [r["relgrade_ragas_cp"] for r in result.scores] == pytest.approx([(1 + 2 / 3) / 2, 1.0])


def test_threshold_outside_the_scale_is_a_clear_error(server, tmp_path):
    from relgrade._errors import InputError

    with pytest.raises(InputError, match="threshold 4 is not inside the scale"):
        _metric(server, tmp_path, threshold=4)


def _samples(n: int, k: int = 3) -> list[dict]:
    return [{"user_input": f"shared session question {i}",
             "retrieved_contexts": [f"context {i}.{j} [[grade={(i + j) % 4}]]" for j in range(k)]} for i in range(n)]


def test_one_session_per_metric_concurrency_holds_across_samples(fakes, tmp_path, monkeypatch):
    """concurrency=2 bounds the requests in flight for the whole batch, not per sample (8 samples x 3 contexts)."""
    import asyncio

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    with fakes.FakeOpenAIServer(latency=0.05, lifetime=300) as server:
        metric = _metric(server, tmp_path, config=fast_config(concurrency=2))
        rows = _samples(8)
        results = asyncio.run(metric.abatch_score(rows))
        stats = server.stats()
    assert stats["requests"] == 24
    assert stats["max_in_flight"] <= 2  # per-sample engines would have had up to 16 in flight
    assert metric.session.callers_built == 1
    # grades (i + j) % 4, relevant = grade >= 2: the AP of each sample by hand
    for i, result in enumerate(results):
        rel = [int((i + j) % 4 >= 2) for j in range(3)]
        assert result.value == pytest.approx(average_precision(rel))
    assert sorted(r.user_input for r in metric.results) == sorted(r["user_input"] for r in rows)


def test_max_cost_holds_for_the_whole_metric_not_per_sample(server, tmp_path, monkeypatch, caplog):
    """A budget for about 3 calls: one sample alone is fully judged; 6 samples together make at most 3 calls."""
    import asyncio

    from relgrade.judge import load_prompt
    from relgrade.judge.transport._call import count_tokens, price_per_token

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    rows = _samples(6)
    prompt = load_prompt("graded")
    p_in, p_out = price_per_token(MODEL)
    worst = max(count_tokens(MODEL, prompt.render(r["user_input"], c)) for r in rows for c in r["retrieved_contexts"])
    max_cost = 3.5 * (worst * p_in + 256 * p_out)  # 256: JudgeConfig.max_tokens, reserved per call

    alone = _metric(server, tmp_path / "alone", config=fast_config(concurrency=1, max_cost=max_cost))
    (tmp_path / "alone").mkdir()
    assert asyncio.run(alone.abatch_score(rows[:1]))[0].value == pytest.approx(average_precision([0, 0, 1]))
    assert alone.results[0].judged == 3

    server.reset()
    metric = _metric(server, tmp_path, config=fast_config(concurrency=1, max_cost=max_cost))
    with caplog.at_level(logging.WARNING, logger="relgrade.ragas"):
        asyncio.run(metric.abatch_score(rows))
    assert server.stats()["requests"] <= 3  # per-sample budgets would have paid all 18
    judged = sum(r.judged for r in metric.results)
    assert 1 <= judged <= 3 and metric.session.stopped == "max_cost"
    assert metric.session.budget.spent <= max_cost
    assert "max_cost reached" in caplog.text


def test_the_modern_ascore_returns_a_metric_result(server, tmp_path, monkeypatch):
    import asyncio

    from ragas.metrics import MetricResult

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    metric = _metric(server, tmp_path)
    result = asyncio.run(metric.ascore(user_input="q one", retrieved_contexts=ROWS[0]["retrieved_contexts"],
                                       retrieved_context_ids=["a", "b", "c"]))
    assert isinstance(result, MetricResult)
    assert result.value == pytest.approx((1 + 2 / 3) / 2)
    assert metric.results[-1].grades == (3, 0, 2)
    assert metric.batch_score([{"user_input": "q three", "retrieved_contexts": ROWS[2]["retrieved_contexts"]}])[0].value \
        == pytest.approx(0.5)
