"""A fake provider batch endpoint on 127.0.0.1: OpenAI's Files + Batch API and Anthropic's Message Batches.

Every request line is answered by a real :class:`FakeOpenAIServer` (tests/fakes/openai_server.py)
that this server owns and calls over HTTP, so grades, ``[[grade=N]]`` / ``[[faults=...]]`` markers
and unreadable answers (``garbage``) are exactly those of the chat fake. A line whose chat answer
is not a 200 becomes a per-line error (in OpenAI's error file; ``errored`` in Anthropic's results).

OpenAI routes: ``POST /v1/files`` (multipart, purpose=batch), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches`` (list, newest first, with
``metadata``), ``POST /v1/batches/{id}/cancel``. Anthropic routes: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

A batch stays ``in_progress`` for ``delay`` seconds after it was created and is then processed
(all of its lines, on the first status request after the delay). Batch-level faults: the first
``fail_batches`` batches end ``failed`` (no line answered, nothing billed); the next
``expire_batches`` end ``expired`` with only the first half of their lines answered (the rest in
the error file with code ``batch_expired``, as OpenAI does).

``stats()``: ``files``, ``batches`` (created), ``lines`` (request lines in created batches),
``billed`` (lines and direct calls answered with a 200), ``direct`` (``POST /v1/chat/completions``
calls, forwarded to the chat fake: the direct-call fallback), ``by_pair`` ({pair_key: lines submitted}),
``status_requests``. ``chat.stats()["by_pair"]`` counts every paid answer per pair, batch lines and direct calls
alike (the chat fake answers both).

Hostile provider (issue 24): the key the client sent (``Authorization: Bearer`` or ``x-api-key``) goes with every
line to the chat fake, so a ``[[echo-key]]`` marker in a prompt makes it echo the key in that line's answer or
error. ``mutate`` maps a route to ``f(value, key) -> value`` applied to what the fake would answer: ``"create"``
(the created batch object), ``"upload"`` (the uploaded file object), ``"status"`` (the batch object of a status
request, OpenAI's or Anthropic's view), ``"list"`` (the batch list), ``"output"`` (the bytes of an output, error or
results file); a function may return ``bytes`` (sent as they are), raise ``LookupError`` (a 404) or ``PermissionError(message)``
(a 401 with that message).
``status_fault`` = ``"500"`` or ``"html"`` answers every status request so (a 500, or a 200 HTML page).
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import re
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import importlib.util
import sys


def _chat_fake():
    name = "relgrade_fake_openai_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("openai_server.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _State:
    def __init__(self, delay: float, fail_batches: int, expire_batches: int, chat_url: str, require_key: str | None,
                 mutate: dict[str, Any] | None = None, status_fault: str | None = None):
        self.mutate = mutate or {}
        self.status_fault = status_fault
        self.delay = delay
        self.fail_left = fail_batches
        self.expire_left = expire_batches
        self.chat_url = chat_url
        self.require_key = require_key
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.stats = {"files": 0, "batches": 0, "lines": 0, "billed": 0, "status_requests": 0, "direct": 0}
        self.by_pair: dict[str, int] = {}
        self.n = 0

    def new_id(self, prefix: str) -> str:
        with self.lock:
            self.n += 1
            return f"{prefix}_{self.n:06d}{hashlib.sha256(str(self.n).encode()).hexdigest()[:8]}"

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {**self.stats, "by_pair": dict(self.by_pair)}


def _chat(state: _State, body: dict[str, Any], key: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", "User-Agent": "batch/1"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(state.chat_url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, {"error": {"message": f"HTTP {exc.code}"}}
    except (urllib.error.URLError, ConnectionError, ValueError) as exc:
        return 502, {"error": {"message": f"upstream: {exc}"}}


def _fate(state: _State) -> str:
    with state.lock:
        if state.fail_left > 0:
            state.fail_left -= 1
            return "failed"
        if state.expire_left > 0:
            state.expire_left -= 1
            return "expired"
        return "completed"


def _process(state: _State, batch: dict[str, Any]) -> None:
    """Answer the lines of a batch whose delay is over (called under the batch's own lock)."""
    fate = batch["_fate"]
    lines = batch["_lines"]
    now = int(time.time())
    if fate == "failed":
        batch.update(status="failed", failed_at=now,
                     errors={"object": "list", "data": [{"code": "server_error", "message": "fake batch failure",
                                                         "line": None, "param": None}]})
        batch["request_counts"] = {"total": len(lines), "completed": 0, "failed": len(lines)}
        return
    answer_n = len(lines) if fate == "completed" else len(lines) // 2
    out, err = [], []
    for n, line in enumerate(lines):
        cid = line["custom_id"]
        if n >= answer_n:
            err.append({"id": f"batch_req_{n}", "custom_id": cid, "response": None,
                        "error": {"code": "batch_expired", "message": "This request could not be executed before "
                                  "the completion window expired."}})
            continue
        status, body = _chat(state, line["body"], batch.get("_key"))
        row = {"id": f"batch_req_{n}", "custom_id": cid,
               "response": {"status_code": status, "request_id": f"req_{n}", "body": body}, "error": None}
        if status == 200:
            out.append(row)
            with state.lock:
                state.stats["billed"] += 1
        else:
            err.append(row)
    batch["_out"] = out
    batch["_err"] = err
    if batch["_kind"] == "openai":
        if out:
            fid = state.new_id("file")
            state.files[fid] = "".join(json.dumps(r) + "\n" for r in out).encode()
            batch["output_file_id"] = fid
        if err:
            fid = state.new_id("file")
            state.files[fid] = "".join(json.dumps(r) + "\n" for r in err).encode()
            batch["error_file_id"] = fid
    batch["status"] = fate
    batch[f"{fate}_at"] = now
    batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(err)}


def _advance(state: _State, batch: dict[str, Any]) -> None:
    with batch["_lock"]:
        if batch["status"] in {"validating", "in_progress"} and time.time() >= batch["_ready"]:
            _process(state, batch)
        elif batch["status"] == "validating":
            batch["status"] = "in_progress"


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _anthropic_view(batch: dict[str, Any], base: str) -> dict[str, Any]:
    done = batch["status"] not in {"validating", "in_progress"}
    counts = {"processing": 0 if done else len(batch["_lines"]), "succeeded": 0, "errored": 0, "canceled": 0,
              "expired": 0}
    if done:
        for row in batch.get("_out", []):
            counts["succeeded"] += 1
        for row in batch.get("_err", []):
            counts["expired" if row.get("error") else "errored"] += 1
        if batch["status"] == "failed":
            counts["errored"] = len(batch["_lines"])
    return {"id": batch["id"], "type": "message_batch", "processing_status": "ended" if done else "in_progress",
            "request_counts": counts, "created_at": batch["created_at"],
            "results_url": f"{base}/v1/messages/batches/{batch['id']}/results" if done else None}


def _to_chat(params: dict[str, Any]) -> dict[str, Any]:
    messages = []
    if params.get("system"):
        messages.append({"role": "system", "content": params["system"]})
    messages.extend(params.get("messages", []))
    return {"model": params.get("model"), "messages": messages, "max_tokens": params.get("max_tokens"),
            "temperature": params.get("temperature", 0.0)}


def _anthropic_result(row: dict[str, Any], model: str) -> dict[str, Any]:
    cid = row["custom_id"]
    if row.get("error"):
        return {"custom_id": cid, "result": {"type": "expired"}}
    resp = row["response"]
    if resp["status_code"] != 200:
        return {"custom_id": cid, "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "api_error", "message": str(resp["body"])}}}}
    body = resp["body"]
    usage = body.get("usage", {})
    return {"custom_id": cid, "result": {"type": "succeeded", "message": {
        "id": body.get("id"), "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": body["choices"][0]["message"]["content"]}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)}}}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: _State

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _key(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth.partition(" ")[2] or self.headers.get("x-api-key")

    def _hostile(self, route: str, value: Any) -> Any:
        """``value`` through the test's mutation of ``route`` (see the module doc)."""
        f = self.state.mutate.get(route)
        return value if f is None else f(value, self._key())

    def _answer(self, route: str, status: int, body: Any = None, raw: bytes | None = None) -> None:
        try:
            out = self._hostile(route, raw if raw is not None else body)
        except LookupError:
            return self._send(404, {"error": {"message": "No such File object"}})
        except PermissionError as exc:
            return self._send(401, {"error": {"message": str(exc), "type": "invalid_request_error"}})
        if isinstance(out, (bytes, bytearray)):
            return self._send(status, None, raw=bytes(out))
        return self._send(status, out)

    def _send(self, status: int, body: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if raw is None else "application/jsonl")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        key = self.state.require_key
        if key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {key}" or self.headers.get("x-api-key") == key:
            return True
        self._send(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}})
        return False

    def _base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        st = self.state
        if path in {"/_stats", "/v1/_stats"}:
            return self._send(200, st.snapshot())
        if not self._authorised():
            return None
        m = re.fullmatch(r"/v1/files/([^/]+)/content", path)
        if m:
            data = st.files.get(m.group(1))
            if data is None:
                return self._send(404, {"error": {"message": "no such file"}})
            return self._answer("output", 200, raw=data)
        m = re.fullmatch(r"/v1/batches/([^/]+)", path)
        if m:
            batch = st.batches.get(m.group(1))
            if batch is None or batch["_kind"] != "openai":
                return self._send(404, {"error": {"message": "no such batch"}})
            with st.lock:
                st.stats["status_requests"] += 1
            if st.status_fault:
                return self._fault()
            _advance(st, batch)
            return self._answer("status", 200, _public(batch))
        if path == "/v1/batches":
            data = [_public(b) for b in sorted(st.batches.values(), key=lambda b: b["_seq"], reverse=True)
                    if b["_kind"] == "openai"]
            return self._answer("list", 200, {"object": "list", "data": data[:100], "has_more": len(data) > 100})
        m = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results)?", path)
        if m:
            batch = st.batches.get(m.group(1))
            if batch is None or batch["_kind"] != "anthropic":
                return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": "no batch"}})
            if m.group(2):
                if batch["status"] in {"validating", "in_progress"}:
                    return self._send(400, {"type": "error", "error": {"message": "batch still processing"}})
                rows = [_anthropic_result(r, batch["_model"]) for r in batch.get("_out", []) + batch.get("_err", [])]
                if batch["status"] == "failed":
                    rows = [{"custom_id": ln["custom_id"], "result": {"type": "errored", "error": {
                        "type": "error", "error": {"type": "api_error", "message": "fake batch failure"}}}}
                            for ln in batch["_lines"]]
                return self._answer("output", 200, raw="".join(json.dumps(r) + "\n" for r in rows).encode())
            with st.lock:
                st.stats["status_requests"] += 1
            if st.status_fault:
                return self._fault()
            _advance(st, batch)
            return self._answer("status", 200, _anthropic_view(batch, self._base()))
        return self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        st = self.state
        if not self._authorised():
            return None
        if path == "/v1/files":
            return self._upload(raw)
        if path == "/v1/chat/completions":  # a direct call (the fallback): answered by the chat fake
            status, body = _chat(st, json.loads(raw or b"{}"))
            with st.lock:
                st.stats["direct"] += 1
                st.stats["billed"] += status == 200
            return self._send(status, body)
        if path == "/v1/batches":
            body = json.loads(raw or b"{}")
            data = st.files.get(body.get("input_file_id", ""))
            if data is None:
                return self._send(400, {"error": {"message": "input_file_id not found", "type": "invalid_request_error"}})
            lines = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
            return self._create("openai", lines, body.get("metadata") or {}, model="")
        m = re.fullmatch(r"/v1/batches/([^/]+)/cancel", path)
        if m and m.group(1) in st.batches:
            batch = st.batches[m.group(1)]
            with batch["_lock"]:
                if batch["status"] in {"validating", "in_progress"}:
                    batch["status"] = "cancelled"
            return self._send(200, _public(batch))
        if path == "/v1/messages/batches":
            body = json.loads(raw or b"{}")
            reqs = body.get("requests") or []
            lines = [{"custom_id": r["custom_id"], "body": _to_chat(r["params"])} for r in reqs]
            model = reqs[0]["params"].get("model", "") if reqs else ""
            return self._create("anthropic", lines, {}, model=model)
        return self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _fault(self) -> None:
        if self.state.status_fault == "html":
            return self._send(200, None, raw=b"<html><body><h1>Service temporarily unavailable</h1></body></html>")
        return self._send(500, {"error": {"message": "The server had an error while processing your request."}})

    def _upload(self, raw: bytes) -> None:
        ctype = self.headers.get("Content-Type", "")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
        fields: dict[str, bytes] = {}
        for part in msg.iter_parts():
            fields[part.get_param("name", header="content-disposition")] = part.get_payload(decode=True)
        if fields.get("purpose", b"").strip() != b"batch" or "file" not in fields:
            return self._send(400, {"error": {"message": "want purpose=batch and a file", "type": "invalid_request_error"}})
        fid = self.state.new_id("file")
        self.state.files[fid] = fields["file"]
        with self.state.lock:
            self.state.stats["files"] += 1
        return self._answer("upload", 200, {"id": fid, "object": "file", "bytes": len(fields["file"]),
                                            "purpose": "batch", "created_at": int(time.time()), "filename": "batch.jsonl"})

    def _create(self, kind: str, lines: list[dict[str, Any]], metadata: dict[str, Any], model: str) -> None:
        st = self.state
        fake = _chat_fake()
        bid = st.new_id("batch" if kind == "openai" else "msgbatch")
        batch = {"id": bid, "object": "batch", "endpoint": "/v1/chat/completions", "status": "validating",
                 "created_at": int(time.time()), "completion_window": "24h", "metadata": metadata,
                 "output_file_id": None, "error_file_id": None, "errors": None,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                 "_kind": kind, "_lines": lines, "_ready": time.time() + st.delay, "_fate": _fate(st),
                 "_lock": threading.Lock(), "_model": model, "_seq": len(st.batches), "_key": self._key()}
        with st.lock:
            st.batches[bid] = batch
            st.stats["batches"] += 1
            st.stats["lines"] += len(lines)
            for line in lines:
                key = fake.pair_key(line["body"]["messages"])
                st.by_pair[key] = st.by_pair.get(key, 0) + 1
        if kind == "openai":
            return self._answer("create", 200, _public(batch))
        return self._answer("create", 200, _anthropic_view(batch, self._base()))


class FakeBatchServer:
    """The fake batch endpoint (and the chat fake that answers its lines) in daemon threads. A context manager."""

    def __init__(self, *, delay: float = 0.5, fail_batches: int = 0, expire_batches: int = 0,
                 require_key: str | None = None, lifetime: float = 600.0, mutate: dict[str, Any] | None = None,
                 status_fault: str | None = None):
        self.chat = _chat_fake().FakeOpenAIServer(lifetime=lifetime)
        self.state = _State(delay, fail_batches, expire_batches, f"{self.chat.base_url}/chat/completions", require_key,
                            mutate, status_fault)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread: threading.Thread | None = None

    def start(self) -> "FakeBatchServer":
        self.chat.start()
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self.chat.stop()

    def stats(self) -> dict[str, Any]:
        return self.state.snapshot()

    def __enter__(self) -> "FakeBatchServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = ["FakeBatchServer"]
