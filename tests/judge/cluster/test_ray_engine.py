"""``relgrade judge --engine ray`` (issue 38): an actor pool on a real local Ray head (``ray_address``, one head per
session, started by .ci/run), a real PostgreSQL store (``pg_url``) and the fake OpenAI server counting what is paid
per pair (tests/fakes/openai_server.py). Ray's workers are killed by PID (the claim owner id holds it), never by name.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
RELGRADE = [sys.executable, "-m", "relgrade.cli"]
N_QUERIES, N_DOCS = 60, 10  # 600 pairs


def _env(key: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "RELGRADE_STORE"}
    env.update(OPENAI_API_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True", RAY_AUTH_MODE="disabled", **extra)
    return env


def _run_file(tmp_path, make_run, n_queries=N_QUERIES, n_docs=N_DOCS):
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


def _claims(url: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return [(k, o) for k, o in db.execute("SELECT key, owner FROM claims").fetchall()]


def test_sqlite_store_is_refused_in_one_line(tmp_path, make_run, fake_key):
    run = _run_file(tmp_path, make_run, 2, 2)
    for store in (str(tmp_path / "s.sqlite"), None):
        args = ["judge", "--engine", "ray", "--run", str(run), "--model", MODEL, "--api-base", "http://127.0.0.1:9/v1",
                "--out", str(tmp_path / "o.qrels")] + (["--store", store] if store else [])
        proc = subprocess.run(RELGRADE + args, env=_env(fake_key), capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "PostgreSQL" in lines[0] and "SQLite" in lines[0], proc.stderr
    assert not (tmp_path / "s.sqlite").exists() and not (tmp_path / ".relgrade").exists()


def test_missing_ray_names_the_extra_and_help_stays_without_ray(tmp_path, make_run, fake_key, pg_url):
    blocker = tmp_path / "noray" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named ray (blocked by the test)')\n")
    run = _run_file(tmp_path, make_run, 2, 2)
    env = _env(fake_key, PYTHONPATH=os.pathsep.join([str(blocker.parent), *sys.path]))
    proc = subprocess.run(RELGRADE + ["judge", "--engine", "ray", "--run", str(run), "--model", MODEL, "--api-base",
                                      "http://127.0.0.1:9/v1", "--store", pg_url, "--out", str(tmp_path / "o.qrels")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"relgrade: error: {_missing()}"], proc.stderr
    assert "pip install 'relgrade[ray]'" in proc.stderr
    dry = subprocess.run(RELGRADE + ["judge", "--engine", "ray", "--workers", "3", "--concurrency", "8", "--dry-run",
                                     "--run", str(run), "--model", MODEL, "--store", pg_url], env=env,
                         capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr  # a dry run needs no cluster, and no Ray
    assert "4 to judge" in dry.stdout and "over 24 calls in flight" in dry.stdout, dry.stdout
    probe = ("import sys\nfrom relgrade.cli import main\ntry:\n    main(['judge', '--help'])\nexcept SystemExit:\n"
             "    pass\nprint('RAY' if 'ray' in sys.modules else 'NO RAY', file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(fake_key), capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip().endswith("NO RAY") and "--engine" in proc.stdout


def _missing() -> str:
    from relgrade.judge.cluster import RAY_MISSING

    return RAY_MISSING


def _owners_mid_run(srv, proc, url: str, paid: int) -> dict[str, set[str]]:
    """``{owner: claimed keys}`` once ``paid`` answers are billed and some worker holds claims (polled: between two
    batches a worker may hold none for a moment)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if srv.stats()["paid"] >= paid:
            owners: dict[str, set[str]] = {}
            for key, owner in _claims(url):
                owners.setdefault(owner, set()).add(key)
            if owners:
                return owners
        time.sleep(0.01)
    out, err = proc.communicate(timeout=60) if proc.poll() is not None else ("", "(still running)")
    raise AssertionError(f"no worker held a claim mid-run; judge exited {proc.returncode}: {err[-2000:]}")


def _start(args, env):
    return subprocess.Popen(RELGRADE + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.ray
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_worker_killed_mid_run_loses_nothing(fakes, tmp_path, make_run, fake_key, pg_url, ray_address, how):
    """600 pairs, 2 Ray workers x 8 calls at a 40 ms server, one worker process killed by PID mid-run: exit 0, every
    pair right, a second run pays nothing. ``kill PID`` (SIGTERM: Ray's own stop) drains the worker, so no pair is
    paid twice; ``kill -9`` loses the calls the worker had in flight, and only those are paid again."""
    n = N_QUERIES * N_DOCS
    run = _run_file(tmp_path, make_run)
    with fakes.FakeOpenAIServer(latency=0.04, lifetime=300) as srv:
        args = ["judge", "--engine", "ray", "--workers", "2", "--ray-address", ray_address, "--run", str(run),
                "--model", MODEL, "--api-base", srv.base_url, "--store", pg_url, "--concurrency", "8"]
        proc = _start([*args, "--out", str(tmp_path / "a.qrels")], _env(fake_key))
        try:
            owners = _owners_mid_run(srv, proc, pg_url, n // 5)
            victim = sorted(owners)[0]
            pid = int(victim.split(":")[1])
            assert pid != proc.pid  # a Ray worker process, not the driver
            os.kill(pid, getattr(signal, how))
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:  # a failed assertion: stop the run before its schema is dropped
                proc.kill()
                proc.communicate()
        stats = srv.stats()
        assert proc.returncode == 0, stderr[-3000:]
        _check_grades(tmp_path / "a.qrels", n)
        assert len(stats["by_pair"]) == n
        twice = sum(row["paid"] - 1 for row in stats["by_pair"].values())
        if how == "SIGTERM":
            assert stats["paid"] == n and twice == 0
            assert _calls(stdout) == n  # every paid call counted, the drained worker's too
        else:
            assert twice <= len(owners[victim]), (twice, len(owners[victim]))
        assert _claims(pg_url) == []
        assert f"{n} paid for now" in stdout  # the dead worker's stored answers count as paid by this run
        again = subprocess.run(RELGRADE + [*args, "--out", str(tmp_path / "b.qrels")], env=_env(fake_key),
                               capture_output=True, text=True, timeout=240)
        assert again.returncode == 0, again.stderr[-3000:]
        assert srv.stats()["paid"] == stats["paid"]  # the second run pays nothing
    assert _calls(again.stdout) == 0 and "600 from the store" in again.stdout
    _check_grades(tmp_path / "b.qrels", n)


@pytest.mark.ray
def test_max_cost_holds_across_workers_from_python(fakes, tmp_path, make_run, fake_key, pg_url, ray_address,
                                                   monkeypatch):
    """One budget for every worker: the run stops before --max-cost, the server billed no more than it, and what was
    paid is in the store (a second run with a larger budget pays only the rest)."""
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, pool
    from relgrade.judge.cluster import judge_pairs_ray
    from relgrade.judge.transport._call import price_per_token

    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    pairs = pool([read_run(_run_file(tmp_path, make_run, 20, 10))], 10)
    with fakes.FakeOpenAIServer(latency=0.04, lifetime=300) as srv:
        kw = dict(model=MODEL, store=pg_url, api_base=srv.base_url, workers=2, ray_address=ray_address)
        first = judge_pairs_ray(pairs, config=JudgeConfig(concurrency=4, max_cost=0.01), **kw)
        paid = srv.stats()["paid"]
        second = judge_pairs_ray(pairs, config=JudgeConfig(concurrency=4), **kw)
        stats = srv.stats()
    assert first.stopped == "max_cost" and 0 < first.cost_usd <= 0.01 and first.remaining
    assert first.n_calls == paid and len(first.judgments) + len(first.remaining) == 200
    assert paid * min(price_per_token(MODEL)) < 0.01  # the server billed no more than the budget allows
    assert second.stopped is None and len(second.judgments) == 200 and not second.remaining
    assert stats["paid"] == 200 and all(r["paid"] == 1 for r in stats["by_pair"].values())
    assert second.n_calls == 200 - paid
    assert {j.grade for j in second.judgments} == {0, 1, 2, 3}


def _fake_vllm(built: list):
    """A stand-in for ``ray.data.llm.build_processor`` (no GPU here): the same pre- and post-processing around a
    'generation' that answers like the fake server ([[grade=N]] in the passage; [[garbage]]: no grade)."""

    def generate(row):
        text = row["messages"][-1]["content"]
        found = re.search(r"\[\[grade=(\d)\]\]", text)
        answer = "no idea" if "[[garbage]]" in text else f'{{"grade": {found.group(1)}, "reason": "stub vllm"}}'
        return {**row, "generated_text": answer, "num_input_tokens": len(text) // 4, "num_generated_tokens": 9}

    def build(settings, preprocess, postprocess):
        built.append(settings)
        return lambda ds: ds.map(preprocess).map(generate).map(postprocess)

    return build


@pytest.mark.ray
def test_vllm_engine_with_the_engine_stubbed(tmp_path, make_run, pg_url, ray_address, monkeypatch):
    """--engine ray-vllm's path without a GPU: prompts rendered by relgrade, answers parsed and stored under the
    vllm/ model, an unreadable answer stored unjudged with its text, a pair another judge holds left to it, and a second
    run that generates nothing."""
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, JudgmentStore, load_prompt, pool
    from relgrade.judge.cluster import judge_pairs_vllm
    from relgrade.judge.engine._engine import make_units

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    spec = {f"q{q}": (f"question {q}", [(f"q{q}d{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]"
                                         + (" [[garbage]]" if (q, d) == (0, 0) else "")) for d in range(5)])
            for q in range(8)}
    pairs = pool([read_run(make_run(tmp_path / "run.jsonl", spec))], 10)
    model = "vllm/fake/judge-1b"
    held = make_units(pairs, model, load_prompt("graded"), JudgeConfig())[1].keys
    with JudgmentStore(pg_url) as db:
        assert db.claim(held, "elsewhere.example:1:other") == (set(held), False)
    built: list = []
    kw = dict(model=model, store=pg_url, workers=1, ray_address=ray_address, processor=_fake_vllm(built))
    first = judge_pairs_vllm(pairs, **kw)
    assert built[0]["model_source"] == "fake/judge-1b" and built[0]["concurrency"] == 1
    assert first.n_calls == 39 and first.cost_unknown == 39
    assert [(p.query_id, p.doc_id) for p in first.remaining] == [("q0", "q0d1")]  # held by another judge: not sent
    grades = {(j.query_id, j.doc_id): j for j in first.judgments}
    assert grades[("q0", "q0d0")].status == "unjudged" and grades[("q0", "q0d0")].raw_answer == "no idea"
    assert all(j.grade == (int(q[1:]) + int(d.split("d")[1])) % 4 for (q, d), j in grades.items() if j.status == "judged")
    assert sum(j.status == "judged" for j in first.judgments) == 38
    with JudgmentStore(pg_url) as db:
        assert len(db) == 39 and db.latest(model, 100)[0]["engine"] == "ray-vllm"
    second = judge_pairs_vllm(pairs, **kw)
    assert len(built) == 1 and second.n_calls == 0  # everything from the store: no engine started
    assert second.counts()["cached"] == 39
    with pytest.raises(Exception, match="vllm/<Hugging Face id or path>"):
        judge_pairs_vllm(pairs, **{**kw, "model": "fake/judge-1b"})
