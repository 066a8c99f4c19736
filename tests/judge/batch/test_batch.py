"""``judge --batch`` against a real local batch endpoint (tests/fakes/batch_server.py on 127.0.0.1).

Grades are checkable: every chunk carries ``[[grade=N]]``, which the chat fake behind the batch
fake answers. The server counts every request line it receives (``lines``), every line it bills
(``billed``) and the lines per pair, so "0 resubmitted" and "nothing paid twice" are counted, not assumed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relgrade.judge import JudgeConfig, Pair, judgment_key, load_prompt
from relgrade.judge.batch._run import batch_price_per_token, batch_status, judge_batch

FAKE = Path(__file__).resolve().parents[2] / "fakes" / "batch_server.py"
MODEL = "openai/gpt-4o-mini"


def _fake():
    name = "relgrade_fake_batch_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FAKE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def make_pairs(n: int, extra=lambda i: "") -> list[Pair]:
    return [Pair(f"q{i // 20}", f"d{i}", f"query number {i // 20}", f"chunk {i} [[grade={i % 4}]]{extra(i)}")
            for i in range(n)]


def truth(doc_id: str) -> int:
    return int(doc_id[1:]) % 4


def run_batch(pairs, server, store, **kw):
    kw.setdefault("poll_interval", 0.05)
    kw.setdefault("config", JudgeConfig(max_attempts=2))
    return judge_batch(pairs, model=kw.pop("model", MODEL), store=store, api_base=server.base_url, api_key="sk-fake",
                       handle_sigint=False, **kw)


def test_2000_pairs_all_judged_right_at_batch_prices(tmp_path):
    pairs = make_pairs(2000)
    with _fake().FakeBatchServer(delay=0.2) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite", batch_size=700)
        stats = server.stats()
    assert result.counts()["judged"] == 2000 and not result.remaining
    assert all(j.grade == truth(j.doc_id) and j.status == "judged" for j in result.judgments)
    assert stats["batches"] == 3 and stats["lines"] == 2000 and stats["billed"] == 2000
    assert max(stats["by_pair"].values()) == 1
    p_in, p_out, source = batch_price_per_token(MODEL)
    assert source == "litellm"
    expected = sum(j.prompt_tokens * p_in + j.completion_tokens * p_out for j in result.judgments)
    assert result.cost_usd == pytest.approx(expected) and result.cost_usd > 0
    assert result.n_calls == 2000
    assert batch_status(tmp_path / "s.sqlite") == []  # nothing left pending
    # a second run pays nothing and submits nothing
    with _fake().FakeBatchServer(delay=0.2) as server:
        again = run_batch(pairs, server, tmp_path / "s.sqlite")
        assert server.stats()["lines"] == 0
    assert again.counts()["cached"] == 2000 and again.cost_usd == 0


def test_unreadable_answer_repaired_by_a_follow_up_batch_and_unjudged_after_two(tmp_path):
    faults = {3: " [[faults=garbage]]", 7: " [[faults=garbage;garbage]]"}
    pairs = make_pairs(40, lambda i: faults.get(i, ""))
    with _fake().FakeBatchServer(delay=0.05) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite")
        stats = server.stats()
    by_doc = {j.doc_id: j for j in result.judgments}
    assert by_doc["d3"].status == "judged" and by_doc["d3"].grade == 3
    assert by_doc["d7"].status == "unjudged" and by_doc["d7"].grade is None
    assert "after one repair" in by_doc["d7"].error and "relevant" in by_doc["d7"].raw_answer
    assert stats["lines"] == 42 and stats["billed"] == 42 and stats["batches"] == 2
    assert all(j.grade == truth(j.doc_id) for j in result.judgments if j.doc_id != "d7")
    # the repaired row carries both answers' tokens and cost (both paid at batch prices)
    assert by_doc["d3"].cost_usd == pytest.approx(2 * by_doc["d0"].cost_usd, rel=0.9)


def test_per_line_errors_retry_only_those_lines(tmp_path):
    bad = {5, 17, 33}
    pairs = make_pairs(60, lambda i: " [[faults=500]]" if i in bad else "")
    with _fake().FakeBatchServer(delay=0.05) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite")
        stats = server.stats()
    assert result.counts()["judged"] == 60
    assert all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert stats["batches"] == 2 and stats["lines"] == 63 and stats["billed"] == 60
    assert sorted(stats["by_pair"].values()).count(2) == 3


def test_a_line_that_always_errors_is_failed_not_stored_and_asked_next_run(tmp_path):
    pairs = make_pairs(20, lambda i: " [[faults=500;500;500]]" if i == 4 else "")
    with _fake().FakeBatchServer(delay=0.05) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite", max_rounds=3)
        assert server.stats()["lines"] == 20 + 2
    failed = [j for j in result.judgments if j.status == "failed"]
    assert [j.doc_id for j in failed] == ["d4"] and "HTTP 500" in failed[0].error
    with _fake().FakeBatchServer(delay=0.05) as server:  # a new server: its fault script starts over
        again = run_batch(pairs, server, tmp_path / "s.sqlite", max_rounds=4)
        assert server.stats()["lines"] == 4  # only the failed pair, 3 errors then an answer
    assert {j.doc_id: j.grade for j in again.judgments}["d4"] == 0


@pytest.mark.parametrize("fault", ["fail_batches", "expire_batches"])
def test_failed_or_expired_batch_is_resubmitted_without_paying_twice(tmp_path, fault):
    pairs = make_pairs(100)
    with _fake().FakeBatchServer(delay=0.05, **{fault: 1}) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite")
        stats = server.stats()
    assert result.counts()["judged"] == 100 and all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert stats["billed"] == 100  # each pair paid exactly once
    assert stats["batches"] == 2
    assert stats["lines"] == (200 if fault == "fail_batches" else 150)  # expired: only the unanswered half again
    assert result.n_calls == 100


def test_failed_batch_falls_back_to_direct_calls(tmp_path):
    pairs = make_pairs(30)
    with _fake().FakeBatchServer(delay=0.05, fail_batches=1) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite", fallback="direct",
                           config=JudgeConfig(max_attempts=2, transport="http"))
        stats = server.stats()
    assert result.counts()["judged"] == 30 and all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert stats["batches"] == 1 and stats["direct"] == 30 and stats["billed"] == 30


def test_crash_between_create_and_ledger_write_adopts_the_batch(tmp_path):
    """The ledger row is written before the upload; the provider's batch carries our local id in its
    metadata, so a row left 'submitting' is adopted, not submitted again."""
    import asyncio

    from relgrade.judge import JudgmentStore
    from relgrade.judge.batch._run import _BatchRun, batch_adapter
    from relgrade.judge.engine._engine import make_units

    pairs = make_pairs(50)
    store = tmp_path / "s.sqlite"
    config = JudgeConfig()
    prompt = load_prompt("graded")
    with _fake().FakeBatchServer(delay=0.3) as server:
        async def half_submit():
            api = batch_adapter(MODEL, config, api_base=server.base_url, api_key="sk-fake")
            db = JudgmentStore(store)
            run = _BatchRun(MODEL, prompt, db, config, api, batch_size=100, max_rounds=3, fallback="batch")
            for unit in make_units(pairs, MODEL, prompt, config):
                run.where[unit.keys[0]] = (unit, 0)
            todo = run.todo(set())
            items = [(f"{n}-{k[:24]}", k, kind) for n, (k, kind) in enumerate(todo)]
            run.ledger.open("deadbeef", provider="openai", model=MODEL, items=items, detail={"prompt_hash": prompt.hash})
            await api.submit([run._request(k, kind, c) for c, k, kind in items], "deadbeef")  # then "crash"
            await api.aclose()
            db.close()

        asyncio.run(half_submit())
        assert [r.state for r in batch_status(store)] == ["submitting"]
        result = run_batch(pairs, server, store)
        stats = server.stats()
    assert stats["batches"] == 1 and stats["lines"] == 50
    assert result.counts()["judged"] == 50 and all(j.grade == truth(j.doc_id) for j in result.judgments)


def test_anthropic_message_batches(tmp_path):
    pairs = make_pairs(30, lambda i: " [[faults=garbage]]" if i == 2 else "")
    with _fake().FakeBatchServer(delay=0.05) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite", model="anthropic/claude-haiku-4-5")
        stats = server.stats()
    assert result.counts()["judged"] == 30 and all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert stats["lines"] == 31 and stats["billed"] == 31
    assert all(j.distribution is None for j in result.judgments)  # no logprobs from Anthropic


def test_batch_price_falls_back_to_half_the_online_price():
    from relgrade.judge.transport._call import price_per_token

    online = price_per_token("openai/gpt-4-turbo")
    assert batch_price_per_token("openai/gpt-4-turbo") == (online[0] / 2, online[1] / 2, "50% of online")
    assert batch_price_per_token("openai/no-such-model-xyz") is None


def test_unsupported_provider_is_one_line_error(tmp_path):
    from relgrade._errors import InputError

    with pytest.raises(InputError, match="no batch API"):
        judge_batch(make_pairs(2), model="ollama/llama3", store=tmp_path / "s.sqlite", handle_sigint=False)


# -- the CLI: kill -9 between submit and collect, --batch-status, --dry-run ------------------------------

def _write_run(path: Path, pairs: list[Pair]) -> Path:
    by_q: dict[str, list[Pair]] = {}
    for p in pairs:
        by_q.setdefault(p.query_id, []).append(p)
    with open(path, "w") as fh:
        for qid, ps in by_q.items():
            fh.write(json.dumps({"query_id": qid, "query": ps[0].query,
                                 "results": [{"doc_id": p.doc_id, "text": p.text} for p in ps]}) + "\n")
    return path


def _relgrade(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    return subprocess.Popen([sys.executable, "-m", "relgrade.cli", "judge", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_cli_survives_kill_9_between_submit_and_collect(tmp_path):
    pairs = make_pairs(2000)
    run = _write_run(tmp_path / "run.jsonl", pairs)
    store, out = tmp_path / "s.sqlite", tmp_path / "qrels.txt"
    common = ["--run", str(run), "--depth", "100", "--model", MODEL, "--store", str(store), "--out", str(out),
              "--batch", "--poll-interval", "0.1", "--batch-size", "1000"]
    with _fake().FakeBatchServer(delay=8.0) as server:
        first = _relgrade(*common, "--api-base", server.base_url)
        deadline = time.time() + 60
        while time.time() < deadline and server.stats()["status_requests"] < 2:
            time.sleep(0.05)
        assert server.stats()["batches"] == 2, first.stderr.read() if first.poll() is not None else ""
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert not out.exists()
        status = _relgrade("--batch-status", "--store", str(store))
        listing, _ = status.communicate(timeout=60)
        assert status.returncode == 0 and listing.count("batch_") == 2 and "1000 requests" in listing
        second = _relgrade(*common, "--api-base", server.base_url)
        stdout, stderr = second.communicate(timeout=120)
        stats = server.stats()
    assert second.returncode == 0, stderr
    assert stats["batches"] == 2 and stats["lines"] == 2000 and stats["billed"] == 2000  # 0 resubmitted
    got = {}
    for line in out.read_text().splitlines():
        qid, _, doc, grade = line.split()
        got[doc] = int(grade)
    assert len(got) == 2000 and all(g == truth(d) for d, g in got.items())
    assert "2000 judged" in stdout and "(batch prices)" in stdout
    assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM batches WHERE state='completed'").fetchone()[0] == 2


def test_cli_dry_run_shows_online_and_batch_price(tmp_path):
    run = _write_run(tmp_path / "run.jsonl", make_pairs(40))
    proc = _relgrade("--run", str(run), "--model", MODEL, "--dry-run", "--store", str(tmp_path / "s.sqlite"))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    online = float(stdout.split("estimated cost $")[1].split()[0])
    batch = float(stdout.split("estimated cost with --batch: $")[1].split()[0])
    assert online > 0 and batch == pytest.approx(online / 2, abs=1e-4)
    assert "litellm batch prices" in stdout


def test_key_includes_nothing_batch_specific(tmp_path):
    """A pair judged by --batch is a cache hit for the online judge (same key, same row)."""
    pairs = make_pairs(8)
    with _fake().FakeBatchServer(delay=0.05) as server:
        run_batch(pairs, server, tmp_path / "s.sqlite")
    from relgrade.judge import judge_pairs

    online = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base="http://127.0.0.1:9/v1",
                         api_key="sk-fake", handle_sigint=False)
    assert online.counts()["cached"] == 8 and online.n_calls == 0
    prompt = load_prompt("graded")
    key = judgment_key(MODEL, prompt.sha256, JudgeConfig().sampling() | {"max_grade": 3}, pairs[0].query, pairs[0].text)
    row = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT status, grade FROM judgments WHERE key=?", (key,)).fetchone()
    assert row == ("judged", 0)


def test_max_cost_submits_only_what_fits_and_a_rerun_finishes(tmp_path):
    pairs = make_pairs(100)
    store = tmp_path / "s.sqlite"
    with _fake().FakeBatchServer(delay=0.05) as server:
        capped = run_batch(pairs, server, store, config=JudgeConfig(max_cost=0.003))
        first_lines = server.stats()["lines"]
        rest = run_batch(pairs, server, store)
        stats = server.stats()
    assert capped.stopped == "max_cost" and 0 < first_lines < 100
    assert capped.cost_usd <= 0.003 and capped.counts()["judged"] == first_lines
    assert capped.counts()["remaining"] == 100 - first_lines
    assert stats["lines"] == 100 and stats["billed"] == 100
    assert rest.counts()["judged"] == 100 and rest.counts()["cached"] == first_lines


def test_cli_ctrl_c_while_polling_keeps_the_batch_for_the_next_run(tmp_path):
    pairs = make_pairs(50)
    run = _write_run(tmp_path / "run.jsonl", pairs)
    store, out = tmp_path / "s.sqlite", tmp_path / "qrels.txt"
    common = ["--run", str(run), "--depth", "100", "--model", MODEL, "--store", str(store), "--out", str(out),
              "--batch", "--poll-interval", "0.1"]
    with _fake().FakeBatchServer(delay=5.0) as server:
        first = _relgrade(*common, "--api-base", server.base_url)
        deadline = time.time() + 60
        while time.time() < deadline and server.stats()["status_requests"] < 1:
            time.sleep(0.05)
        first.send_signal(signal.SIGINT)
        _, stderr = first.communicate(timeout=60)
        assert first.returncode == 130 and "collected by the next run" in stderr
        assert [r.state for r in batch_status(store)] == ["submitted"]
        online = _relgrade(*[a for a in common if a != "--batch"], "--api-base", server.base_url)
        _, stderr = online.communicate(timeout=60)
        assert online.returncode == 2 and "50 of these pairs are in provider batches still pending" in stderr
        assert server.stats()["direct"] == 0
        second = _relgrade(*common, "--api-base", server.base_url)
        _, stderr = second.communicate(timeout=60)
        stats = server.stats()
    assert second.returncode == 0, stderr
    assert stats["batches"] == 1 and stats["lines"] == 50
    assert len(out.read_text().splitlines()) == 50


@pytest.mark.parametrize("args, message", [
    ([], "--run is required"),
    (["--batch", "--model", "ollama/llama3", "--out", "{tmp}/q.txt"], "no batch API"),
    (["--batch", "--poll-interval", "0", "--out", "{tmp}/q.txt"], "--poll-interval must be a positive"),
    (["--batch", "--api-base", "http://127.0.0.1:9/v1", "--api-base", "http://127.0.0.1:10/v1", "--out", "{tmp}/q.txt"],
     "--batch takes one --api-base"),
])
def test_cli_batch_user_errors_exit_2_in_one_line(tmp_path, capsys, args, message):
    from relgrade.cli import main

    run = _write_run(tmp_path / "run.jsonl", make_pairs(4))
    argv = ["judge", *([] if not args else ["--run", str(run), "--store", str(tmp_path / "s.sqlite")]),
            *(a.format(tmp=tmp_path) for a in args)]
    if "--model" not in argv and args:
        argv += ["--model", MODEL]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("relgrade: error:") and message in err[0]
    assert not (tmp_path / "q.txt").exists()


def test_two_processes_on_one_store_submit_each_pair_once(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    pairs = make_pairs(600)
    store = tmp_path / "s.sqlite"
    with _fake().FakeBatchServer(delay=0.5) as server:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: run_batch(pairs, server, store, batch_size=200), range(2)))
        stats = server.stats()
    assert stats["lines"] == 600 and stats["billed"] == 600 and max(stats["by_pair"].values()) == 1
    for result in results:
        assert result.counts()["judged"] == 600 and all(j.grade == truth(j.doc_id) for j in result.judgments)


def test_crash_mid_collection_recollects_without_paying_or_counting_twice(tmp_path, monkeypatch):
    from relgrade.judge.batch._run import _BatchRun

    pairs = make_pairs(50)
    store = tmp_path / "s.sqlite"
    real = _BatchRun._answer
    seen = []

    def crashing(self, *args, **kw):
        if len(seen) == 20:
            raise KeyboardInterrupt("simulated crash mid-collection")
        seen.append(args[1])
        return real(self, *args, **kw)

    with _fake().FakeBatchServer(delay=0.05) as server:
        monkeypatch.setattr(_BatchRun, "_answer", crashing)
        with pytest.raises(KeyboardInterrupt):
            run_batch(pairs, server, store)
        monkeypatch.setattr(_BatchRun, "_answer", real)
        assert [r.state for r in batch_status(store)] == ["submitted"]
        result = run_batch(pairs, server, store)
        stats = server.stats()
    assert stats["lines"] == 50 and stats["batches"] == 1
    assert result.counts()["judged"] == 50 and all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert result.n_calls == 30  # the 20 stored before the crash are not counted again


def test_samples_go_out_as_one_line_each(tmp_path):
    pairs = make_pairs(10)
    with _fake().FakeBatchServer(delay=0.05) as server:
        result = run_batch(pairs, server, tmp_path / "s.sqlite", config=JudgeConfig(samples=3, temperature=0.7))
        stats = server.stats()
    assert stats["lines"] == 30 and result.n_calls == 30
    assert all(j.samples == (truth(j.doc_id),) * 3 and j.grade == truth(j.doc_id) for j in result.judgments)


def test_batch_status_of_a_missing_store_creates_nothing(tmp_path, capsys):
    from relgrade.cli import main

    assert main(["judge", "--batch-status", "--store", str(tmp_path / "none" / "s.sqlite")]) == 0
    assert "no pending batches" in capsys.readouterr().out
    assert not (tmp_path / "none").exists()


def test_postgres_store_two_processes_and_a_resume(pg_url):
    """The ledger in a shared PostgreSQL store: two concurrent runs submit each pair once; a third run
    (another machine) finds nothing pending and pays nothing."""
    from concurrent.futures import ThreadPoolExecutor

    pairs = make_pairs(300, lambda i: " [[faults=garbage]]" if i == 9 else "")
    with _fake().FakeBatchServer(delay=0.3) as server:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: run_batch(pairs, server, pg_url, batch_size=100), range(2)))
        stats = server.stats()
        assert batch_status(pg_url) == []
        again = run_batch(pairs, server, pg_url)
        assert server.stats()["lines"] == stats["lines"]
    assert stats["lines"] == 301 and stats["billed"] == 301
    for result in results:
        assert result.counts()["judged"] == 300 and all(j.grade == truth(j.doc_id) for j in result.judgments)
    assert again.counts()["cached"] == 300 and again.n_calls == 0
