"""Fail fast before the first paid call (issue 25): a missing or wrong key, an unknown model, a server that does not
answer. One line, exit 2, within seconds, on both transports (the lean aiohttp client and litellm), for OpenAI- and
Anthropic-shaped refusals as the real APIs send them (tests/fakes/openai_server.py), and in ``relgrade demo``."""

from __future__ import annotations

import socket
import time

import pytest

from relgrade import InputError
from relgrade.cli import main

MODEL = "openai/gpt-4o-mini"
# seconds: "a few", with room for a loaded shared 2-core machine (relgrade judge without a key took 0.9 s on the lean
# transport and 2.1 s on litellm as a whole process here; the bug took six minutes); most of it is importing litellm
FAST = 30.0
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


def _run(tmp_path, make_run, n=6):
    spec = {f"q{q}": (f"question {q}", [(f"d{q}{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]") for d in range(3)])
            for q in range(n)}
    return make_run(tmp_path / "run.jsonl", spec)


def _judge(tmp_path, run, *extra) -> tuple[int, float]:
    start = time.perf_counter()
    code = main(["judge", "--run", str(run), "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o.qrels"),
                 *extra])
    return code, time.perf_counter() - start


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("relgrade: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_missing_openai_key_is_one_line_before_any_request(tmp_path, make_run, capsys, transport):
    code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", MODEL, "--transport", transport)
    line = _one_line(capsys)
    assert code == 2 and took < FAST
    assert "no API key for openai: set OPENAI_API_KEY (or name the variable that holds it with --api-key-env)" in line
    assert "nothing was sent" in line and not (tmp_path / "o.qrels").exists()


@pytest.mark.parametrize("transport, key, fragment", [
    ("http", None, "no API key for openai: set OPENAI_API_KEY"),  # OpenAI's 401 "You didn't provide an API key"
    ("http", "sk-wrong-0123456789abcdef", "authentication failed for openai: set OPENAI_API_KEY (Incorrect API key"),
    ("litellm", "sk-wrong-0123456789abcdef", "authentication failed for openai: set OPENAI_API_KEY (Incorrect API key"),
    # litellm's OpenAI client sends nothing without a key, even to a server that needs none: said before any request
    ("litellm", None, "no API key for openai/ at http://127.0.0.1:"),
])
def test_a_wrong_or_missing_key_stops_before_any_paid_request(fakes, tmp_path, make_run, capsys, monkeypatch, transport,
                                                              key, fragment):
    if key:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    with fakes.FakeOpenAIServer(require_key="sk-right-0123456789abcdef", models=("gpt-4o-mini",)) as srv:
        code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", MODEL, "--api-base", srv.base_url,
                            "--transport", transport)
        stats = srv.stats()
    line = _one_line(capsys)
    assert code == 2 and took < FAST and fragment in line and "nothing was sent" in line
    assert stats["requests"] == 0 and stats["probes"] == (0 if (transport, key) == ("litellm", None) else 1)
    if key:
        assert key not in line and key[8:] not in line


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_an_unknown_model_is_one_line(fakes, tmp_path, make_run, capsys, monkeypatch, transport):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right-0123456789abcdef")
    with fakes.FakeOpenAIServer(require_key="sk-right-0123456789abcdef", models=("gpt-4o-mini",)) as srv:
        code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", "openai/gpt-5-nope", "--api-base",
                               srv.base_url, "--transport", transport)
        stats = srv.stats()
    line = _one_line(capsys)
    assert code == 2 and took < FAST and stats["requests"] == 0
    assert "model openai/gpt-5-nope not found at openai: check --model and --api-base" in line
    assert "The model `gpt-5-nope` does not exist" in line


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_an_unknown_model_on_a_server_without_a_models_route_stops_at_the_first_call(fakes, tmp_path, make_run, capsys,
                                                                                    monkeypatch, transport):
    """vLLM and llama.cpp answer GET /models/<id> with a plain 404: the first chat request's model_not_found (404)
    is then fatal at once, never retried, on both transports."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right-0123456789abcdef")
    with fakes.FakeOpenAIServer(models=("gpt-4o-mini",)) as srv:
        monkeypatch.setattr(fakes._Handler, "do_GET", lambda self: self._send(404, {"detail": "Not Found"}))
        code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", "openai/gpt-5-nope", "--api-base",
                            srv.base_url, "--transport", transport, "--concurrency", "2")
        stats = srv.stats()
    line = _one_line(capsys)
    assert code == 2 and took < FAST
    assert "model openai/gpt-5-nope not found at openai" in line and "does not exist" in line
    assert 1 <= stats["requests"] <= 2 * 2 and stats["paid"] == 0  # the requests in flight, no retry of any


def test_litellm_missing_credentials_are_fatal_not_retried_as_a_500(fakes, monkeypatch):
    """litellm raises a missing OpenAI key as an HTTP 500 ("Missing credentials"): fatal at once, never retried."""
    import asyncio

    from relgrade.judge import JudgeConfig
    from relgrade.judge._call import Caller, FatalCallError

    with fakes.FakeOpenAIServer() as srv:
        caller = Caller(MODEL, JudgeConfig(transport="litellm", backoff_initial=5.0), api_base=srv.base_url)
        start = time.perf_counter()
        with pytest.raises(FatalCallError) as err:
            asyncio.run(caller.complete([{"role": "user", "content": "x [[grade=1]]"}]))
        assert time.perf_counter() - start < 4.0 and caller.sleeps == []  # one attempt, no backoff
        assert srv.stats()["requests"] == 0
    assert str(err.value).startswith("no API key for openai: set OPENAI_API_KEY")


def test_missing_anthropic_key_is_one_line_before_any_request(tmp_path, make_run, capsys):
    code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", "anthropic/claude-3-5-haiku-latest")
    line = _one_line(capsys)
    assert code == 2 and took < FAST and "no API key for anthropic: set ANTHROPIC_API_KEY" in line


@pytest.mark.parametrize("key, model, fragment", [
    (None, "anthropic/claude-3-5-haiku-latest", "no API key for anthropic: set ANTHROPIC_API_KEY (or name the "
                                                "variable that holds it with --api-key-env): http://127.0.0.1:"),
    ("sk-ant-wrong-0123456789", "anthropic/claude-3-5-haiku-latest",
     "authentication failed for anthropic: set ANTHROPIC_API_KEY (invalid x-api-key"),
    ("sk-ant-right-0123456789", "anthropic/claude-nope", "model anthropic/claude-nope not found at anthropic"),
])
def test_anthropic_refusals_as_the_real_api_sends_them(fakes, tmp_path, make_run, capsys, monkeypatch, key, model,
                                                        fragment):
    if key:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with fakes.FakeOpenAIServer(require_key="sk-ant-right-0123456789",
                                models=("claude-3-5-haiku-latest",)) as srv:
        root = srv.base_url.removesuffix("/v1")  # litellm appends /v1/messages
        code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", model, "--api-base", root)
        stats = srv.stats()
    line = _one_line(capsys)
    assert code == 2 and took < FAST and fragment in line and stats["requests"] == 0


def test_the_anthropic_probe_lets_a_right_key_through(fakes, tmp_path, make_run, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-right-0123456789")
    with fakes.FakeOpenAIServer(require_key="sk-ant-right-0123456789", models=("claude-3-5-haiku-latest",)) as srv:
        code, _ = _judge(tmp_path, _run(tmp_path, make_run, n=2), "--model", "anthropic/claude-3-5-haiku-latest",
                            "--api-base", srv.base_url.removesuffix("/v1"), "--no-logprobs")
        stats = srv.stats()
    assert code == 0, capsys.readouterr().err
    assert stats["probes"] == 1 and stats["paid"] == 6


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_a_server_that_does_not_answer_is_one_line(tmp_path, make_run, capsys, monkeypatch, transport):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-any-0123456789")
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    code, took = _judge(tmp_path, _run(tmp_path, make_run), "--model", MODEL, "--api-base", base,
                           "--transport", transport)
    line = _one_line(capsys)
    assert code == 2 and took < FAST
    assert f"cannot reach {base} (" in line and "start the server or fix --api-base" in line


def test_a_fleet_goes_on_when_one_server_answers(fakes, tmp_path, make_run, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-any-0123456789")
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    with fakes.FakeOpenAIServer() as srv:
        code, _ = _judge(tmp_path, _run(tmp_path, make_run, n=2), "--model", MODEL, "--api-base", down,
                            "--api-base", srv.base_url)
        assert code == 0, capsys.readouterr().err
        assert srv.stats()["paid"] == 6


def test_a_rerun_from_the_store_needs_no_key_and_sends_nothing(fakes, tmp_path, make_run, capsys, monkeypatch):
    run = _run(tmp_path, make_run, n=2)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-any-0123456789")
    with fakes.FakeOpenAIServer() as srv:
        assert _judge(tmp_path, run, "--model", MODEL, "--api-base", srv.base_url)[0] == 0
        monkeypatch.delenv("OPENAI_API_KEY")
        srv.reset()
        assert _judge(tmp_path, run, "--model", MODEL, "--api-base", srv.base_url, "--transport", "litellm")[0] == 0
        assert srv.stats()["requests"] == 0 and srv.stats()["probes"] == 0
    assert "0 calls" in capsys.readouterr().out


def test_the_library_raises_the_same_line(tmp_path):
    from relgrade.judge import Pair, judge_pairs

    with pytest.raises(InputError, match="no API key for openai: set OPENAI_API_KEY"):
        judge_pairs([Pair("q", "d", "query", "text")], model=MODEL, store=tmp_path / "s.sqlite", handle_sigint=False)


@pytest.mark.parametrize("how", ["no key", "wrong key", "unknown model"])
def test_the_demo_stops_at_the_judge_step_in_one_line(fakes, tmp_path, capsys, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    extra, model = [], MODEL
    with fakes.FakeOpenAIServer(require_key="sk-right-0123456789abcdef", models=("gpt-4o-mini",)) as srv:
        if how == "wrong key":
            monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0123456789abcdef")
            extra = ["--api-base", srv.base_url]
        elif how == "unknown model":
            monkeypatch.setenv("OPENAI_API_KEY", "sk-right-0123456789abcdef")
            extra, model = ["--api-base", srv.base_url], "openai/gpt-5-nope"
        start = time.perf_counter()
        code = main(["demo", "--model", model, *extra])
        took = time.perf_counter() - start
        assert srv.stats()["requests"] == 0
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 2 and took < FAST and len(err) == 1, err
    assert err[0].startswith("relgrade: error: demo step 'judge the top 5 of both runs (")
    assert {"no key": "no API key for openai: set OPENAI_API_KEY", "wrong key": "authentication failed for openai",
            "unknown model": "model openai/gpt-5-nope not found"}[how] in err[0]
    assert "calibrate" not in captured.out  # no later step ran
