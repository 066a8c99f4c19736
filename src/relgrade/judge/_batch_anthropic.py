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

import json
from typing import Any, Sequence

from relgrade.judge._batch_api import BatchLine, BatchRequest, BatchState, JsonClient


class AnthropicBatches:
    provider = "anthropic"

    def __init__(self, model: str, *, api_base: str | None, api_key: str | None, body: dict[str, Any]):
        self.model_name = model.split("/", 1)[1] if "/" in model else model
        self.base = (api_base or "https://api.anthropic.com/v1").rstrip("/")
        self.body = {k: v for k, v in body.items() if k in {"temperature", "max_tokens"}}
        headers = {"anthropic-version": "2023-06-01", "User-Agent": "relgrade-batch"}
        if api_key:
            headers["x-api-key"] = api_key
        self.http = JsonClient(headers)

    def _params(self, req: BatchRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in req.messages if m["role"] == "system")
        params: dict[str, Any] = {"model": self.model_name, **self.body,
                                  "messages": [m for m in req.messages if m["role"] != "system"]}
        if system:
            params["system"] = system
        return params

    async def submit(self, requests: Sequence[BatchRequest], local_id: str) -> str:
        body = {"requests": [{"custom_id": r.custom_id, "params": self._params(r)} for r in requests]}
        batch = await self.http.request("POST", f"{self.base}/messages/batches", json_body=body)
        return batch["id"]

    async def find(self, local_id: str) -> str | None:
        return None

    async def status(self, batch_id: str) -> BatchState:
        b = await self.http.request("GET", f"{self.base}/messages/batches/{batch_id}")
        counts = dict(b.get("request_counts") or {})
        if b.get("processing_status") != "ended":
            return BatchState(batch_id, "running", counts)
        answered = counts.get("succeeded", 0)
        state = "completed" if answered or not counts.get("expired") else "expired"
        return BatchState(batch_id, state, counts, results_url=b.get("results_url"))

    async def results(self, state: BatchState) -> list[BatchLine]:
        if not state.results_url:
            return []
        raw = await self.http.request("GET", state.results_url, raw=True)
        out = []
        for text in raw.decode("utf-8").splitlines():
            if not text.strip():
                continue
            row = json.loads(text)
            cid, result = str(row.get("custom_id")), row.get("result") or {}
            if result.get("type") != "succeeded":
                out.append(BatchLine(cid, None, error=f"{result.get('type')}: {str(result.get('error'))[:200]}"))
                continue
            msg = result.get("message") or {}
            content = "".join(p.get("text", "") for p in msg.get("content") or [] if p.get("type") == "text")
            usage = msg.get("usage") or {}
            out.append(BatchLine(cid, content, None, int(usage.get("input_tokens") or 0),
                                 int(usage.get("output_tokens") or 0)))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()


__all__ = ["AnthropicBatches"]
