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
from relgrade.judge._batch_checks import (
    BatchAnswerError, Results, batch_object, check_counts, check_id, check_time, custom_id, line_error, obj,
    optional_id, read_jsonl, text,
)
from relgrade.judge._prices import usage_tokens

_STATES = {"validating": "running", "in_progress": "running", "finalizing": "running", "cancelling": "running",
           "completed": "completed", "failed": "failed", "expired": "expired", "cancelled": "cancelled"}


class OpenAIBatches:
    provider = "openai"

    def __init__(self, model: str, *, api_base: str | None, api_key: str | None, body: dict[str, Any],
                 secrets: tuple[str, ...] = (), client: dict[str, Any] | None = None):
        self.model_name = model.split("/", 1)[1] if "/" in model else model
        self.base = (api_base or "https://api.openai.com/v1").rstrip("/")
        self.body = body  # temperature, max_tokens, logprobs ...
        self.secrets = secrets
        headers = {"User-Agent": "relgrade-batch"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.http = JsonClient(headers, secrets=secrets, **(client or {}))

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

        uploaded = obj(await self.http.request("POST", f"{self.base}/files", data=form), "the uploaded file")
        file_id = check_id(uploaded.get("id"), "the uploaded file's id")
        batch = obj(await self.http.request("POST", f"{self.base}/batches", json_body={
            "input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h",
            "metadata": {"relgrade_local_id": local_id}}), "the created batch")
        return check_id(batch.get("id"), "the created batch's id")

    async def find(self, local_id: str) -> str | None:
        try:
            listing = obj(await self.http.request("GET", f"{self.base}/batches?limit=100"), "the batch list")
        except BatchAPIError:  # no listing: the row is given up by its age instead (see _batch.recover)
            return None
        data = listing.get("data")
        for b in data if isinstance(data, list) else []:
            meta = b.get("metadata") if isinstance(b, dict) else None
            if isinstance(meta, dict) and meta.get("relgrade_local_id") == local_id:
                return check_id(b.get("id"), "a listed batch's id")
        return None

    async def status(self, batch_id: str) -> BatchState:
        b, status = batch_object(await self.http.request("GET", f"{self.base}/batches/{check_id(batch_id, 'the id')}"),
                                 batch_id, "status", _STATES)
        errors = b.get("errors")
        data = obj(errors, "its errors").get("data") if errors is not None else None
        if data is not None and not isinstance(data, list):
            raise BatchAnswerError(f"batch {batch_id}: errors.data is not a list")
        detail = "; ".join(text(e.get("message") if isinstance(e, dict) else e) or "?" for e in data or []) or None
        ended = next((b.get(k) for k in ("completed_at", "failed_at", "expired_at", "cancelled_at") if b.get(k)), None)
        return BatchState(batch_id, _STATES[status], check_counts(b.get("request_counts")),
                          optional_id(b.get("output_file_id"), "its output_file_id"),
                          optional_id(b.get("error_file_id"), "its error_file_id"), None, text(detail),
                          check_time(b.get("created_at"), "its created_at"), check_time(ended, "its end time"))

    async def results(self, state: BatchState) -> Results:
        out = Results()
        for fid, what in ((state.output_file_id, "output file"), (state.error_file_id, "error file")):
            if not fid:
                continue
            raw = await self.http.request("GET", f"{self.base}/files/{check_id(fid, what)}/content", raw=True)
            rows, problems = read_jsonl(raw, f"{what} {fid}", self.secrets)
            out.problems += problems
            for number, row in rows:
                cid = custom_id(row)
                if cid is None:
                    out.problems.append(f"{what} {fid} line {number}: no custom_id")
                else:
                    out.lines.append(_read_line(cid, row, self.secrets))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()


def _read_line(cid: str, row: dict[str, Any], secrets: tuple[str, ...]) -> BatchLine:
    """One line of OpenAI's output or error file: an answer, or a line error (never a grade from a malformed line)."""
    err, resp = row.get("error"), row.get("response")
    if err is not None:
        why = f"{text(err.get('code'))}: {text(err.get('message'))}" if isinstance(err, dict) else text(err)
        return line_error(cid, why or "error", secrets)
    if not isinstance(resp, dict):
        return line_error(cid, f"malformed line: 'response' is a {type(resp).__name__}, not an object")
    status, body = resp.get("status_code"), resp.get("body")
    if status != 200 or isinstance(status, bool):
        message = body.get("error") if isinstance(body, dict) else None
        message = message.get("message") if isinstance(message, dict) else message
        return line_error(cid, f"HTTP {text(status, 20)}: {text(message or body, 200)}", secrets)
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(content, (str, type(None))):
        what = type(content).__name__ if isinstance(message, dict) else "missing"
        return line_error(cid, f"malformed line: not a chat completion (message content {what})")
    logprobs = choice.get("logprobs")
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return BatchLine(cid, content or "", logprobs if isinstance(logprobs, dict) else None,
                     usage_tokens(usage.get("prompt_tokens")), usage_tokens(usage.get("completion_tokens")))


__all__ = ["OpenAIBatches"]
