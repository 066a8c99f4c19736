"""Anthropic's Message Batches over aiohttp.

``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params": {model, max_tokens,
messages, system?, temperature}}]}``, ``GET /v1/messages/batches/{id}`` (``processing_status``
``in_progress`` / ``canceling`` / ``ended``, ``request_counts``, ``results_url``), and the results
JSONL at ``results_url`` (one ``{"custom_id", "result": {"type": "succeeded" | "errored" |
"canceled" | "expired", "message": ...}}`` per request). Headers ``x-api-key`` and
``anthropic-version: 2023-06-01``. Reference: https://docs.anthropic.com/en/docs/build-with-claude/batch-processing .
No logprobs (no grade distribution). A batch carries no metadata, so :meth:`find` cannot recover a
batch created just before a crash (that one window may pay twice; see the README).
"""

from __future__ import annotations

from typing import Any, Sequence

from relgrade.judge._batch_api import BatchLine, BatchRequest, BatchState, JsonClient
from relgrade.judge._batch_checks import (
    BatchAnswerError, Results, batch_object, check_counts, check_id, custom_id, line_error, obj, read_jsonl, text,
)
from relgrade.judge._prices import usage_tokens

_PROCESSING = ("in_progress", "canceling", "ended")


class AnthropicBatches:
    provider = "anthropic"

    def __init__(self, model: str, *, api_base: str | None, api_key: str | None, body: dict[str, Any],
                 secrets: tuple[str, ...] = (), client: dict[str, Any] | None = None):
        self.model_name = model.split("/", 1)[1] if "/" in model else model
        self.base = (api_base or "https://api.anthropic.com/v1").rstrip("/")
        self.body = {k: v for k, v in body.items() if k in {"temperature", "max_tokens"}}
        self.secrets = secrets
        headers = {"anthropic-version": "2023-06-01", "User-Agent": "relgrade-batch"}
        if api_key:
            headers["x-api-key"] = api_key
        self.http = JsonClient(headers, secrets=secrets, **(client or {}))

    def _params(self, req: BatchRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in req.messages if m["role"] == "system")
        params: dict[str, Any] = {"model": self.model_name, **self.body,
                                  "messages": [m for m in req.messages if m["role"] != "system"]}
        if system:
            params["system"] = system
        return params

    async def submit(self, requests: Sequence[BatchRequest], local_id: str) -> str:
        body = {"requests": [{"custom_id": r.custom_id, "params": self._params(r)} for r in requests]}
        batch = obj(await self.http.request("POST", f"{self.base}/messages/batches", json_body=body), "the created batch")
        return check_id(batch.get("id"), "the created batch's id")

    async def find(self, local_id: str) -> str | None:
        return None

    async def status(self, batch_id: str) -> BatchState:
        b, processing = batch_object(await self.http.request(
            "GET", f"{self.base}/messages/batches/{check_id(batch_id, 'the id')}"), batch_id, "processing_status", _PROCESSING)
        counts = check_counts(b.get("request_counts"))
        if processing != "ended":
            return BatchState(batch_id, "running", counts)
        state = "completed" if counts.get("succeeded", 0) or not counts.get("expired") else "expired"
        return BatchState(batch_id, state, counts, results_url=self._results_url(b.get("results_url"), batch_id))

    def _results_url(self, url: Any, batch_id: str) -> str | None:
        """The results URL, only on the API's own origin: the key goes with the request (never to another host)."""
        if url is None:
            return None
        origin = "/".join(self.base.split("/", 3)[:3]) + "/"
        if not isinstance(url, str) or not url.startswith(origin) or any(c.isspace() for c in url):
            raise BatchAnswerError(f"batch {batch_id}: results_url {text(url, 80)!r} is not on {origin} (the API key "
                                   "is never sent to another host)")
        return url

    async def results(self, state: BatchState) -> Results:
        out = Results()
        if not state.results_url:
            return out
        raw = await self.http.request("GET", state.results_url, raw=True)
        rows, out.problems = read_jsonl(raw, f"results of {state.batch_id}", self.secrets)
        for number, row in rows:
            cid = custom_id(row)
            if cid is None:
                out.problems.append(f"results of {state.batch_id} line {number}: no custom_id")
            else:
                out.lines.append(_read_result(cid, row.get("result"), self.secrets))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()


def _read_result(cid: str, result: Any, secrets: tuple[str, ...]) -> BatchLine:
    """One result line: an answer, or a line error (never a grade from a malformed line)."""
    if not isinstance(result, dict):
        return line_error(cid, f"malformed line: 'result' is a {type(result).__name__}, not an object")
    kind = result.get("type")
    if kind != "succeeded":
        return line_error(cid, f"{text(kind, 40)}: {text(result.get('error'), 200)}", secrets)
    msg = result.get("message")
    parts = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return line_error(cid, "malformed line: message.content is not a list of content blocks")
    texts = [p.get("text") for p in parts if p.get("type") == "text"]
    if not all(isinstance(t, str) for t in texts):
        return line_error(cid, "malformed line: a text block whose text is not a string")
    usage = msg.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return BatchLine(cid, "".join(texts), None, usage_tokens(usage.get("input_tokens")),
                     usage_tokens(usage.get("output_tokens")))


__all__ = ["AnthropicBatches"]
