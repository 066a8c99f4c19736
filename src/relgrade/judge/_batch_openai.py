"""OpenAI's Batch API (and OpenAI-compatible servers that implement it) over aiohttp.

``POST /v1/files`` (multipart, ``purpose=batch``, a JSONL of ``{custom_id, method, url, body}``
lines), ``POST /v1/batches`` (``input_file_id``, ``endpoint=/v1/chat/completions``,
``completion_window=24h``, ``metadata={"relgrade_local_id": ...}``), ``GET /v1/batches/{id}``,
``GET /v1/files/{id}/content`` for the output and error files, ``GET /v1/batches`` to find a batch
by its metadata. Reference: https://platform.openai.com/docs/guides/batch . litellm
1.110's ``acreate_file`` / ``acreate_batch`` cover these routes through the openai SDK, but its
``create_batch`` has no Anthropic path (only ``retrieve_batch`` knows Anthropic), so relgrade keeps
one small aiohttp adapter per provider: the same retries and errors for both, no litellm import on
this path, and a fake endpoint that tests every route.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from relgrade.judge._batch_api import BatchAPIError, BatchLine, BatchRequest, BatchState, JsonClient

_STATES = {"validating": "running", "in_progress": "running", "finalizing": "running", "cancelling": "running",
           "completed": "completed", "failed": "failed", "expired": "expired", "cancelled": "cancelled"}


class OpenAIBatches:
    provider = "openai"

    def __init__(self, model: str, *, api_base: str | None, api_key: str | None, body: dict[str, Any]):
        self.model_name = model.split("/", 1)[1] if "/" in model else model
        self.base = (api_base or "https://api.openai.com/v1").rstrip("/")
        self.body = body  # temperature, max_tokens, logprobs ...
        headers = {"User-Agent": "relgrade-batch"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.http = JsonClient(headers)

    def _line(self, req: BatchRequest) -> str:
        body = {"model": self.model_name, "messages": req.messages, **self.body}
        if req.seed:
            body["seed"] = req.seed
        return json.dumps({"custom_id": req.custom_id, "method": "POST", "url": "/v1/chat/completions",
                           "body": body}, ensure_ascii=False)

    async def submit(self, requests: Sequence[BatchRequest], local_id: str) -> str:
        import aiohttp

        blob = ("\n".join(self._line(r) for r in requests) + "\n").encode("utf-8")

        def form():
            data = aiohttp.FormData()
            data.add_field("purpose", "batch")
            data.add_field("file", blob, filename=f"relgrade-{local_id}.jsonl", content_type="application/jsonl")
            return data

        uploaded = await self.http.request("POST", f"{self.base}/files", data=form)
        batch = await self.http.request("POST", f"{self.base}/batches", json_body={
            "input_file_id": uploaded["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "metadata": {"relgrade_local_id": local_id}})
        return batch["id"]

    async def find(self, local_id: str) -> str | None:
        try:
            listing = await self.http.request("GET", f"{self.base}/batches?limit=100")
        except BatchAPIError:
            return None
        for b in listing.get("data", []):
            if (b.get("metadata") or {}).get("relgrade_local_id") == local_id:
                return b["id"]
        return None

    async def status(self, batch_id: str) -> BatchState:
        b = await self.http.request("GET", f"{self.base}/batches/{batch_id}")
        state = _STATES.get(b.get("status"), "running")
        errors = (b.get("errors") or {}).get("data") or []
        detail = "; ".join(str(e.get("message")) for e in errors) or None
        ended = b.get("completed_at") or b.get("failed_at") or b.get("expired_at") or b.get("cancelled_at")
        return BatchState(batch_id, state, dict(b.get("request_counts") or {}), b.get("output_file_id"),
                          b.get("error_file_id"), None, detail, b.get("created_at"), ended)

    async def results(self, state: BatchState) -> list[BatchLine]:
        out: list[BatchLine] = []
        for fid in (state.output_file_id, state.error_file_id):
            if not fid:
                continue
            raw = await self.http.request("GET", f"{self.base}/files/{fid}/content", raw=True)
            for text in raw.decode("utf-8").splitlines():
                if text.strip():
                    out.append(_read_line(json.loads(text)))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()


def _read_line(row: dict[str, Any]) -> BatchLine:
    cid = str(row.get("custom_id"))
    resp = row.get("response") or {}
    err = row.get("error")
    if err or resp.get("status_code") != 200:
        if err:
            why = f"{err.get('code')}: {err.get('message')}"
        else:
            body = resp.get("body") or {}
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            why = f"HTTP {resp.get('status_code')}: {message or body}"
        return BatchLine(cid, None, error=str(why)[:300])
    body = resp.get("body") or {}
    try:
        choice = body["choices"][0]
        content = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError):
        return BatchLine(cid, None, error=f"not a chat completion: {str(body)[:200]}")
    usage = body.get("usage") or {}
    return BatchLine(cid, content, choice.get("logprobs"), int(usage.get("prompt_tokens") or 0),
                     int(usage.get("completion_tokens") or 0))


__all__ = ["OpenAIBatches"]
