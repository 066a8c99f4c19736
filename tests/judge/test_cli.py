"""``relgrade judge`` end to end: outputs, dry run, user errors, kill -9 and Ctrl-C resume, no key leaks."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relgrade.cli import main
from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
RELGRADE = [sys.executable, "-m", "relgrade.cli"]


def _env(key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OPENAI_API_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def _corpus_run(tmp_path, make_run, n_queries=3, n_docs=4, faults=None):
    spec = {}
    for q in range(n_queries):
        docs = []
        for d in range(n_docs):
            extra = (faults or {}).get((q, d), "")
            docs.append((f"q{q}d{d}", f"passage {d} for query {q} [[grade={(q + d) % 4}]]{extra}"))
        spec[f"q{q}"] = (f"question number {q}", docs)
    return make_run(tmp_path / "run.jsonl", spec)


def test_cli_writes_qrels_and_details(server, tmp_path, make_run, fake_key, monkeypatch, capsys):
    run = _corpus_run(tmp_path, make_run, faults={(0, 1): " [[faults=garbage;garbage]]"})
    out = tmp_path / "judged.qrels"
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    code = main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--depth", "3",
                 "--store", str(tmp_path / "s.sqlite"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    labels = read_qrels(out).labels
    expected = {f"q{q}": {f"q{q}d{d}": (q + d) % 4 for d in range(3)} for q in range(3)}
    del expected["q0"]["q0d1"]  # unjudged: left out of the qrels
    assert labels == expected
    rows = [json.loads(line) for line in Path(f"{out}.details.jsonl").read_text().splitlines()]
    assert len(rows) == 9
    bad = next(r for r in rows if r["doc_id"] == "q0d1")
    assert bad["grade"] is None and bad["status"] == "unjudged" and "raw_answer" in bad
    for r in rows:
        for name in ("query_id", "doc_id", "grade", "distribution", "expected_grade", "reason", "query", "text",
                     "model", "prompt_hash", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "cached"):
            assert name in r
    assert "1 unjudged" in printed and "q0d1" in printed
    # Dry run after: everything cached, nothing to pay.
    server.reset()
    code = main(["judge", "--run", str(run), "--model", MODEL, "--depth", "4", "--dry-run",
                 "--store", str(tmp_path / "s.sqlite")])
    printed = capsys.readouterr().out
    assert code == 0 and server.stats()["requests"] == 0
    assert "12 pooled pairs, 12 distinct, 9 from the store, 3 to judge (3 calls)" in printed
    assert "$" in printed


def test_missing_text_is_a_user_error_before_paying(server, tmp_path, capsys, fake_key, monkeypatch):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3.0 bm25\nq1 Q0 d2 2 2.0 bm25\nq2 Q0 d1 1 1.0 bm25\n")
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("d1\tsome text [[grade=1]]\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tfirst\nq2\tsecond\n")
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url,
            "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o.qrels")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "no query text" in err or "no text" in err
    assert main(args + ["--queries", str(queries), "--corpus", str(corpus)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("relgrade: error: 1 pooled pairs have no chunk text (e.g. doc 'd2' of query 'q1')")
    assert server.stats()["requests"] == 0
    corpus.write_text("d1\tsome text [[grade=1]]\nd2\tother [[grade=2]]\n")
    assert main(args + ["--queries", str(queries), "--corpus", str(corpus)]) == 0
    assert read_qrels(tmp_path / "o.qrels").labels == {"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 1}}


@pytest.mark.parametrize("argv, fragment", [
    (["--concurrency", "0"], "--concurrency must be an integer >= 1"),
    (["--prompt", "nonsense"], "--prompt nonsense"),
    (["--depth", "0"], "--depth must be a positive integer"),
    (["--timeout", "inf"], "--timeout must be a finite positive number"),
    (["--timeout", "nan"], "--timeout must be a finite positive number"),
    (["--timeout", "0"], "--timeout must be a finite positive number"),
    (["--timeout", "-1"], "--timeout must be a finite positive number"),
    (["--model", ""], "--model '': give a litellm model name"),
    (["--model", " "], "--model ' ': give a litellm model name"),
    (["--api-base", ""], "--api-base must be a URL"),
])
def test_bad_options_exit_2(tmp_path, make_run, capsys, argv, fragment):
    run = _corpus_run(tmp_path, make_run, 1, 1)
    code = main(["judge", "--run", str(run), "--model", MODEL, "--out", str(tmp_path / "o.qrels"), *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("relgrade: error: ")  # one line


def test_auth_failure_fails_fast_and_never_shows_the_key(fakes, tmp_path, make_run, fake_key):
    run = _corpus_run(tmp_path, make_run, 2, 3)
    with fakes.FakeOpenAIServer(require_key="sk-the-right-one-123456") as srv:
        proc = subprocess.run(RELGRADE + ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url,
                                          "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o.qrels")],
                              env=_env(fake_key), capture_output=True, text=True, timeout=120)
        assert srv.stats()["paid"] == 0
        assert srv.stats()["requests"] <= 16  # one per worker at most: no retries
    assert proc.returncode == 2
    assert "relgrade: error: authentication failed for openai: set OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert fake_key not in proc.stderr + proc.stdout


def test_api_key_is_in_no_file_and_no_log(server, tmp_path, make_run, fake_key):
    faults = {(0, 0): " [[faults=429:0.1;500]]", (1, 1): " [[faults=garbage;garbage]]", (1, 2): " [[faults=drop]]"}
    run = _corpus_run(tmp_path, make_run, 2, 3, faults)
    work = tmp_path / "work"
    work.mkdir()
    env = _env(fake_key)
    env["LITELLM_LOG"] = "DEBUG"  # the most verbose litellm logging there is
    proc = subprocess.run(RELGRADE + ["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url,
                                      "--out", "o.qrels", "--timeout", "5"],
                          env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (work / ".relgrade" / "judgments.sqlite").exists()  # the default store
    files = [p for p in work.rglob("*") if p.is_file()]
    assert len(files) >= 3
    secret = fake_key.encode()
    for path in files:
        assert secret not in path.read_bytes(), path
    assert fake_key not in proc.stdout and fake_key not in proc.stderr
    assert fake_key[8:] not in proc.stdout + proc.stderr
    assert "\r" not in proc.stderr  # no tqdm bar when stderr is not a terminal (progress lines instead, every 5 s)


def test_progress_bar_on_a_terminal(server, tmp_path, make_run, fake_key):
    import fcntl
    import pty
    import struct
    import termios

    run = _corpus_run(tmp_path, make_run, 1, 3)
    pid, fd = pty.fork()
    if pid == 0:  # child: a terminal of 160 columns, then the CLI
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
        os.execve(sys.executable, [sys.executable, "-m", "relgrade.cli", "judge", "--run", str(run), "--model", MODEL,
                                   "--api-base", server.base_url, "--store", str(tmp_path / "s.sqlite"),
                                   "--out", str(tmp_path / "o.qrels")], _env(fake_key))
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    text = out.decode()
    assert "judging: 100%" in text and "3/3" in text
    assert "from_store=0" in text and "duplicates=0" in text and "unjudged=0" in text and "cost=$" in text


def _rows(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'judged'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _start_and_wait(args, env, store, at_least, timeout=60):
    proc = subprocess.Popen(RELGRADE + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while _rows(store) < at_least:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError(f"judge did not get going: {proc.communicate()[1][-1000:]}")
        time.sleep(0.05)
    return proc


def test_kill_9_then_resume_pays_again_at_most_for_calls_in_flight(fakes, tmp_path, make_run, fake_key):
    n_queries, n_docs, concurrency = 6, 5, 4
    run = _corpus_run(tmp_path, make_run, n_queries, n_docs)
    store, out = tmp_path / "s.sqlite", tmp_path / "o.qrels"
    with fakes.FakeOpenAIServer(latency=0.15) as srv:
        args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", str(store),
                "--out", str(out), "--concurrency", str(concurrency)]
        proc = _start_and_wait(args, _env(fake_key), store, at_least=8)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        kept = _rows(store)
        paid_before = srv.stats()["paid"]
        assert 8 <= kept < n_queries * n_docs
        done = subprocess.run(RELGRADE + args, env=_env(fake_key), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        total_paid = srv.stats()["paid"]
        by_pair = srv.stats()["by_pair"]
    n = n_queries * n_docs
    # Every pair judged exactly once in the final output, with the right grade.
    rows = [json.loads(line) for line in Path(f"{out}.details.jsonl").read_text().splitlines()]
    assert sorted((r["query_id"], r["doc_id"]) for r in rows) == sorted(
        (f"q{q}", f"q{q}d{d}") for q in range(n_queries) for d in range(n_docs))
    assert all(r["grade"] == (int(r["query_id"][1:]) + int(r["doc_id"].split("d")[1])) % 4 for r in rows)
    # Paid again only for what was in flight at the kill (at most one call per worker).
    assert paid_before - kept <= concurrency
    assert total_paid <= n + concurrency
    assert sum(1 for row in by_pair.values() if row["paid"] > 1) <= concurrency
    assert sum(r["cached"] for r in rows) == kept


def test_ctrl_c_writes_what_is_done_and_resumes(fakes, tmp_path, make_run, fake_key):
    run = _corpus_run(tmp_path, make_run, 5, 4)
    store, out = tmp_path / "s.sqlite", tmp_path / "o.qrels"
    with fakes.FakeOpenAIServer(latency=0.15) as srv:
        args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", str(store),
                "--out", str(out), "--concurrency", "2"]
        proc = _start_and_wait(args, _env(fake_key), store, at_least=4)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr[-2000:]
        assert "interrupted" in stderr and "Traceback" not in stderr
        partial = read_qrels(out).labels if out.stat().st_size else {}
        n_partial = sum(len(v) for v in partial.values())
        assert n_partial >= 4 and n_partial < 20
        rows = [json.loads(line) for line in Path(f"{out}.details.jsonl").read_text().splitlines()]
        assert len(rows) == 20 and sum(r["status"] == "remaining" for r in rows) == 20 - n_partial
        # The requests abandoned at Ctrl-C are still being answered (and billed) by the server: wait for them
        # before reading the count (the CLI no longer imports litellm, so it can exit within the server latency).
        deadline = time.monotonic() + 10
        while srv.state.in_flight and time.monotonic() < deadline:
            time.sleep(0.02)
        paid = srv.stats()["paid"]
        done = subprocess.run(RELGRADE + args, env=_env(fake_key), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0
        assert srv.stats()["paid"] <= 20 + 2 and srv.stats()["paid"] - paid == 20 - n_partial
    assert sum(len(v) for v in read_qrels(out).labels.values()) == 20
