"""ragas' own context precision (its LLM path: LangchainLLMWrapper(ChatOpenAI), its parser and output
fixer) and relgrade's ``ragas:context_precision`` judge on the same rows and the same fake server."""

from __future__ import annotations

import math
import warnings

import pytest

pytest.importorskip("ragas")
pytest.importorskip("langchain_openai")

from relgrade.io import query_id_for  # noqa: E402
from relgrade.judge import Pair, judge_pairs  # noqa: E402
from relgrade.ragas import average_precision, ragas_prompt  # noqa: E402

from .conftest import fast_config  # noqa: E402

ROWS = [
    ("first question?", ["a [[grade=3]]", "b [[grade=0]]", "c [[grade=2]]"]),
    ("second question?", ["d [[grade=0]]", "e [[grade=0]]", "f [[grade=1]]"]),
    ("third question?", ["g [[grade=1]] [[faults=garbage]]", "h [[grade=0]]"]),  # unparseable once
    ("fourth question?", ["i [[grade=2]]", "j [[grade=1]] [[faults=" + ";".join(["garbage"] * 8) + "]]",
                          "k [[grade=0]]"]),  # unparseable on every attempt
    ("fifth question?", ["l [[grade=0]] [[faults=429:0.05]]", "m [[grade=1]]"]),
]


def _ragas_scores(base_url: str) -> list[float]:
    import httpx
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics._context_precision import LLMContextPrecisionWithoutReference

    data = EvaluationDataset.from_list([{"user_input": q, "response": q, "retrieved_contexts": c} for q, c in ROWS])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="sk-fake",
                                             temperature=0.0, http_async_client=httpx.AsyncClient()))
        result = evaluate(data, metrics=[LLMContextPrecisionWithoutReference()], llm=llm, show_progress=False,
                          run_config=RunConfig(max_workers=4, timeout=60), raise_exceptions=False)
    return [row["llm_context_precision_without_reference"] for row in result.scores]


def test_relgrade_judge_gives_ragas_scores_and_keeps_the_rows_ragas_loses(server, tmp_path):
    expected = [(1 + 2 / 3) / 2, 1 / 3, 1.0, None, 0.5]  # AP of min(marker, 1) per row; row 4 has no verdict in ragas
    ragas_scores = _ragas_scores(server.base_url)
    assert ragas_scores[:3] + ragas_scores[4:] == pytest.approx(expected[:3] + expected[4:])
    assert math.isnan(ragas_scores[3])  # one unreadable context: ragas drops the whole row
    stats = server.stats()
    assert stats["paid"] > sum(len(c) for _, c in ROWS)  # ragas' output fixer asked the server again

    server.reset()
    pairs = [Pair(query_id_for(q), f"c{d}", q, t) for q, c in ROWS for d, t in enumerate(c)]
    result = judge_pairs(pairs, model="openai/gpt-4o-mini", prompt=ragas_prompt("ragas:context_precision"),
                         store=tmp_path / "s.sqlite", config=fast_config(concurrency=4), api_base=server.base_url,
                         api_key="sk-fake")
    grades = {(j.query_id, j.doc_id): j for j in result.judgments}
    assert len(grades) == len(pairs)  # no pair lost
    ours = []
    for q, contexts in ROWS:
        judged = [g.grade for d in range(len(contexts)) if (g := grades[(query_id_for(q), f"c{d}")]).grade is not None]
        ours.append(average_precision([int(g >= 1) for g in judged]))
    lost = grades[(query_id_for(ROWS[3][0]), "c1")]
    assert lost.status == "unjudged" and lost.raw_answer  # kept, with the raw answer, for --retry-unjudged
    # the same score as ragas on every row ragas scored; row 4 from its two judged contexts [1, 0]
    assert ours == pytest.approx(expected[:3] + [1.0] + expected[4:])
    assert [cause for cause, _ in result.retries] == ["429"]
