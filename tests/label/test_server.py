"""The real ``relgrade label`` process over HTTP on 127.0.0.1 (no browser needed)."""

from __future__ import annotations

import re
import sqlite3



def test_first_line_is_the_url_and_every_route_needs_the_token(label_server, items_file):
    server = label_server(items_file, "--annotator", "alice")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{32}", server.url)
    routes = ["/", "/static/app.js", "/static/app.css", "/static/favicon.svg", "/api/session", "/api/labels?annotator=alice"]
    for path in routes:
        assert server.request(path, token=None)[0] == 403, path
        wrong = server.token[:-1] + ("y" if server.token.endswith("x") else "x")  # one character off, never the token
        assert server.request(path, token=wrong)[0] == 403, path
        assert server.request(path)[0] == 200, path
    assert server.request("/?token=" + server.token, token=None)[0] == 200
    status, _ = server.request("/api/label", {"query_id": "q0", "doc_id": "d0", "annotator": "mallory", "grade": 3}, token=None)
    assert status == 403
    assert server.request("/api/undo", {"annotator": "alice"}, token=None)[0] == 403
    assert server.request("/", headers={"Host": "attacker.example:80"})[0] == 403
    assert not server.store.exists() or sqlite3.connect(server.store).execute("SELECT count(*) FROM labels").fetchone()[0] == 0


def test_page_headers_and_blind_judge(label_server, items_file):
    server = label_server(items_file)
    import urllib.request

    with urllib.request.urlopen(server.url, timeout=10) as resp:
        csp = resp.headers["Content-Security-Policy"]
        page = resp.read().decode()
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert f"/static/app.js?token={server.token}" in page and "http" not in page.replace("http-equiv", "")
    status, session = server.request("/api/session")
    assert status == 200 and session["annotator"] == "" and len(session["items"]) == 7
    assert all("judge_grade" not in it for it in session["items"])
    assert [lv["grade"] for lv in session["rubric"]] == [0, 1, 2, 3]


def test_show_judge_sends_the_judge_grade(label_server, items_file):
    server = label_server(items_file, "--show-judge")
    _, session = server.request("/api/session")
    assert [it["judge_grade"] for it in session["items"]] == [i % 4 for i in range(7)]


def test_api_labels_validates_and_commits_at_once(label_server, items_file):
    server = label_server(items_file)
    give = lambda **body: server.request("/api/label", body)  # noqa: E731
    assert give(query_id="q0", doc_id="d0", annotator="ann", grade=4)[0] == 400
    assert give(query_id="q0", doc_id="d0", annotator="ann", grade=True)[0] == 400
    assert give(query_id="q0", doc_id="d0", annotator=" ", grade=1)[0] == 400
    assert give(query_id="q0", doc_id="nope", annotator="ann", grade=1)[0] == 404
    assert server.request("/api/label", None)[0] in (403, 404, 405)  # GET is not a label
    status, body = give(query_id="q0", doc_id="d0", annotator="ann", grade=2, note="  fine  ")
    assert status == 200 and body["label"]["grade"] == 2 and body["label"]["note"] == "fine"
    # Committed before the answer: another connection sees it while the server still runs.
    db = sqlite3.connect(server.store)
    assert db.execute("SELECT query_id, doc_id, annotator, grade, note FROM labels").fetchall() == [("q0", "d0", "ann", 2, "fine")]
    assert give(query_id="q0", doc_id="d1", annotator="ann", grade=None)[1]["label"]["skipped"] is True
    assert server.request("/api/undo", {"annotator": "ann"})[1]["label"]["doc_id"] == "d1"
    assert server.request("/api/undo", {"annotator": "other"})[1]["label"] is None
    _, mine = server.request("/api/labels?annotator=ann")
    assert [(lab["doc_id"], lab["grade"]) for lab in mine["labels"]] == [("d0", 2)]
    assert db.execute("SELECT count(*) FROM labels").fetchone()[0] == 1
    stderr = server.stop()
    assert "stopped; 1 label in" in stderr and "Traceback" not in stderr
