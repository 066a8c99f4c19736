"""The labeling web app: a Starlette app serving one static page and a four-route JSON API.

Security model (the page runs on 127.0.0.1 and shows untrusted chunk text):

* every request, static assets and API alike, must carry the session token (``?token=`` or the
  ``X-Relgrade-Token`` header), compared in constant time (:func:`hmac.compare_digest`); anything
  else gets 403. Only ``Host: 127.0.0.1`` / ``localhost`` is served (no DNS rebinding).
* the page inserts all text with ``textContent``, and every response carries a strict
  Content-Security-Policy (no inline script, nothing from other origins), so a chunk holding
  ``<script>`` is shown as text and could not run even if it reached the DOM as markup.
* a POST whose ``Origin`` is not this server (``http://`` + the Host it was sent to) gets 403: a page
  on another origin cannot make the annotator's browser write labels (a request without ``Origin``,
  e.g. from a script, still needs the token).
* request bodies are capped at :data:`MAX_BODY` bytes: a larger ``Content-Length`` gets 413 before
  anything is read, and a chunked body is read only up to the cap (never held whole in memory).
  JSON too deeply nested to parse is a 400, like any other malformed body.
* the judge's grade is never sent to the page unless ``show_judge`` is set (no anchoring).
"""

from __future__ import annotations

import hmac
import html
from importlib import resources
from typing import Any, Sequence
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from relgrade.label._items import Item
from relgrade.label._rubric import RUBRIC
from relgrade.label._store import LabelStore

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
]
_STATIC = {"app.js": "text/javascript", "app.css": "text/css", "favicon.svg": "image/svg+xml"}
MAX_NOTE = 2000
MAX_NAME = 80
MAX_BODY = 64 * 1024  # a label with a 2,000-character note is < 10 KiB
_UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}


class _Guard:
    """ASGI middleware: refuse requests without the token or with a foreign Host; add security headers."""

    def __init__(self, app: Any, token: str):
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"x-relgrade-token") or parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0].encode()
        host = headers.get(b"host", b"").decode("latin-1").rsplit(":", 1)[0]

        async def secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        if host not in {"127.0.0.1", "localhost"}:
            return await Response("unknown host; open the URL relgrade printed\n", 403, media_type="text/plain")(scope, receive, secured)
        if not hmac.compare_digest(given, self.token):
            return await Response("missing or wrong token; open the full URL relgrade printed\n", 403, media_type="text/plain")(scope, receive, secured)
        if scope.get("method") in _UNSAFE:
            origin = headers.get(b"origin")
            if origin is not None and origin != b"http://" + headers.get(b"host", b""):
                return await Response("cross-origin request refused; use the page relgrade printed\n", 403,
                                      media_type="text/plain")(scope, receive, secured)
        too_large = Response(f"request body over {MAX_BODY} bytes\n", 413, media_type="text/plain")
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return await too_large(scope, receive, secured)
        if scope.get("method") in _UNSAFE:
            body = await _read_capped(receive)
            if body is None:
                return await too_large(scope, receive, secured)
            receive = _replay(body)
        await self.app(scope, receive, secured)


async def _read_capped(receive: Any) -> bytes | None:
    """The request body, or None as soon as it exceeds :data:`MAX_BODY` (the rest is never read)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Any:
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def create_app(
    items: Sequence[Item], store: LabelStore, *, token: str, annotator: str = "", show_judge: bool = False
) -> Starlette:
    """The labeling app for ``items``, writing to ``store``; ``annotator`` is the name the page starts with."""
    if not token:
        raise ValueError("token must be a non-empty secret")
    static = resources.files("relgrade.label") / "static"
    assets = {name: (static / name).read_bytes() for name in _STATIC}
    page = (static / "index.html").read_text(encoding="utf-8").replace("__TOKEN__", html.escape(token, quote=True))
    by_key = {item.key: item for item in items}
    payload = {
        "annotator": annotator,
        "show_judge": bool(show_judge),
        "rubric": [{"grade": lv.grade, "name": lv.name, "meaning": lv.meaning} for lv in RUBRIC],
        "items": [
            {"query_id": it.query_id, "query": it.query, "doc_id": it.doc_id, "text": it.text,
             **({"judge_grade": it.judge_grade} if show_judge else {})}
            for it in items
        ],
    }

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return Response("not found\n", 404, media_type="text/plain")
        return Response(assets[name], media_type=_STATIC[name])

    async def session(request: Request) -> Response:
        return JSONResponse(payload)

    async def labels(request: Request) -> Response:
        name, error = _annotator(request.query_params.get("annotator"))
        if error:
            return _bad(error)
        return JSONResponse({"labels": [lab.to_dict() for lab in store.labels(name)]})

    async def give(request: Request) -> Response:
        body = await _json(request)
        if body is None:
            return _bad("send a JSON object")
        name, error = _annotator(body.get("annotator"))
        if error:
            return _bad(error)
        key = (str(body.get("query_id", "")), str(body.get("doc_id", "")))
        if key not in by_key:
            return _bad(f"unknown pair {key}; it is not in the items file", 404)
        grade = body.get("grade")
        if grade is not None and (isinstance(grade, bool) or grade not in (0, 1, 2, 3)):
            return _bad("grade must be 0, 1, 2, 3, or null to skip")
        note = body.get("note") or ""
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            return _bad(f"note must be text of at most {MAX_NOTE} characters")
        label = store.put(key[0], key[1], name, None if grade is None else int(grade), note=note.strip(),
                          text_sha256=by_key[key].text_sha256)
        return JSONResponse({"label": label.to_dict()})

    async def undo(request: Request) -> Response:
        body = await _json(request)
        if body is None:
            return _bad("send a JSON object")
        name, error = _annotator(body.get("annotator"))
        if error:
            return _bad(error)
        label = store.undo(name)
        return JSONResponse({"label": None if label is None else label.to_dict()})

    routes = [
        Route("/", index),
        Route("/static/{name}", asset),
        Route("/api/session", session),
        Route("/api/labels", labels),
        Route("/api/label", give, methods=["POST"]),
        Route("/api/undo", undo, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(_Guard, token=token)
    return app


def _annotator(value: Any) -> tuple[str, str]:
    name = " ".join(str(value or "").split())
    if not name:
        return "", "annotator name is required"
    if len(name) > MAX_NAME:
        return "", f"annotator name must be at most {MAX_NAME} characters"
    return name, ""


async def _json(request: Request) -> dict | None:
    from relgrade.io._text import has_lone_surrogate

    try:
        body = await request.json()
    except (ValueError, RecursionError):  # malformed, not UTF-8, or nested too deep to parse
        return None
    if has_lone_surrogate(body):  # "\ud800": not text, it could not be stored (a note, a name)
        return None
    return body if isinstance(body, dict) else None


def _bad(message: str, status: int = 400) -> Response:
    return JSONResponse({"error": message}, status)
