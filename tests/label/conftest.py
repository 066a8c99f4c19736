"""A real ``relgrade label`` process on 127.0.0.1 for the HTTP and browser tests."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest


class LabelServer:
    def __init__(self, items: Path, *args: str):
        self.items = items
        self.store = Path(str(items) + ".labels.sqlite")
        cmd = [sys.executable, "-m", "relgrade.cli", "label", str(items), "--port", "0", "--no-browser", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        if not first or not first[0].strip():
            self.stop()
            raise RuntimeError(f"relgrade label printed no URL; stderr: {self.proc.stderr.read()}")
        self.url = first[0].strip()
        self.base, _, self.token = self.url.partition("/?token=")

    def request(self, path: str, body: dict | None = None, *, token: str | None = "header", headers: dict | None = None):
        """(status, parsed JSON or text) for ``path``; token 'header' sends it as X-Relgrade-Token."""
        hdrs = dict(headers or {})
        if token == "header":
            hdrs["X-Relgrade-Token"] = self.token
        elif token is not None:
            hdrs["X-Relgrade-Token"] = token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, headers=hdrs, method="POST" if data else "GET")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, raw, ctype = resp.status, resp.read(), resp.headers.get("content-type", "")
        except urllib.error.HTTPError as err:
            status, raw, ctype = err.code, err.read(), err.headers.get("content-type", "")
        text = raw.decode()
        return status, (json.loads(text) if "json" in ctype else text)

    def stop(self) -> str:
        """Stop with Ctrl-C (SIGINT) and return what it printed on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.stderr.read()


@pytest.fixture
def label_server():
    started: list[LabelServer] = []

    def start(items: Path, *args: str) -> LabelServer:
        server = LabelServer(items, *args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def make_items(tmp_path: Path):
    """Write ``rows`` as a JSONL items file in tmp_path and return its path."""

    def make(rows: list[dict], name: str = "items.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    return make


@pytest.fixture
def items_file(make_items) -> Path:
    rows = [
        {"query_id": f"q{i // 3}", "query": f"question number {i // 3} about topic {i // 3}?",
         "doc_id": f"d{i}", "text": f"Passage {i}: some text about topic {i // 3}.", "judge_grade": i % 4, "grade": ""}
        for i in range(7)
    ]
    return make_items(rows)
