"""One claim protocol for online and batch judging (issue 24): real ``relgrade judge`` processes, online and
``--batch``, racing on one store in every start order, on SQLite and PostgreSQL. Each prompt's paid answers are
counted where they are paid: the online fake (tests/fakes/openai_server.py) and the chat fake behind the batch
endpoint (tests/fakes/batch_server.py), by the same pair key. No pair may be paid twice; in the end (a last
``--batch`` run collects whatever a batch still holds) every pair is judged, with the right grade."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

MODEL = "openai/gpt-4o-mini"
N_QUERIES, N_DOCS = 4, 20


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "shared.sqlite")
    return request.getfixturevalue("pg_url")


def _env(key):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "RELGRADE_STORE"}
    env.update(OPENAI_API_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True",
               PYTHONPATH=str(Path(__file__).resolve().parents[3] / "src"))
    return env


def _start(args, key):
    return subprocess.Popen([sys.executable, "-m", "relgrade.cli", "judge", *args], env=_env(key),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _paid(*servers) -> dict[str, int]:
    out: dict[str, int] = {}
    for srv in servers:
        for pair, row in srv.stats()["by_pair"].items():
            out[pair] = out.get(pair, 0) + row["paid"]
    return out


def _wait(condition, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize("order", ["online_first", "batch_first", "together"])
def test_no_pair_is_paid_twice_by_online_and_batch_judges(fakes, batch_fakes, tmp_path, make_run, fake_key, store,
                                                          order):
    """The online fake answers slowly (2 s) until the batch endpoint has its first batch, then fast (20 ms), and the
    batches take 4 s: so they are opened while the online judge holds claims and has most pairs still to go, and
    still pending when it reaches their pairs, whatever the machine's load."""
    spec = {f"q{q}": (f"question number {q}", [(f"q{q}d{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]")
                                               for d in range(N_DOCS)]) for q in range(N_QUERIES)}
    run = make_run(tmp_path / "run.jsonl", spec)
    n = N_QUERIES * N_DOCS
    base = ["--run", str(run), "--model", MODEL, "--store", store, "--depth", "100"]
    with fakes.FakeOpenAIServer(latency=0.02, lifetime=300) as online_srv, \
            batch_fakes.FakeBatchServer(delay=4.0, lifetime=300) as batch_srv:
        online = base + ["--api-base", online_srv.base_url, "--concurrency", "2", "--out", str(tmp_path / "on.qrels")]
        batch = [*base, "--api-base", batch_srv.base_url, "--batch", "--poll-interval", "0.2", "--batch-size", "30"]
        procs = []
        if order == "online_first":
            procs.append(_start(online, fake_key))
            _wait(lambda: online_srv.stats()["paid"] >= 6)
            online_srv.state.latency = 2.0
            procs += [_start([*batch, "--out", str(tmp_path / f"b{i}.qrels")], fake_key) for i in range(2)]
        elif order == "batch_first":
            procs.append(_start([*batch, "--out", str(tmp_path / "b0.qrels")], fake_key))
            _wait(lambda: batch_srv.stats()["batches"] >= 1)
            procs += [_start(online, fake_key), _start([*batch, "--out", str(tmp_path / "b1.qrels")], fake_key)]
        else:
            online_srv.state.latency = 2.0
            procs += [_start([*batch, "--out", str(tmp_path / f"b{i}.qrels")], fake_key) for i in range(2)]
            procs.append(_start(online, fake_key))
        _wait(lambda: batch_srv.stats()["batches"] >= 1)
        online_srv.state.latency = 0.02
        results = [p.communicate(timeout=300) for p in procs]
        for p, (stdout, stderr) in zip(procs, results):
            assert p.returncode in (0, 2), stderr[-2000:]
            if p.returncode == 2:  # an online judge that found the pairs already in a pending batch, before any call
                assert "provider batches still pending" in stderr, stderr[-2000:]
            assert "Traceback" not in stderr
        last = subprocess.run([sys.executable, "-m", "relgrade.cli", "judge", *batch, "--out", str(tmp_path / "all.qrels")],
                              env=_env(fake_key), capture_output=True, text=True, timeout=300)
        paid = _paid(online_srv, batch_srv.chat)
        online_paid, batch_paid = online_srv.stats()["paid"], batch_srv.chat.stats()["paid"]
    assert last.returncode == 0, last.stderr[-2000:]
    twice = {k: v for k, v in paid.items() if v > 1}
    assert not twice, f"{len(twice)} pairs paid twice: {sorted(twice.values())}"
    assert len(paid) == n and sum(paid.values()) == n
    if order == "online_first":  # it judged alone until it had paid 6 (the wait above), then the batches came
        assert online_paid >= 6 and batch_paid >= n // 2, (online_paid, batch_paid)
    if order == "together":  # who claims first is the race itself: the batches claimed most pairs, and the online
        # judge paid what it claimed before them or said, before any call, that every pair was in a pending batch
        online_stdout, online_stderr = results[2]
        assert batch_paid >= n // 2, (online_paid, batch_paid)
        assert online_paid >= 1 or "provider batches still pending" in online_stdout + online_stderr, (
            online_paid, online_stderr[-2000:])
    got = {}
    for line in (tmp_path / "all.qrels").read_text().splitlines():
        qid, _, doc, grade = line.split()
        got[(qid, doc)] = int(grade)
    assert len(got) == n and all(g == (int(q[1:]) + int(d.split("d")[1])) % 4 for (q, d), g in got.items())
    shared = [json.loads(x) for x in (tmp_path / "all.qrels.details.jsonl").read_text().splitlines()]
    assert sum(not r["cached"] for r in shared) == 0  # the last run paid nothing: everything was in the store
    online_out = next((out for out, _ in results if "on.qrels" in out), "") if order != "batch_first" else ""
    if online_out:  # it wrote its outputs: no pair was left to a pending batch (that is exit 2, one line: above)
        found = re.search(r"(\d+) not done", online_out)
        assert not found or int(found.group(1)) == 0, online_out
