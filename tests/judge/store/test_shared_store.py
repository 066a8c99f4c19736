"""One store, several ``relgrade judge`` processes: claims before calls (issues 15 and 17).

Real processes against the fake OpenAI server (tests/fakes/openai_server.py counts the paid answers
per pair), on a real SQLite file and on a real PostgreSQL server (``RELGRADE_TEST_PG``, a URL;
.ci/run starts one; outside CI the PostgreSQL tests skip when it is unset, in CI they fail).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
RELGRADE = [sys.executable, "-m", "relgrade.cli"]


def _env(key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "RELGRADE_STORE"}
    env.update(OPENAI_API_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def _run(tmp_path, make_run, n_queries, n_docs):
    spec = {f"q{q}": (f"question number {q}", [(f"q{q}d{d}", f"passage {d} for query {q} [[grade={(q + d) % 4}]]")
                                               for d in range(n_docs)]) for q in range(n_queries)}
    return make_run(tmp_path / "run.jsonl", spec)


def _check_grades(out: Path, n: int) -> None:
    labels = read_qrels(out).labels
    got = {(q, d): g for q, docs in labels.items() for d, g in docs.items()}
    assert len(got) == n
    assert all(g == (int(q[1:]) + int(d.split("d")[1])) % 4 for (q, d), g in got.items())


def _calls(stdout: str) -> int:
    line = next(x for x in stdout.splitlines() if x.startswith("judged "))
    return int(re.search(r"(\d+) calls?, ", line).group(1))


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "shared.sqlite")
    return request.getfixturevalue("pg_url")


def _start(args, env):
    return subprocess.Popen(RELGRADE + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("n_procs", [2, 3])
def test_concurrent_judges_pay_each_pair_once(fakes, tmp_path, make_run, fake_key, store_spec, n_procs):
    n_queries, n_docs = 12, 5
    n = n_queries * n_docs
    run = _run(tmp_path, make_run, n_queries, n_docs)
    with fakes.FakeOpenAIServer(latency=0.3, lifetime=300) as srv:
        procs = []
        for i in range(n_procs):
            args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", store_spec,
                    "--out", str(tmp_path / f"o{i}.qrels"), "--concurrency", "3"]
            procs.append(_start(args, _env(fake_key)))  # all at once: same pairs, same order
        results = [p.communicate(timeout=300) for p in procs]
        stats = srv.stats()
    for p, (stdout, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr[-2000:]
    # Server-side count: every pair paid exactly once, whatever process paid it.
    assert stats["paid"] == n
    assert len(stats["by_pair"]) == n and all(row["paid"] == 1 for row in stats["by_pair"].values())
    calls = [_calls(stdout) for stdout, _ in results]
    assert sum(calls) == n
    assert sum(c > 0 for c in calls) >= 2, calls  # the work was shared
    for i in range(n_procs):
        _check_grades(tmp_path / f"o{i}.qrels", n)
        rows = [json.loads(x) for x in Path(f"{tmp_path / f'o{i}.qrels'}.details.jsonl").read_text().splitlines()]
        assert sum(not r["cached"] for r in rows) == calls[i]


def test_a_killed_claimants_pairs_are_taken_over_at_once_on_its_machine(fakes, tmp_path, make_run, fake_key):
    """kill -9 leaves live claims; a judge on the same machine sees their owner is dead and takes them
    over at once (the lease is 600 s here: without that check the second run would wait it out)."""
    n_queries, n_docs, concurrency = 6, 5, 4
    n = n_queries * n_docs
    run = _run(tmp_path, make_run, n_queries, n_docs)
    store = tmp_path / "s.sqlite"
    with fakes.FakeOpenAIServer(latency=0.5, lifetime=300) as srv:
        args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", str(store),
                "--concurrency", str(concurrency), "--lease", "600"]
        first = _start([*args, "--out", str(tmp_path / "a.qrels")], _env(fake_key))
        deadline = time.monotonic() + 120
        while srv.stats()["paid"] < 5 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        with sqlite3.connect(store, timeout=5) as db:
            held = db.execute("SELECT COUNT(*) FROM claims WHERE expires > ?", (time.time(),)).fetchone()[0]
        db.close()
        assert held >= 1  # the killed process left live claims: its calls in flight
        second = subprocess.run(RELGRADE + [*args, "--out", str(tmp_path / "b.qrels")], env=_env(fake_key),
                                capture_output=True, text=True, timeout=240)
        stats = srv.stats()
    assert second.returncode == 0, second.stderr[-2000:]
    _check_grades(tmp_path / "b.qrels", n)
    # Only the calls in flight at the kill were paid twice.
    assert stats["paid"] <= n + concurrency
    assert len(stats["by_pair"]) == n
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'judged'").fetchone()[0] == n
    db.close()


def _claims_of(store_spec: str, pid: int) -> set[str]:
    """The keys a process (by pid) holds claims on."""
    sql = "SELECT key, owner FROM claims"
    if store_spec.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store_spec) as db:
            rows = db.execute(sql).fetchall()
    else:
        with sqlite3.connect(store_spec, timeout=30) as db:
            rows = db.execute(sql).fetchall()
        db.close()
    return {key for key, owner in rows if owner.split(":")[1:2] == [str(pid)]}


def test_kill_9_of_one_of_three_judges_repays_only_what_it_had_in_flight(fakes, tmp_path, make_run, fake_key,
                                                                         store_spec):
    """kill -9 of one of three judges sharing a store (issue 34): the pairs paid twice are at most the ones the killed
    judge had claimed and not stored (its calls in flight, answered and billed by the provider after it died), on
    SQLite as on PostgreSQL; the other judges take them over at once and finish every pair right. The two others are
    paused (SIGSTOP) around the kill so that the killed judge's claims can be read before they are taken over."""
    n_queries, n_docs, concurrency = 10, 6, 4
    n = n_queries * n_docs
    run = _run(tmp_path, make_run, n_queries, n_docs)
    with fakes.FakeOpenAIServer(latency=0.3, lifetime=300) as srv:
        args = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", store_spec,
                "--concurrency", str(concurrency)]
        procs = [_start([*args, "--out", str(tmp_path / f"o{i}.qrels")], _env(fake_key)) for i in range(3)]
        deadline = time.monotonic() + 120
        while srv.stats()["paid"] < 12 and time.monotonic() < deadline and procs[0].poll() is None:
            time.sleep(0.02)
        for p in procs[1:]:
            os.kill(p.pid, signal.SIGSTOP)
        os.kill(procs[0].pid, signal.SIGKILL)
        procs[0].wait()
        time.sleep(0.5)  # the killed judge's last requests reach the server and are billed
        left = _claims_of(store_spec, procs[0].pid)
        for p in procs[1:]:
            os.kill(p.pid, signal.SIGCONT)
        results = [p.communicate(timeout=240) for p in procs[1:]]
        stats = srv.stats()
    for p, (_, stderr) in zip(procs[1:], results):
        assert p.returncode == 0, stderr[-2000:]
        _check_grades(Path(str(tmp_path / f"o{procs.index(p)}.qrels")), n)
    assert len(stats["by_pair"]) == n
    repaid = stats["paid"] - n
    assert 0 <= repaid <= len(left) <= 2 * concurrency, (repaid, len(left))
    assert _claims_of(store_spec, procs[0].pid) == set()  # taken over, then released


def test_claims_of_another_machine_wait_for_their_lease(fakes, tmp_path, make_run, fake_key, store_spec):
    """Pairs claimed by a judge on another machine are not paid for while its lease lives; when the
    lease runs out (that judge died), they are taken over and paid once."""
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, JudgmentStore, load_prompt, pool
    from relgrade.judge.engine._engine import make_units

    n_queries, n_docs = 3, 4
    n = n_queries * n_docs
    run = _run(tmp_path, make_run, n_queries, n_docs)
    units = make_units(pool([read_run(run)], 10), MODEL, load_prompt("graded"), JudgeConfig())
    foreign = [u.keys[0] for u in units[:3]]
    with JudgmentStore(store_spec, lease_s=3600) as db:
        assert db.claim(foreign, "elsewhere.example:1:dead") == (set(foreign), False)
    with fakes.FakeOpenAIServer(latency=0.05, lifetime=300) as srv:
        proc = _start(["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", store_spec,
                       "--out", str(tmp_path / "o.qrels"), "--lease", "4"], _env(fake_key))
        deadline = time.monotonic() + 120
        while srv.stats()["paid"] < n - 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(1.5)  # several polls: the claimed pairs stay unpaid while the foreign lease lives
        assert srv.stats()["paid"] == n - 3 and proc.poll() is None
        with JudgmentStore(store_spec) as db:
            assert db.get_many(foreign) == {}
            # the other machine's lease runs out
            db._run(lambda c: c.execute("UPDATE claims SET expires = 0 WHERE owner = 'elsewhere.example:1:dead'"))
        stdout, stderr = proc.communicate(timeout=120)
        stats = srv.stats()
    assert proc.returncode == 0, stderr[-2000:]
    assert stats["paid"] == n and all(row["paid"] == 1 for row in stats["by_pair"].values())
    _check_grades(tmp_path / "o.qrels", n)


def test_postgres_dry_run_writes_nothing_and_a_foreign_table_is_refused(fakes, tmp_path, make_run, fake_key, pg_url):
    import psycopg

    run = _run(tmp_path, make_run, 2, 2)
    with fakes.FakeOpenAIServer(lifetime=120) as srv:
        base = ["judge", "--run", str(run), "--model", MODEL, "--api-base", srv.base_url, "--store", pg_url]
        dry = subprocess.run(RELGRADE + [*base, "--dry-run"], env=_env(fake_key), capture_output=True, text=True,
                             timeout=120)
        assert dry.returncode == 0 and "4 distinct, 0 from the store, 4 to judge" in dry.stdout, dry.stderr[-2000:]
        with psycopg.connect(pg_url) as db:
            assert db.execute("SELECT COUNT(*) FROM information_schema.tables "
                              "WHERE table_schema = current_schema()").fetchone()[0] == 0
            db.execute("CREATE TABLE judgments (id INTEGER PRIMARY KEY, verdict TEXT)")
        bad = subprocess.run(RELGRADE + [*base, "--out", str(tmp_path / "o.qrels")], env=_env(fake_key),
                             capture_output=True, text=True, timeout=120)
        assert srv.stats()["requests"] == 0
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "table judgments has columns id, verdict" in lines[0] and "postgresql://" in lines[0]


def test_a_judged_row_is_never_replaced(store_spec):
    from relgrade.judge import JudgmentStore

    with JudgmentStore(store_spec, lease_s=30) as db:
        assert db.claim(["k1"], "a:1:x") == ({"k1"}, False)
        assert db.claim(["k1"], "b:2:y") == (set(), True)  # held by a live lease elsewhere
        assert db.put("k1", model="m", prompt_hash="p", status="judged", grade=2, record={"reason": "a"}, owner="a:1:x")
        # a late 'unjudged' (or a second 'judged') answer for the same key does not overwrite it
        assert not db.put("k1", model="m", prompt_hash="p", status="unjudged", grade=None, record={"raw_answer": "?"},
                          owner="b:2:y")
        assert not db.put("k1", model="m", prompt_hash="p", status="judged", grade=0, record={}, owner="b:2:y")
        assert db.get("k1")["grade"] == 2 and db.get("k1")["status"] == "judged"
        assert db.claim(["k1"], "b:2:y") == (set(), False)  # answered: nothing to claim, not busy
        # unjudged -> judged is an upgrade; unjudged rows are claimable again only for --retry-unjudged
        db.put("k2", model="m", prompt_hash="p", status="unjudged", grade=None, record={}, owner=None)
        assert db.claim(["k2"], "b:2:y") == (set(), False)
        assert db.claim(["k2"], "b:2:y", retry_before=float("inf")) == ({"k2"}, False)
        assert db.put("k2", model="m", prompt_hash="p", status="judged", grade=1, record={}, owner="b:2:y")
        assert db.get("k2")["grade"] == 1 and len(db) == 2


def test_a_network_store_is_written_off_the_event_loop(server, tmp_path, fake_key, pg_url, monkeypatch):
    """PostgreSQL claims and answers run on the judge's store thread, so a server round trip never stalls
    the calls in flight; SQLite (microseconds) stays on the loop. Every pair judged right, each paid once."""
    import threading

    from relgrade.judge import Pair, judge_pairs
    from relgrade.judge.store._postgres import PostgresStore
    from relgrade.judge.store._sqlite import SQLiteStore

    from ..conftest import fast_config

    seen: dict[str, set[str]] = {"postgres": set(), "sqlite": set()}
    for cls, name in ((PostgresStore, "postgres"), (SQLiteStore, "sqlite")):
        for method in ("put", "claim"):
            original = getattr(cls, method)

            def spy(self, *a, _original=original, _name=name, **k):
                seen[_name].add(threading.current_thread().name.split("_")[0])
                return _original(self, *a, **k)

            monkeypatch.setattr(cls, method, spy)
    pairs = [Pair(f"q{i // 10}", f"d{i}", f"query {i // 10}", f"chunk {i} [[grade={i % 4}]]") for i in range(60)]
    for name, store in (("postgres", pg_url), ("sqlite", tmp_path / "s.sqlite")):
        server.reset()
        result = judge_pairs(pairs, model="openai/gpt-4o-mini", store=store, api_base=server.base_url,
                             api_key=fake_key, config=fast_config(concurrency=16), handle_sigint=False)
        assert [j.grade for j in result.judgments] == [i % 4 for i in range(60)]
        assert server.stats()["paid"] == 60
    assert seen["postgres"] == {"relgrade-store"}
    assert seen["sqlite"] == {"MainThread"}
