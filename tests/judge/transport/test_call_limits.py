"""The call layer's rate limits and logprobs fallback, against the fake OpenAI server on 127.0.0.1.

The rpm / tpm window length is ``relgrade.judge.transport._call.WINDOW_SECONDS`` (60 s in use); the tests
shorten or lengthen it and assert on what the server received, never on a wall-time ceiling.
Each test runs on both transports (the ``config`` fixture of conftest.py is parametrized).
"""

from __future__ import annotations

import asyncio
import io
import json
import time


from relgrade.judge import Pair, ajudge_pairs, judge_pairs
from relgrade.judge.transport import _call

MODEL = "openai/gpt-4o-mini"


def _pairs(n):
    return [Pair("q1", f"d{i}", "how do tides work", f"passage {i} [[grade={i % 4}]]") for i in range(n)]


def _stopped_after(server, tmp_path, config, fake_key, n_expected, **limits):
    """Run 6 pairs with a window that never reopens; stop once ``n_expected`` are done (plus a grace)."""
    stop = asyncio.Event()
    done = []

    async def go():
        loop = asyncio.get_running_loop()

        def on_progress(stats):
            done.append(stats["done"])
            if stats["done"] >= n_expected:
                loop.call_later(0.5, stop.set)  # time for an unlimited run to send the rest

        return await ajudge_pairs(_pairs(6), model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                                  api_key=fake_key, config=config(concurrency=6, **limits), on_progress=on_progress,
                                  stop_event=stop)

    return asyncio.run(go())


def test_rpm_window_holds_back_calls_beyond_the_limit(server, tmp_path, config, fake_key, monkeypatch):
    monkeypatch.setattr(_call, "WINDOW_SECONDS", 3600.0)
    result = _stopped_after(server, tmp_path, config, fake_key, 3, rpm=3)
    assert server.stats()["requests"] == 3
    assert result.stopped == "interrupted" and len(result.judgments) == 3 and len(result.remaining) == 3


def test_tpm_window_counts_prompt_and_worst_case_output_tokens(server, tmp_path, config, fake_key, monkeypatch):
    from relgrade.judge import load_prompt
    from relgrade.judge.transport._prices import count_tokens

    monkeypatch.setattr(_call, "WINDOW_SECONDS", 3600.0)
    # Each call reserves its prompt estimate plus max_tokens, with or without --max-cost (issue 15: before,
    # only max_tokens was reserved unless --max-cost was set, and this test asserted that wrong count).
    prompt = load_prompt("graded")
    est = [count_tokens(MODEL, prompt.render(p.query, p.text)) for p in _pairs(6)]
    assert min(est) > 100  # the prompt estimate matters: 2 calls of max_tokens alone would leave room for more
    tpm = 2 * max(est) + 2 * 100 + 10  # room for exactly two calls (each reserves its prompt + 100)
    assert 3 * min(est) + 3 * 100 > tpm
    assert 5 * 100 <= tpm  # if only max_tokens were reserved, five or more calls would fit
    result = _stopped_after(server, tmp_path, config, fake_key, 2, tpm=tpm, max_tokens=100)
    assert server.stats()["requests"] == 2
    assert len(result.judgments) == 2 and len(result.remaining) == 4


def test_rpm_window_reopens_and_every_pair_is_judged(server, tmp_path, config, fake_key, monkeypatch):
    monkeypatch.setattr(_call, "WINDOW_SECONDS", 0.3)
    start = time.monotonic()
    result = judge_pairs(_pairs(6), model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                         api_key=fake_key, config=config(concurrency=6, rpm=2), handle_sigint=False)
    elapsed = time.monotonic() - start
    assert result.counts()["judged"] == 6 and server.stats()["requests"] == 6
    assert elapsed >= 2 * 0.3  # 6 calls at 2 per window need at least three windows: a lower bound only


class _RefusingLogprobs:
    """Wraps the fake server's handler: any request asking for logprobs gets the 400 vLLM sends."""

    refused: list[int] = []

    @classmethod
    def install(cls, server):
        base = server._httpd.RequestHandlerClass
        refused = cls.refused = []

        class Handler(base):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if json.loads(raw or b"{}").get("logprobs"):
                    refused.append(1)
                    self._send(400, {"error": {"message": "logprobs is not supported by this model",
                                               "type": "invalid_request_error"}})
                    return
                self.rfile = io.BytesIO(raw)
                super().do_POST()

        server._httpd.RequestHandlerClass = Handler
        return refused


def test_logprobs_refused_is_graded_without_distribution(server, tmp_path, config, fake_key):
    refused = _RefusingLogprobs.install(server)
    result = judge_pairs(_pairs(3), model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                         api_key=fake_key, config=config(concurrency=1), handle_sigint=False)
    assert [j.grade for j in result.judgments] == [0, 1, 2]
    assert all(j.status == "judged" and j.distribution is None for j in result.judgments)
    assert len(refused) == 1  # refused once, then asked without logprobs for the rest of the run
    assert server.stats()["paid"] == 3


def test_concurrency_is_the_number_of_requests_in_flight(fakes, tmp_path, config, fake_key):
    with fakes.FakeOpenAIServer(latency=0.1) as srv:
        result = judge_pairs(_pairs(24), model=MODEL, store=tmp_path / "s.sqlite", api_base=srv.base_url,
                             api_key=fake_key, config=config(concurrency=4), handle_sigint=False)
        assert srv.stats()["max_in_flight"] == 4  # reached, never passed (the judge runs 8 workers)
    assert [j.grade for j in result.judgments] == [i % 4 for i in range(24)]


def test_a_retry_after_wait_does_not_hold_a_request_slot(server, fakes, tmp_path, config, fake_key):
    from relgrade.judge import load_prompt

    pairs = [Pair("q1", "slow", "tides", "passage [[grade=2]] [[faults=429:0.6]]"),
             Pair("q1", "a", "tides", "passage a [[grade=1]]"), Pair("q1", "b", "tides", "passage b [[grade=3]]")]
    keys = [fakes.pair_key(load_prompt("graded").render(p.query, p.text)) for p in pairs]
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url, api_key=fake_key,
                         config=config(concurrency=1), handle_sigint=False)
    assert [j.grade for j in result.judgments] == [2, 1, 3]
    # one request at a time, and the other pairs go while the first waits out its 0.6 s Retry-After
    assert server.stats()["order"] == [keys[0], keys[1], keys[2], keys[0]]
    assert server.stats()["max_in_flight"] == 1
