"""A fake OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

It speaks just enough of the OpenAI API for litellm (model ``openai/<name>``,
``api_base=server.base_url``, any fake key) and answers a judge prompt deterministically.

API
---
In-process (a daemon thread; stops itself after ``lifetime`` seconds or ``max_requests``)::

    from tests.fakes.openai_server import FakeOpenAIServer   # or load the file by path
    with FakeOpenAIServer(latency=0.05) as server:
        litellm.acompletion(model="openai/gpt-4o-mini", api_base=server.base_url, api_key="sk-fake", ...)
        server.stats()        # {"requests": n, "paid": n, "by_pair": {pair_key: {"requests", "paid", "faults"}}}

In a separate process (so its CPU is not counted, or so it outlives a killed client)::

    handle = spawn_server(latency=0.4)     # -> ServerProcess(base_url, port, stats(), stop())
    python tests/fakes/openai_server.py --latency 0.4    # prints "PORT <n>" then serves

Grades: a marker ``[[grade=N]]`` anywhere in the prompt gives grade N; otherwise the grade is
``sha256(first user message) % 4``. The answer is ``{"grade": N, "reason": "fake judge"}``, with
OpenAI-shaped token logprobs when ``logprobs`` is requested: the digit token's ``top_logprobs``
put ``0.7`` on N, the rest spread evenly over the other digits of 0..3, plus one non-digit token.

Judges with a character (audit tests, issue 37), set per server: ``grade_by="query"`` grades by the query alone
(``sha256(query text) % 4``, the text between the prompt's ``<<<QUERY ...>>>`` markers), a judge no change to the
passage can move; ``length_bonus=L`` gives one grade more to a passage (the text between the ``<<<PASSAGE ...>>>``
markers) longer than ``L`` characters, on a base grade of ``% 3`` so the bonus always shows (a planted length
bias); ``noise=p`` moves each answer one grade up or down (within 0..3) with probability ``p``, drawn from
``sha256(noise_seed, pair key, request number of that pair)``, so a pair asked again can get another grade while
every run of a test sees the same draws. A ``[[grade=N]]`` marker still wins.

Faults: a marker ``[[faults=F1;F2;...]]`` in the prompt scripts the successive requests of that
pair (the n-th request of a pair gets ``Fn``; later ones succeed). A *pair* is identified by
``pair_key`` = first 16 hex of sha256 of the first user message, so a repair retry (which
appends messages) counts as the same pair. Faults:

- ``429`` or ``429:S`` - rate limited with ``Retry-After: S`` (default 1; fractions allowed)
- ``500``, ``502``, ``503``, ``408``, ``409``, ``400``, ``401``, ``403`` - that status, JSON error body
- ``drop`` - close the connection without any response
- ``hang`` - wait ``hang_seconds`` (default 5) and then close without a response
- ``context`` - 400 ``context_length_exceeded`` (the prompt is over the model's context window)
- ``html`` - a 200 answer whose body is an HTML page, not JSON (a misconfigured proxy; not paid)
- ``garbage`` - a 200 answer whose content has no grade (counts as paid)
- ``offscale`` - a 200 answer with grade 7 (counts as paid)

ragas-shaped prompts (a ``PydanticPrompt`` / ``BasePrompt`` rendering: "...complies with the
following schema as specified in JSON Schema:\n{schema}") are answered in that schema: a
``verdict`` property gets ``{"reason": "fake judge", "verdict": N}`` with N the grade clamped to
0-1, a ``rating`` property gets ``{"rating": N}`` clamped to 0-2 (without a marker the grade is
``sha256 % 2`` or ``% 3``). ragas' output fixer (``FixOutputFormat``: "The output string did not
satisfy the constraints...", output ``{"text": str}``) is answered with ``{"text": <the answer to
the prompt it embeds>}``, and it counts as the *same pair* as the prompt it embeds (unwrapped
recursively), so a ``[[faults=garbage]]`` script advances the same way for ragas' fixer as for
relgrade's repair. Logprobs of these answers put the digit in a token of its own.

Hostile echo (secrets tests): a marker ``[[echo-key]]`` in the prompt (or ``echo_key=True`` for
every request) makes the server echo the bearer key it received everywhere it can: in the message
of every error answer (``"Incorrect API key provided: <key>"``), in an ``X-Echo-Key`` header, and in
200 answers, as prose, inside a JSON object quoted before the grade (``{"api_key": "<key>"}``) and
in the reason (``{"grade": N, "reason": "... <key>"}``). ``[[echo-key:HOW]]`` echoes a piece of the key in the same
places: ``tail24`` (its last 24 characters), ``head30``, ``middle`` (all but 6 at each end), ``split`` (its halves
on two lines), ``html_cut`` (HTML-escaped, cut short), ``json_cut`` (JSON-escaped, cut short).

Token counts: a marker ``[[usage=V]]`` reports the JSON value ``V`` as the answer's ``prompt_tokens`` (``-5``,
``1e30``, ``"12"``: what a broken provider may send).

Half an emoji: a marker ``[[half-emoji]]`` appends a lone UTF-16 surrogate (``\ud83d``, sent as its JSON escape)
to the answer's content, after the grade.

Failing endpoint (many-endpoints tests): :meth:`FakeOpenAIServer.fail` (or ``POST /_fail`` with
``{"status": 503}``) makes every later chat request that status (``0`` = back to normal); requests
answered so are counted in ``failed``.

``max_in_flight`` is the most POSTs the server was handling at once; ``order`` lists the pair keys
of the chat requests in arrival order. ``paid`` counts 200 answers (what a real provider would bill); ``clients`` counts chat requests by
the first word of their ``User-Agent`` (``AsyncOpenAI`` for litellm's OpenAI client, ``Python`` for
aiohttp). ``require_key`` makes every request
without ``Authorization: Bearer <require_key>`` a 401. The server never stores or logs the key.

Real providers' refusals (preflight tests, issue 25): with ``require_key`` a request without an
``Authorization`` header gets OpenAI's 401 "You didn't provide an API key..." and one with another key
its 401 ``invalid_api_key`` ("Incorrect API key provided: sk-abc***xyz..."), on ``GET /v1/models`` too.
``models=("gpt-4o-mini", ...)`` names the models served: ``GET /v1/models`` lists them, ``GET
/v1/models/<id>`` answers 200 or 404, and a chat request for another model gets OpenAI's 404
``model_not_found`` ("The model `x` does not exist or you do not have access to it."). The Anthropic
Messages API is served on ``POST /v1/messages`` (and ``GET /v1/models/<id>`` with an
``anthropic-version`` header): a wrong or missing ``x-api-key`` gets Anthropic's 401
``authentication_error`` ("invalid x-api-key"), an unknown model its 404 ``not_found_error``
("model: x"), else a ``message`` answer with the grade as above. ``stats()["probes"]`` counts the
GET requests on ``/models``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "ServerProcess", "pair_key", "spawn_server"]

_GRADE = re.compile(r"\[\[grade=(\d+)\]\]")
_USAGE = re.compile(r"\[\[usage=([^\]]+)\]\]")
_FAULTS = re.compile(r"\[\[faults=([^\]]*)\]\]")
_ECHO = "[[echo-key]]"
_ECHO_PIECE = re.compile(r"\[\[echo-key:(\w+)\]\]")


def _piece(key: str, how: str) -> str:
    """A piece of the key as a careless server may echo it (``[[echo-key:HOW]]``)."""
    import html

    half = len(key) // 2
    return {"tail24": key[-24:], "head30": key[:30], "middle": key[6:-6], "split": f"{key[:half]}\n{key[half:]}",
            "html_cut": html.escape(key)[:-3], "json_cut": json.dumps(key)[1:-4]}[how]
_HALF_EMOJI = "[[half-emoji]]"
_QUERY = re.compile(r"<<<QUERY ([0-9a-f]{16})>>>\n(.*?)\n<<<END QUERY \1>>>", re.S)
_PASSAGE = re.compile(r"<<<PASSAGE ([0-9a-f]{16})>>>\n(.*?)\n<<<END PASSAGE \1>>>", re.S)
_DECODER = json.JSONDecoder()
_SCHEMA_LEAD = "complies with the following schema as specified in JSON Schema:\n"
_FIX_LEAD = "The output string did not satisfy the constraints given in the prompt."
_INPUT_LEAD = "Now perform the same with the following input\ninput: "


def _first_user(messages: list[dict[str, Any]]) -> str:
    first = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    if isinstance(first, list):  # content parts
        first = "".join(part.get("text", "") for part in first if isinstance(part, dict))
    return first


def _unwrap_fix(prompt: str) -> tuple[str, int]:
    """The prompt a (nested) ragas ``FixOutputFormat`` request embeds, and the nesting depth."""
    depth = 0
    while prompt.startswith(_FIX_LEAD):
        start = prompt.find(_INPUT_LEAD)
        try:
            data, _ = _DECODER.raw_decode(prompt, start + len(_INPUT_LEAD))
            inner = data["prompt_value"]
        except (ValueError, KeyError, TypeError):
            break
        if not isinstance(inner, str):
            break
        prompt, depth = inner, depth + 1
    return prompt, depth


def _ragas_shape(prompt: str) -> tuple[str, int] | None:
    """``(key, top grade)`` of a ragas prompt's output schema, or None for other prompts."""
    i = prompt.find(_SCHEMA_LEAD)
    if i < 0:
        return None
    try:
        schema, _ = _DECODER.raw_decode(prompt, i + len(_SCHEMA_LEAD))
    except ValueError:
        return None
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "verdict" in props:
        return "verdict", 1
    if "rating" in props:
        return "rating", 2
    return None


def pair_key(messages: list[dict[str, Any]]) -> str:
    """The identity of a pair on the server: sha256 of the first user message, 16 hex (for a ragas
    output-fixer request: of the prompt it embeds)."""
    first, _ = _unwrap_fix(_first_user(messages))
    return hashlib.sha256(first.encode("utf-8")).hexdigest()[:16]


class _State:
    def __init__(self, latency: float, hang_seconds: float, require_key: str | None, max_requests: int,
                 echo_key: bool = False, models: tuple[str, ...] | None = None, grade_by: str = "prompt",
                 length_bonus: int | None = None, noise: float = 0.0, noise_seed: int = 0):
        self.latency = latency
        self.grade_by, self.length_bonus, self.noise, self.noise_seed = grade_by, length_bonus, noise, noise_seed
        self.models = models  # the model names served (None: any)
        self.probes = 0  # GET /models requests
        self.echo_key = echo_key
        self.failing = 0  # a status every chat request gets (0: none)
        self.stopped = False  # after stop(): requests on kept-alive connections are dropped too
        self.failed = 0
        self.hang_seconds = hang_seconds
        self.require_key = require_key
        self.max_requests = max_requests
        self.lock = threading.Lock()
        self.requests = 0
        self.paid = 0
        self.by_pair: dict[str, dict[str, int]] = {}
        self.clients: dict[str, int] = {}
        self.order: list[str] = []  # pair keys of the chat requests, in arrival order
        self.in_flight = 0
        self.max_in_flight = 0

    def grade(self, key: str, n: int, prompt: str, top: int) -> int:
        """The grade of the ``n``-th request of pair ``key`` without a marker (the module doc's judges)."""
        query = _QUERY.search(prompt) if self.grade_by == "query" else None
        passage = _PASSAGE.search(prompt) if self.length_bonus is not None else None
        base = hashlib.sha256((query.group(2) if query else key).encode()).hexdigest()
        grade = int(base, 16) % (top + (0 if passage else 1))
        if passage and len(passage.group(2)) > self.length_bonus:
            grade += 1
        if self.noise:
            draw = int(hashlib.sha256(f"{self.noise_seed}:{key}:{n}".encode()).hexdigest(), 16)
            if (draw % 1_000_000) / 1_000_000 < self.noise:
                grade = min(top, max(0, grade + (1 if (draw >> 64) % 2 else -1)))
        return grade

    def count(self, key: str, agent: str = "") -> int:
        with self.lock:
            self.requests += 1
            client = agent.split("/", 1)[0].strip() or "unknown"
            self.clients[client] = self.clients.get(client, 0) + 1
            self.order.append(key)
            row = self.by_pair.setdefault(key, {"requests": 0, "paid": 0, "faults": 0})
            row["requests"] += 1
            return row["requests"] - 1

    def mark(self, key: str, field: str) -> None:
        with self.lock:
            self.by_pair[key][field] += 1
            if field == "paid":
                self.paid += 1

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": self.requests, "paid": self.paid, "failed": self.failed, "probes": self.probes,
                    "clients": dict(self.clients),
                    "order": list(self.order), "max_in_flight": self.max_in_flight,
                    "by_pair": {k: dict(v) for k, v in self.by_pair.items()}}

    def reset(self) -> None:
        with self.lock:
            self.requests = self.paid = self.failed = self.probes = 0
            self.by_pair.clear()
            self.clients.clear()
            self.order.clear()
            self.max_in_flight = 0

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def _answer_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m.get("content") or "" for m in messages if isinstance(m.get("content"), str))


def _digit_logprobs(grade: int) -> dict[str, Any]:
    """OpenAI-shaped logprobs for ``{"grade": N, "reason": "fake judge"}``."""
    probs = {str(d): (0.7 if d == grade else 0.3 / 3) for d in range(4)} if 0 <= grade <= 3 else {str(grade): 1.0}
    top = sorted(probs.items(), key=lambda kv: -kv[1])
    top_logprobs = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in top]
    top_logprobs.append({"token": " ", "logprob": math.log(1e-4), "bytes": [32]})
    tokens = ['{"', "grade", '":', " ", str(grade), ',"', "reason", '":"', "fake", " judge", '"}']
    content = []
    for tok in tokens:
        if tok == str(grade):
            content.append({"token": tok, "logprob": math.log(probs[tok]), "bytes": list(tok.encode()),
                            "top_logprobs": top_logprobs})
        else:
            content.append({"token": tok, "logprob": -0.001, "bytes": list(tok.encode()),
                            "top_logprobs": [{"token": tok, "logprob": -0.001, "bytes": list(tok.encode())}]})
    return {"content": content}


def _split_logprobs(content: str, grade: int, top: int) -> dict[str, Any]:
    """OpenAI-shaped logprobs for ``content``: the grade digit (last occurrence) in a token of its own."""
    digit = str(grade)
    at = content.rfind(digit)
    probs = {str(d): (0.7 if d == grade else 0.3 / top) for d in range(top + 1)}
    top_logprobs = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                    for t, p in sorted(probs.items(), key=lambda kv: -kv[1])]
    out = []
    for tok in (content[:at], digit, content[at + 1:]):
        if not tok:
            continue
        if tok == digit:
            out.append({"token": tok, "logprob": math.log(0.7), "bytes": list(tok.encode()), "top_logprobs": top_logprobs})
        else:
            out.append({"token": tok, "logprob": -0.001, "bytes": list(tok.encode()),
                        "top_logprobs": [{"token": tok, "logprob": -0.001, "bytes": list(tok.encode())}]})
    return {"content": out}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    disable_nagle_algorithm = True  # headers and body go out as two writes: no Nagle/delayed-ACK stall (~40 ms)
    state: _State  # set on the subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet, and never log headers
        pass

    echo: str | None = None  # the key to echo in this request's answers (hostile mode), else None

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        if self.echo and status >= 300 and isinstance(body.get("error"), dict):
            body["error"]["message"] = f"{body['error'].get('message')} Incorrect API key provided: {self.echo}"
        if self.echo:
            headers = {**(headers or {}), "X-Echo-Key": " ".join(self.echo.split())}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _refused(self, model: str | None) -> bool:
        """Answer as the real provider refuses a wrong key or an unknown model; True when it did."""
        state = self.state
        anthropic = self.headers.get("anthropic-version") is not None or self.path.rstrip("/").endswith("/messages")
        if state.require_key is not None:
            given = self.headers.get("x-api-key") if anthropic else self.headers.get("Authorization")
            if anthropic and given != state.require_key:
                self._send(401, {"type": "error", "error": {"type": "authentication_error",
                                                            "message": "invalid x-api-key"}})
                return True
            if not anthropic and not given:
                self._send(401, {"error": {"message": "You didn't provide an API key. You need to provide your API key "
                                           "in an Authorization header using Bearer auth (i.e. Authorization: Bearer "
                                           "YOUR_KEY), or as the password field (i.e. with an empty username) in an "
                                           "HTTP Basic auth header.", "type": "invalid_request_error",
                                           "param": None, "code": None}})
                return True
            if not anthropic and given != f"Bearer {state.require_key}":
                key = given.partition(" ")[2]
                shown = f"{key[:3]}***{key[-4:]}" if len(key) > 8 else "***"
                self._send(401, {"error": {"message": f"Incorrect API key provided: {shown}. You can find your API key "
                                           "at https://platform.openai.com/account/api-keys.",
                                           "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})
                return True
        if model is not None and state.models is not None and model not in state.models:
            if anthropic:
                self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"}})
            else:
                self._send(404, {"error": {"message": f"The model `{model}` does not exist or you do not have access "
                                           "to it.", "type": "invalid_request_error", "param": None,
                                           "code": "model_not_found"}})
            return True
        return False

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.rstrip("/")
        if path in {"/_stats", "/v1/_stats"}:
            self._send(200, self.state.snapshot())
        elif path in {"/v1/models", "/models"} or path.startswith(("/v1/models/", "/models/")):
            with self.state.lock:
                self.state.probes += 1
            one = path.split("/models/", 1)[1] if "/models/" in path else None
            if self._refused(one):
                return
            if one is not None:
                self._send(200, {"id": one, "object": "model", "type": "model", "owned_by": "fake"})
            else:
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"}
                                                            for m in self.state.models or ()]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        if self.state.stopped:  # a dead server: no answer on a connection kept alive from before
            self._drop()
            return
        self.state.enter()
        try:
            self._post()
        finally:
            self.state.leave()

    def _post(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.rstrip("/")
        if path in {"/_reset", "/v1/_reset"}:
            self.state.reset()
            self._send(200, {"ok": True})
            return
        if path in {"/_fail", "/v1/_fail"}:
            self.state.failing = int(json.loads(raw or b"{}").get("status", 503))
            self._send(200, {"ok": True})
            return
        anthropic = path in {"/v1/messages", "/messages"}
        if path not in {"/v1/chat/completions", "/chat/completions"} and not anthropic:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(raw or b"{}")
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            self._send(400, {"error": {"message": "bad request body", "type": "invalid_request_error"}})
            return
        state = self.state
        if state.requests >= state.max_requests:
            self._send(503, {"error": {"message": "fake server request budget exhausted", "type": "server_error"}})
            return
        key = pair_key(messages)
        n = state.count(key, self.headers.get("User-Agent") or "")
        text = _answer_text(messages)
        auth = self.headers.get("Authorization") or ""
        self.echo = auth.partition(" ")[2] or auth if (state.echo_key or _ECHO in text) and auth else None
        piece = _ECHO_PIECE.search(text)
        if piece and auth:
            self.echo = _piece(auth.partition(" ")[2] or auth, piece.group(1))
        if state.failing:
            with state.lock:
                state.failed += 1
            if state.latency:
                time.sleep(state.latency)
            self._send(state.failing, {"error": {"message": "fake endpoint down", "type": "server_error"}})
            return
        if self._refused(body.get("model")):
            return
        match = _FAULTS.search(text)
        script = [f.strip() for f in match.group(1).split(";") if f.strip()] if match else []
        fault = script[n] if n < len(script) else None
        if state.latency:
            time.sleep(state.latency)
        if fault is not None and fault not in {"garbage", "offscale"}:
            state.mark(key, "faults")
            self._fault(fault)
            return
        root, depth = _unwrap_fix(_first_user(messages))
        shape = _ragas_shape(root)
        if fault == "garbage":
            content = "I think this passage is quite relevant, all things considered."
            grade = None
        else:
            found = _GRADE.search(text)
            top = 3 if shape is None else shape[1]
            if found:
                grade = int(found.group(1))
                if shape is not None:
                    grade = min(grade, top)
            else:
                grade = state.grade(key, n, root, top)
            if fault == "offscale":
                grade = 7
            if shape is None and self.echo:
                content = (f"Your key is {self.echo}. Request: {json.dumps({'api_key': self.echo})}\n"
                           + json.dumps({"grade": grade, "reason": f"fake judge saw key {self.echo}"}))
            elif shape is None:
                content = json.dumps({"grade": grade, "reason": "fake judge"})
            elif shape[0] == "verdict":
                content = json.dumps({"reason": "fake judge", "verdict": grade})
            else:
                content = json.dumps({"rating": grade})
            for _ in range(depth):
                content = json.dumps({"text": content})
        if _HALF_EMOJI in text:
            content += " and a half emoji \ud83d"  # a lone surrogate: sent as the JSON escape \ud83d
        prompt_tokens = max(1, len(text) // 4)
        lie = _USAGE.search(text)
        if lie:  # a provider reporting unbelievable token counts: [[usage=-5]], [[usage=1e30]], [[usage="12"]]
            prompt_tokens = json.loads(lie.group(1))
        completion_tokens = 12
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}
        if body.get("logprobs") and grade is not None:
            if shape is None and depth == 0 and self.echo:
                choice["logprobs"] = _split_logprobs(content, grade, 3)
            elif shape is None and depth == 0:
                choice["logprobs"] = _digit_logprobs(grade)
            else:
                choice["logprobs"] = _split_logprobs(content, grade, 3 if shape is None else shape[1])
        state.mark(key, "paid")
        if anthropic:
            self._send(200, {"id": f"msg_{key}_{n}", "type": "message", "role": "assistant",
                             "model": body.get("model", "fake"), "content": [{"type": "text", "text": content}],
                             "stop_reason": "end_turn", "stop_sequence": None,
                             "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens}})
            return
        self._send(200, {
            "id": f"chatcmpl-{key}-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"), "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens if not lie else None},
        })

    def _fault(self, fault: str) -> None:
        if fault == "drop":
            self._drop()
        elif fault == "hang":
            time.sleep(self.state.hang_seconds)
            self._drop()
        elif fault.startswith("429"):
            _, _, seconds = fault.partition(":")
            self._send(429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
                       {"Retry-After": seconds or "1"})
        elif fault == "context":
            self._send(400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, "
                                       "your messages resulted in 131072 tokens.", "type": "invalid_request_error",
                                       "param": "messages", "code": "context_length_exceeded"}})
        elif fault == "html":
            data = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        elif fault.isdigit():
            status = int(fault)
            self._send(status, {"error": {"message": f"fake error {status}", "type": "server_error"}})
        else:
            self._send(500, {"error": {"message": f"unknown fault {fault!r}", "type": "server_error"}})


class _Server(ThreadingHTTPServer):
    """A listen backlog of 1024, set before ``listen()`` runs in the constructor (the default, 5,
    drops the SYNs of a burst of new connections: the kernel retries them after 1 s, 3 s, ...)."""

    request_queue_size = 1024
    daemon_threads = True


class FakeOpenAIServer:
    """The fake server in a daemon thread of this process. Use as a context manager.

    ``latency``: seconds before every answer. ``hang_seconds``: how long a ``hang`` lasts.
    ``require_key``: expected bearer key (else 401, as OpenAI or Anthropic send it). ``models``: the model names
    served (else 404 as the providers send it; None: any). ``max_requests``: beyond it every request is
    a 503. ``lifetime``: the server shuts itself down after this many seconds. ``grade_by``, ``length_bonus``,
    ``noise``, ``noise_seed``: the judge's character (module doc).
    """

    def __init__(self, *, latency: float = 0.0, hang_seconds: float = 5.0, require_key: str | None = None,
                 max_requests: int = 100_000, lifetime: float = 600.0, port: int = 0, echo_key: bool = False,
                 models: tuple[str, ...] | None = None, grade_by: str = "prompt", length_bonus: int | None = None,
                 noise: float = 0.0, noise_seed: int = 0):
        self.state = _State(latency, hang_seconds, require_key, max_requests, echo_key,
                            None if models is None else tuple(models), grade_by, length_bonus, noise, noise_seed)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._httpd = _Server(("127.0.0.1", port), handler)
        self.port: int = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.lifetime = lifetime
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    def start(self) -> "FakeOpenAIServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop listening (new connections are refused) and drop requests on connections kept alive."""
        self.state.stopped = True
        if self._timer is not None:
            self._timer.cancel()
        self._httpd.shutdown()
        self._httpd.server_close()

    def stats(self) -> dict[str, Any]:
        return self.state.snapshot()

    def reset(self) -> None:
        self.state.reset()

    def fail(self, status: int = 503) -> None:
        """From now on every chat request gets ``status`` (0: answer normally again)."""
        self.state.failing = status

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@dataclass
class ServerProcess:
    """A fake server running in a child process (see :func:`spawn_server`)."""

    process: subprocess.Popen
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=10) as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        import urllib.request

        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/_reset", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=10):
            pass

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def spawn_server(*, latency: float = 0.0, hang_seconds: float = 5.0, lifetime: float = 600.0,
                 python: str | None = None) -> ServerProcess:
    """Start the fake server in a child process and wait until it listens."""
    proc = subprocess.Popen(
        [python or sys.executable, __file__, "--latency", str(latency), "--hang-seconds", str(hang_seconds),
         "--lifetime", str(lifetime)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return ServerProcess(proc, int(line.split()[1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible judge server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--hang-seconds", type=float, default=5.0)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--require-key", default=None)
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency=args.latency, hang_seconds=args.hang_seconds, require_key=args.require_key,
                              lifetime=args.lifetime, port=args.port)
    print(f"PORT {server.port}", flush=True)
    server.start()
    try:
        while server._thread is not None and server._thread.is_alive():
            server._thread.join(0.5)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
