"""The two transports (litellm, relgrade's lean aiohttp client): same judgments, same failures, the choice itself.

Against the fake OpenAI server of tests/fakes (a real HTTP server on 127.0.0.1); the server counts
requests by the first word of their User-Agent, which tells the transports apart (``relgrade`` for
the lean client, ``AsyncOpenAI`` for litellm's OpenAI client).
"""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from relgrade import InputError
from relgrade.cli import main
from relgrade.judge import JudgeConfig, JudgmentStore, Pair, judge_pairs
from relgrade.judge._call import choose_transport
from relgrade.judge._http import _proxy_for

from .conftest import fast_config

MODEL = "openai/gpt-4o-mini"


def _pairs(spec):
    return [Pair("q1", doc, "how do tides work", f"passage {doc} [[grade={grade}]]" + (f" [[faults={f}]]" if f else ""))
            for doc, grade, f in spec]


def _judge(server, tmp_path, pairs, transport, fake_key, name=None, **kw):
    return judge_pairs(pairs, model=MODEL, store=tmp_path / f"{name or transport}.sqlite", api_base=server.base_url,
                       api_key=fake_key, config=fast_config(transport=transport, **kw), handle_sigint=False)


def test_both_transports_record_the_same_judgments(server, tmp_path, fake_key):
    pairs = _pairs([(f"d{i}", i % 4, "429:0.1" if i == 2 else ("garbage" if i == 5 else "")) for i in range(8)])
    results = {}
    for transport, client in (("http", "relgrade"), ("litellm", "AsyncOpenAI")):
        server.reset()
        results[transport] = _judge(server, tmp_path, pairs, transport, fake_key)
        assert set(server.stats()["clients"]) == {client}
    fields = ("query_id", "doc_id", "grade", "status", "distribution", "expected_grade", "reason", "prompt_tokens",
              "completion_tokens")
    http, lite = ([{f: getattr(j, f) for f in fields} for j in results[t].judgments] for t in ("http", "litellm"))
    assert http == lite
    assert [j.grade for j in results["http"].judgments] == [i % 4 for i in range(8)]
    for a, b in zip(results["http"].judgments, results["litellm"].judgments):
        assert a.cost_usd == pytest.approx(b.cost_usd, rel=1e-9) and a.cost_usd > 0
    assert results["http"].cost_usd == pytest.approx(results["litellm"].cost_usd, rel=1e-9)
    assert results["http"].n_calls == results["litellm"].n_calls == 9  # 8 answers + 1 repair (the 429 is unpaid)
    assert [c for c, _ in results["http"].retries] == [c for c, _ in results["litellm"].retries] == ["429"]


def test_the_store_key_does_not_depend_on_the_transport(server, tmp_path, fake_key):
    pairs = _pairs([("a", 1, ""), ("b", 3, "")])
    first = _judge(server, tmp_path, pairs, "http", fake_key, name="shared")
    server.reset()
    again = _judge(server, tmp_path, pairs, "litellm", fake_key, name="shared")
    assert server.stats()["requests"] == 0 and again.n_calls == 0
    assert [j.grade for j in again.judgments] == [j.grade for j in first.judgments] == [1, 3]


def test_a_200_that_is_not_json_is_retried_and_never_stored(server, tmp_path, config, fake_key):
    pairs = _pairs([("proxy", 2, "html"), ("down", 1, "html;html;html"), ("ok", 0, "")])
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url, api_key=fake_key,
                         config=config(max_attempts=3), handle_sigint=False)
    by = {j.doc_id: j for j in result.judgments}
    assert by["proxy"].grade == 2 and by["ok"].grade == 0
    assert by["down"].status == "failed" and by["down"].grade is None
    assert "no answer after 3 attempts" in by["down"].error
    with JudgmentStore(tmp_path / "s.sqlite") as db:
        assert len(db) == 2  # the failed pair is not stored: a re-run asks again


def test_context_window_rejection_fails_that_pair_only(server, tmp_path, config, fake_key):
    pairs = _pairs([("long", 1, "context"), ("a", 2, ""), ("b", 3, "")])
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url, api_key=fake_key,
                         config=config(), handle_sigint=False)
    by = {j.doc_id: j for j in result.judgments}
    assert by["long"].status == "failed" and "ContextWindowExceeded" in by["long"].error
    assert by["a"].grade == 2 and by["b"].grade == 3
    assert server.stats()["requests"] == 3  # not retried: a longer wait does not shorten the prompt


def test_http_transport_reads_the_providers_key_variable(fakes, tmp_path, fake_key, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    with fakes.FakeOpenAIServer(require_key=fake_key) as srv:
        result = judge_pairs(_pairs([("a", 2, "")]), model=MODEL, store=tmp_path / "s.sqlite", api_base=srv.base_url,
                             config=fast_config(transport="http"), handle_sigint=False)
        assert srv.stats()["clients"] == {"relgrade": 1}
    assert result.judgments[0].grade == 2


def test_auth_failure_on_http_names_the_variable_and_hides_the_key(fakes, tmp_path, fake_key):
    with fakes.FakeOpenAIServer(require_key="sk-the-right-one-123456") as srv:
        with pytest.raises(InputError) as err:
            judge_pairs(_pairs([("a", 1, ""), ("b", 2, "")]), model=MODEL, store=tmp_path / "s.sqlite",
                        api_base=srv.base_url, api_key=fake_key, config=fast_config(transport="http", concurrency=1),
                        handle_sigint=False)
        # the preflight's free GET /models/<model> got the 401: no chat request at all (issue 25); a 401 on a chat
        # request stops the run after one request (test_judge_server.py::test_fail_fast_on_client_errors)
        assert srv.stats()["requests"] == 0 and srv.stats()["probes"] == 1
    assert "authentication failed for openai: set OPENAI_API_KEY" in str(err.value)
    assert fake_key not in str(err.value) and fake_key[8:] not in str(err.value)


def test_choose_transport():
    assert choose_transport("openai/gpt-4o-mini", "auto", "http://127.0.0.1:8000/v1") == "http"
    assert choose_transport("openai/gpt-4o-mini", "auto", None) == "litellm"  # OpenAI itself: litellm's defaults
    assert choose_transport("anthropic/claude-3-5-haiku-latest", "auto", "http://x/v1") == "litellm"
    assert choose_transport("local/gemma3-270m", "auto", "http://x/v1") == "litellm"
    assert choose_transport("openai/gpt-4o-mini", "litellm", "http://x/v1") == "litellm"
    assert choose_transport("openai/gpt-4o-mini", "http", None) == "http"
    with pytest.raises(InputError, match="--transport http speaks the OpenAI chat API only"):
        choose_transport("ollama/llama3", "http", None)
    with pytest.raises(InputError, match="--transport must be one of auto, litellm, http, got 'grpc'"):
        JudgeConfig(transport="grpc")


@pytest.mark.parametrize("transport, client", [("http", "relgrade"), ("litellm", "AsyncOpenAI")])
def test_cli_transport_flag(server, tmp_path, make_run, fake_key, monkeypatch, capsys, transport, client):
    run = make_run(tmp_path / "run.jsonl", {"q1": ("tides", [("d1", "moon [[grade=3]]"), ("d2", "sun [[grade=1]]")])})
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    code = main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--transport", transport,
                 "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o.qrels")])
    assert code == 0, capsys.readouterr().err
    assert server.stats()["clients"] == {client: 2}


@pytest.mark.parametrize("argv, fragment", [
    (["--model", "anthropic/claude-3-5-haiku-latest", "--transport", "http"],
     "--transport http speaks the OpenAI chat API only: use an openai/ model (got anthropic/claude-3-5-haiku-latest)"),
    (["--model", MODEL, "--transport", "grpc"], "Invalid value for '--transport'"),
])
def test_cli_bad_transport_exits_2_before_any_call(tmp_path, make_run, capsys, argv, fragment):
    run = make_run(tmp_path / "run.jsonl", {"q1": ("tides", [("d1", "moon")])})
    code = main(["judge", "--run", str(run), "--out", str(tmp_path / "o.qrels"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and "Traceback" not in err
    assert not (tmp_path / "o.qrels").exists()


class _Proxy(BaseHTTPRequestHandler):
    """A forward HTTP proxy that records the absolute URLs it is asked for."""

    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def log_message(self, *args):  # noqa: D401 - quiet
        pass

    def do_POST(self):  # noqa: N802
        self.seen.append(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = urllib.request.Request(self.path, data=body, method="POST",
                                         headers={k: v for k, v in self.headers.items()
                                                  if k.lower() not in {"host", "proxy-connection", "connection"}})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as resp:
            data, status = resp.read(), resp.status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_http_transport_goes_through_the_proxy_of_the_environment(server, tmp_path, fake_key, monkeypatch):
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        result = _judge(server, tmp_path, _pairs([("a", 2, ""), ("b", 0, "")]), "http", fake_key)
        assert [j.grade for j in result.judgments] == [2, 0]
        assert len(_Proxy.seen) == 2 and all(p.startswith(server.base_url) for p in _Proxy.seen)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert _proxy_for(server.base_url + "/chat/completions") is None
    finally:
        proxy.shutdown()
        proxy.server_close()
