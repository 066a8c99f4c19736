"""No key in any output, file or log: a hostile server echoes the key it receives, on both transports.

The fake server's ``[[echo-key]]`` marker makes it put the bearer key in every error message (401,
403, 429, 500), in a header, and in 200 answers (prose, a JSON object quoted before the grade, the
reason). Each case runs ``relgrade judge`` in a fresh process with ``LITELLM_LOG=DEBUG`` (litellm's
most verbose logging) and then searches stdout, stderr and the bytes of every file it wrote
(qrels, details, the SQLite store and its WAL) for the key, raw and JSON-escaped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
KEYS = {
    "sk": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "hex32": "9f86d081884c7d659a2feaa0c55ad015",
    "short": "tok7Qz2x",
    "json": 'k3y"with\\quote/and-slash',
}
DRIVER = ("import json, sys\nfrom relgrade.cli import main\n"
          "print('CODES', json.dumps([main(a) for a in json.loads(sys.argv[1])]), flush=True)\n")


def _forms(key: str) -> list[str]:
    return sorted({key, json.dumps(key)[1:-1], json.dumps(json.dumps(key)[1:-1])[1:-1]})


def _run_case(tmp_path, make_run, server_url, transport, shape):
    key = KEYS[shape]
    spec = {"q0": ("question zero [[echo-key]]", [
        ("ok0", "passage ok [[grade=2]] [[echo-key]]"),
        ("ok1", "passage ok [[grade=1]] [[echo-key]]"),
        ("r429", "passage limited [[grade=3]] [[echo-key]] [[faults=429:0;429:0;429:0]]"),
        ("r500", "passage broken [[grade=3]] [[echo-key]] [[faults=500;500;500]]"),
    ])}
    run = make_run(tmp_path / "run.jsonl", spec)
    fatal = {status: make_run(tmp_path / f"run{status}.jsonl", {"q9": ("question [[echo-key]]", [
        ("d", f"passage [[grade=1]] [[echo-key]] [[faults={status}]]")])}) for status in (401, 403)}
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(LITELLM_LOG="DEBUG", LITELLM_LOCAL_MODEL_COST_MAP="True")
    common = ["--model", MODEL, "--api-base", server_url, "--transport", transport, "--max-attempts", "2"]
    if shape == "short":  # a variable whose name does not say "key": registered because --api-key-env names it
        env["JUDGE_TOK"] = key
        common += ["--api-key-env", "JUDGE_TOK"]
    else:
        env["OPENAI_API_KEY"] = key
    argvs = [["judge", "--run", str(run), *common, "--store", "s.sqlite", "--out", "o.qrels"]]
    argvs += [["judge", "--run", str(fatal[s]), *common, "--store", f"s{s}.sqlite", "--out", f"o{s}.qrels"]
              for s in (401, 403)]
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(argvs)], env=env, cwd=work,
                          capture_output=True, text=True, timeout=300)
    return key, work, proc


@pytest.mark.parametrize("shape", sorted(KEYS))
@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_an_echoed_key_appears_in_no_output_file_or_log(fakes, tmp_path, make_run, transport, shape):
    with fakes.FakeOpenAIServer() as srv:
        key, work, proc = _run_case(tmp_path, make_run, srv.base_url, transport, shape)
        stats = srv.stats()
    assert "CODES" in proc.stdout, proc.stderr[-3000:]
    codes = json.loads(proc.stdout.split("CODES", 1)[1])
    assert codes == [1, 2, 2]  # two pairs failed after the retries (exit 1); 401 and 403 are fatal (exit 2)
    assert stats["paid"] == 2 and stats["requests"] >= 2 + 2 * 2 + 2  # the hostile server did answer and echo
    # The run did what it should: two graded pairs, the failed ones reported, the fatal errors named.
    assert read_qrels(work / "o.qrels").labels == {"q0": {"ok0": 2, "ok1": 1}}
    rows = [json.loads(line) for line in (work / "o.qrels.details.jsonl").read_text().splitlines()]
    judged = [r for r in rows if r["status"] == "judged"]
    assert len(judged) == 2 and all("***" in r["reason"] for r in judged)  # the echoed key, masked
    assert sorted(r["doc_id"] for r in rows if r["status"] == "failed") == ["r429", "r500"]
    assert "authentication failed for openai" in proc.stderr and "permission denied" in proc.stderr
    files = [p for p in work.rglob("*") if p.is_file()]
    assert {"o.qrels", "o.qrels.details.jsonl", "s.sqlite"} <= {p.name for p in files}
    for form in _forms(key):
        assert form not in proc.stdout and form not in proc.stderr, form
        for path in files:
            assert form.encode() not in path.read_bytes(), (path, form)
    # The store rows were written with the mask too (read back, not just absent from the bytes).
    import sqlite3

    with sqlite3.connect(work / "s.sqlite") as db:
        records = [json.loads(r) for (r,) in db.execute("SELECT record FROM judgments")]
    assert len(records) == 2 and all("***" in r["raw_answer"] for r in records)


def test_every_credential_variable_is_registered_on_the_litellm_transport(monkeypatch):
    from relgrade.judge import JudgeConfig
    from relgrade.judge.transport._call import Caller

    monkeypatch.setenv("ANTHROPIC_API_KEY", "0123456789abcdef0123456789abcdef")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-abcdef123")
    caller = Caller("anthropic/claude-3-5-haiku-latest", JudgeConfig(transport="litellm"))
    assert caller.transport == "litellm"
    assert {"0123456789abcdef0123456789abcdef", "tok-abcdef123"} <= set(caller.secrets)


def test_a_bug_in_relgrade_is_not_reported_as_no_answer(server, tmp_path, fake_key, monkeypatch):
    from relgrade.judge import JudgeConfig, Pair, judge_pairs
    from relgrade.judge.transport import _http

    def broken(*args, **kwargs):
        raise KeyError("an internal bug")

    monkeypatch.setattr(_http, "_error", broken)
    pairs = [Pair("q", "d", "query", "passage [[grade=1]] [[faults=500]]")]
    with pytest.raises(KeyError, match="an internal bug"):
        judge_pairs(pairs, model=MODEL, api_base=server.base_url, api_key=fake_key, store=tmp_path / "s.sqlite",
                    config=JudgeConfig(transport="http", max_attempts=3, backoff_initial=0.01), handle_sigint=False)
    assert server.stats()["requests"] == 1  # not retried as if the provider had failed
