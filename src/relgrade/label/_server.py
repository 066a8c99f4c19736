"""Serving the labeling app on 127.0.0.1 with uvicorn: bind first, then print the URL, then serve."""

from __future__ import annotations

import secrets
import socket
import threading
from typing import Any, Callable

from relgrade._errors import InputError

HOST = "127.0.0.1"


def new_token() -> str:
    """A fresh session secret (24 random bytes, URL-safe base64)."""
    return secrets.token_urlsafe(24)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0 picks a free port); a busy port is an InputError."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port} is out of range; use 1-65535, or 0 for a free port")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {HOST}:{port} ({exc.strerror}); pass another --port, or --port 0 for a free one") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def url_for(sock: socket.socket, token: str) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}/?token={token}"


def serve(app: Any, sock: socket.socket, *, on_started: Callable[[], None] | None = None) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C / SIGTERM. No access log: URLs carry the token."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    server = uvicorn.Server(config)
    if on_started is not None:
        def wait() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                on_started()

        threading.Thread(target=wait, daemon=True).start()
    server.run(sockets=[sock])
