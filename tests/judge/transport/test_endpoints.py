"""Many endpoints: calls spread over two fake servers; one starts failing mid-run; every pair judged once,
and the calls after the failure go to the healthy one (counted on the servers)."""

from __future__ import annotations

import asyncio

import pytest

from relgrade.judge import JudgeConfig, Pair, ajudge_pairs, judge_pairs

MODEL = "openai/gpt-4o-mini"
N = 60


def _pairs(n=N):
    return [Pair(f"q{i // 10}", f"d{i}", f"query {i // 10}", f"passage {i} [[grade={i % 4}]]") for i in range(n)]


def _config(transport, **kw):
    base = dict(concurrency=4, timeout=5.0, backoff_initial=0.05, backoff_max=0.2, backoff_jitter=0.05,
                max_attempts=6, transport=transport)
    base.update(kw)
    return JudgeConfig(**base)


def _transports():
    return ["http", "litellm"]


@pytest.mark.parametrize("transport", _transports())
def test_calls_are_spread_with_per_endpoint_concurrency(fakes, tmp_path, fake_key, transport):
    with fakes.FakeOpenAIServer(latency=0.05) as a, fakes.FakeOpenAIServer(latency=0.05) as b:
        result = judge_pairs(_pairs(), model=MODEL, api_base=[a.base_url, b.base_url], api_key=fake_key,
                             store=tmp_path / "s.sqlite", config=_config(transport), handle_sigint=False)
        sa, sb = a.stats(), b.stats()
    assert [j.grade for j in result.judgments] == [i % 4 for i in range(N)]
    assert sa["paid"] + sb["paid"] == N and sa["paid"] >= N // 4 and sb["paid"] >= N // 4  # both used
    assert sa["max_in_flight"] <= 4 and sb["max_in_flight"] <= 4  # --concurrency is per endpoint
    assert sa["max_in_flight"] + sb["max_in_flight"] > 4  # more than one endpoint's worth in flight at once
    paid = {k: v["paid"] for k, v in sa["by_pair"].items()}
    for k, v in sb["by_pair"].items():
        paid[k] = paid.get(k, 0) + v["paid"]
    assert sorted(paid.values()) == [1] * N  # each pair paid exactly once over the two servers


@pytest.mark.parametrize("transport", _transports())
@pytest.mark.parametrize("how", ["5xx", "refused"])
def test_a_failing_endpoint_leaves_rotation_and_every_pair_is_judged_once(fakes, tmp_path, fake_key, transport, how):
    with fakes.FakeOpenAIServer(latency=0.05) as a, fakes.FakeOpenAIServer(latency=0.05) as b:
        state = {"at": None}

        async def go():
            def on_progress(stats):
                if state["at"] is None and stats["done"] >= N // 4:
                    state["at"] = a.stats()
                    if how == "5xx":
                        a.fail(503)
                    else:
                        a.stop()  # connection refused from now on

            return await ajudge_pairs(_pairs(), model=MODEL, api_base=[a.base_url, b.base_url], api_key=fake_key,
                                      store=tmp_path / "s.sqlite", config=_config(transport),
                                      on_progress=on_progress)

        result = asyncio.run(go())
        sa, sb = (a.state.snapshot(), b.stats())
    before = state["at"]
    assert before is not None and before["paid"] > 0  # A served calls before it failed
    assert result.counts()["judged"] == N and result.counts()["failed"] == 0
    assert [j.grade for j in result.judgments] == [i % 4 for i in range(N)]
    # Every pair paid exactly once over both servers: nothing lost, nothing paid twice.
    paid = {k: v["paid"] for k, v in sa["by_pair"].items()}
    for k, v in sb["by_pair"].items():
        paid[k] = paid.get(k, 0) + v["paid"]
    assert sorted(paid.values()) == [1] * N
    # After the failure, A answered at most what was already in flight; the rest went to B.
    assert sa["paid"] - before["paid"] <= 4
    assert sb["paid"] >= N - sa["paid"]
    if how == "5xx":
        # A got few requests after it failed: the calls in flight then, and a probe or two after its cool-down,
        # not one request in two as round-robin without health would send.
        after = sa["requests"] - before["requests"]
        remaining = N - before["paid"]
        assert after <= 4 + 4 + 4 and after < remaining / 2


def test_endpoint_pool_puts_a_recovered_endpoint_back(fakes, monkeypatch):
    from relgrade.judge.transport import _endpoints

    monkeypatch.setattr(_endpoints, "COOLDOWN_START", 0.2)
    body = {"model": "m", "messages": [{"role": "user", "content": "x [[grade=1]]"}]}
    with fakes.FakeOpenAIServer() as a, fakes.FakeOpenAIServer() as b:
        pool = _endpoints.EndpointPool([a.base_url, b.base_url], "sk-x", concurrency=2)

        async def go():
            a.fail(503)
            with pytest.raises(Exception) as err:
                while True:  # round-robin reaches A within two calls
                    await pool.post(body, 5)
            assert getattr(err.value, "failover", False) is True  # B is healthy: retry there at once
            for _ in range(6):
                await pool.post(body, 5)  # all go to B while A cools down
            assert a.stats()["requests"] == 1
            a.fail(0)
            await asyncio.sleep(0.25)  # the cool-down is over: A is back in rotation
            for _ in range(6):
                await pool.post(body, 5)
            await pool.aclose()

        asyncio.run(go())
        assert a.stats()["paid"] >= 2 and pool.endpoints[0].failures == 0
        assert [e for e, _ in pool.endpoints[0].events] == ["down", "up"]
