"""Hardening of the labeling server (issue 15), against a real ``relgrade label`` process on 127.0.0.1:
a body limit (413, a 200 MB body never read into memory), an Origin check on POST, deep JSON -> 400."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
from urllib.parse import urlsplit

from relgrade.label._app import MAX_BODY

LABEL = {"query_id": "q0", "doc_id": "d0", "annotator": "alice", "grade": 2}


def _labels(server) -> int:
    if not server.store.exists():
        return 0
    with sqlite3.connect(server.store) as db:
        return db.execute("SELECT count(*) FROM labels WHERE grade IS NOT NULL").fetchone()[0]


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def _read_response(sock: socket.socket) -> str:
    """One HTTP response (head and Content-Length body), however the server splits its writes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data.decode("latin-1")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return (head + b"\r\n\r\n" + body).decode("latin-1")


def _post_raw(server, body: bytes, headers: dict) -> tuple[int, str]:
    parts = urlsplit(server.base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("POST", "/api/label", body=body, headers={"X-Relgrade-Token": server.token,
                                                           "Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    out = resp.status, resp.read().decode()
    conn.close()
    return out


def test_a_declared_200_mb_body_gets_413_before_it_is_sent(label_server, items_file):
    server = label_server(items_file)
    parts = urlsplit(server.base)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall((f"POST /api/label HTTP/1.1\r\nHost: {parts.netloc}\r\nX-Relgrade-Token: {server.token}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {200 * 1024 * 1024}\r\n\r\n").encode()
                     + b'{"query_id": "')
        answer = _read_response(sock)  # answered without waiting for the 200 MB
    assert answer.startswith("HTTP/1.1 413"), answer
    assert f"request body over {MAX_BODY} bytes" in answer
    assert server.request("/api/label", LABEL)[0] == 200  # the server is still fine


def test_a_chunked_200_mb_body_is_cut_off_at_the_limit_not_read_into_memory(label_server, items_file):
    server = label_server(items_file)
    parts = urlsplit(server.base)
    before = _rss_kib(server.proc.pid)
    chunk = b"x" * (1024 * 1024)
    sent, answer = 0, ""
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall((f"POST /api/label HTTP/1.1\r\nHost: {parts.netloc}\r\nX-Relgrade-Token: {server.token}\r\n"
                      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
        sock.settimeout(0.05)
        try:
            while sent < 200 * 1024 * 1024:
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
                try:
                    answer = sock.recv(4096).decode("latin-1")
                    if answer:
                        break
                except socket.timeout:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            pass
        if not answer:
            sock.settimeout(30)
            try:
                answer = sock.recv(4096).decode("latin-1")
            except ConnectionResetError:
                answer = ""
    assert answer.startswith("HTTP/1.1 413"), (answer, sent)
    assert sent < 200 * 1024 * 1024  # the server stopped the upload well before the end
    assert _rss_kib(server.proc.pid) - before < 50 * 1024  # never held the body
    assert _labels(server) == 0


def test_a_body_just_over_the_limit_gets_413_and_one_under_it_is_read(label_server, items_file):
    server = label_server(items_file)
    note_over = json.dumps({**LABEL, "note": "n" * MAX_BODY}).encode()
    assert _post_raw(server, note_over, {})[0] == 413
    ok = json.dumps({**LABEL, "note": "short"}).encode()
    assert _post_raw(server, ok, {})[0] == 200
    assert _labels(server) == 1


def test_post_from_a_foreign_origin_is_refused(label_server, items_file):
    server = label_server(items_file)
    for origin in ("http://attacker.example", "null", "https://127.0.0.1:1", server.base.replace("127.0.0.1", "localhost")):
        status, text = server.request("/api/label", LABEL, headers={"Origin": origin})
        assert status == 403, origin
        assert "cross-origin" in text
        assert server.request("/api/undo", {"annotator": "alice"}, headers={"Origin": origin})[0] == 403
    assert _labels(server) == 0
    status, body = server.request("/api/label", LABEL, headers={"Origin": server.base})  # the page itself
    assert status == 200 and body["label"]["grade"] == 2
    assert server.request("/api/label", {**LABEL, "grade": 3})[0] == 200  # no Origin (a script): token suffices
    assert server.request("/api/session", headers={"Origin": "http://attacker.example"})[0] == 200  # GET: CSP/token


def test_deeply_nested_json_is_a_400_not_a_500(label_server, items_file):
    server = label_server(items_file)
    deep = b"[" * 20_000 + b"]" * 20_000  # 40 KB, under the body limit; json.loads recurses too deep
    status, text = _post_raw(server, deep, {})
    assert status == 400 and json.loads(text) == {"error": "send a JSON object"}
    deep_object = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    assert _post_raw(server, deep_object, {})[0] == 400
    assert _post_raw(server, b"[" * 100_000 + b"]" * 100_000, {})[0] == 413  # 100k deep is over the limit
    assert _post_raw(server, b"\xff\xfe not utf-8", {})[0] == 400
    assert server.request("/api/label", LABEL)[0] == 200
    assert "Traceback" not in server.stop()
