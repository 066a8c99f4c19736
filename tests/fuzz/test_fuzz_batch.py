"""``judge --batch`` against a hostile batch endpoint (issue 24), by class of input: a provider that echoes the API
key (every key shape, every place a batch answer can carry text), that answers malformed objects (every field of
the batch object, the created batch, the uploaded file, every field of a result line, token counts, logprobs,
duplicate lines), unreadable result files (unterminated, not UTF-8, a list line, 404), and a status endpoint that
answers 500 or HTML for ever. The endpoint is tests/fakes/batch_server.py on 127.0.0.1.

Every case runs ``relgrade judge --batch`` in this process, then ``--batch-status``; it ends in one of three right
ways: exit 2 with one ``relgrade: error:`` line, exit 1 with the failed pairs reported, or exit 0 with every grade
right. Never a traceback; never the key, in any form, in stdout, stderr, the qrels, the details or the store's bytes.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from relgrade.cli import main

N = 6
KEYS = {
    "sk_proj": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB12",
    "sk_ant": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-AbCdEf",
    "hex20": "9f86d081884c7d659a2f",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "aiza": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "regex": "k(e)y.*+?^$[x]{2}|\\d-77",
    "html": "k<e>y&\"quote'x-77",
}


def _forms(key: str) -> set[str]:
    in_json = json.dumps(key)[1:-1]
    return {key, in_json, json.dumps(in_json)[1:-1], html.escape(key), html.escape(key, quote=False),
            quote(key, safe="")}


def once(f):
    """Apply a mutation to the first answer of its route only (the next batch is answered normally)."""
    state = {"done": False}

    def g(value, key):
        if state["done"]:
            return value
        state["done"] = True
        return f(value, key)

    return g


def on_lines(f):
    """A mutation of every JSON line of a result file."""
    def g(raw: bytes, key):
        rows = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
        out = []
        for row in rows:
            out.extend(f(row, key))
        return "".join(json.dumps(r) + "\n" for r in out).encode()

    return g


def _body(row):
    return row["response"]["body"]


def _write_run(path: Path, extra=lambda i: "") -> Path:
    with open(path, "w") as fh:
        fh.write(json.dumps({"query_id": "q0", "query": "what is asked here",
                             "results": [{"doc_id": f"d{i}", "text": f"chunk {i} [[grade={i % 4}]]{extra(i)}"}
                                         for i in range(N)]}) + "\n")
    return path


def _judge(tmp_path, monkeypatch, capsys, server, *, model="openai/gpt-4o-mini", key="sk-fake-key-123456",
           extra=lambda i: "", args=()):
    env = "ANTHROPIC_API_KEY" if model.startswith("anthropic/") else "OPENAI_API_KEY"
    monkeypatch.setenv(env, key)
    monkeypatch.delenv("RELGRADE_STORE", raising=False)
    run = _write_run(tmp_path / "run.jsonl", extra)
    store, out = tmp_path / "s.sqlite", tmp_path / "o.qrels"
    argv = ["judge", "--run", str(run), "--model", model, "--api-base", server.base_url, "--store", str(store),
            "--out", str(out), "--batch", "--poll-interval", "0.02", "--max-attempts", "1", *args]
    code = main(argv)
    stdout, stderr = capsys.readouterr()
    assert main(["judge", "--batch-status", "--store", str(store)]) == 0
    status_out, status_err = capsys.readouterr()
    return code, stdout + status_out, stderr + status_err


def _check(code, out, err, tmp_path, key=None, *, codes=(0, 1, 2)):
    assert code in codes, (code, out, err)
    assert "Traceback" not in out + err
    errors = [x for x in err.splitlines() if x.startswith("relgrade: error:")]
    others = [x for x in err.splitlines() if x.strip() and not x.startswith("relgrade: error:")]
    assert all(x.startswith(("batches: ", "waiting for ", "1 pairs failed", "2 pairs failed", "3 pairs failed",
                             "4 pairs failed", "5 pairs failed", "6 pairs failed")) for x in others), others
    assert len(errors) == (1 if code == 2 else 0), err
    if key is not None:
        files = [p for p in tmp_path.rglob("*") if p.is_file()]
        for form in _forms(key):
            assert form not in out and form not in err, (form, out, err)
            for path in files:
                assert form.encode() not in path.read_bytes(), (path, form)
    return errors[0] if errors else None


def _grades_right(tmp_path):
    lines = (tmp_path / "o.qrels").read_text().splitlines()
    got = {x.split()[2]: int(x.split()[3]) for x in lines}
    assert got == {f"d{i}": i % 4 for i in range(N)}, got


# -- the key, echoed everywhere ---------------------------------------------------------------------------------------

ECHO = {  # where the provider puts the key: (mutate, marker in a chunk, model, expected exit codes)
    "answer": ({}, lambda i: " [[echo-key]]", "openai/gpt-4o-mini", (0,)),
    "answer_anthropic": ({}, lambda i: " [[echo-key]]", "anthropic/claude-haiku-4-5", (0,)),
    "line_error": ({}, lambda i: " [[echo-key]] [[faults=500;500;500]]" if i == 1 else "", "openai/gpt-4o-mini", (1,)),
    "batch_id": ({"create": lambda b, k: {**b, "id": f"batch_{k}"}}, None, "openai/gpt-4o-mini", (2,)),
    "file_id": ({"upload": lambda b, k: {**b, "id": k}}, None, "openai/gpt-4o-mini", (2,)),
    "output_file_id": ({"status": lambda b, k: {**b, "output_file_id": k} if b.get("output_file_id") else b},
                       None, "openai/gpt-4o-mini", (2,)),
    "batch_errors": ({"status": lambda b, k: {**b, "status": "failed", "errors": {"data": [{"message": f"key {k}"}]}}},
                     None, "openai/gpt-4o-mini", (1,)),
    "counts": ({"status": lambda b, k: {**b, "request_counts": {k: 1, "total": 6}}}, None, "openai/gpt-4o-mini", (0,)),
    "status_401": ({"status": lambda b, k: (_ for _ in ()).throw(PermissionError(f"Incorrect API key {k}"))},
                   None, "openai/gpt-4o-mini", (2,)),
    "create_401": ({"create": lambda b, k: (_ for _ in ()).throw(PermissionError(f"Incorrect API key provided: {k}"))},
                   None, "anthropic/claude-haiku-4-5", (2,)),
    "results_url": ({"status": lambda b, k: {**b, "results_url": f"http://evil.example/{k}"} if b.get("results_url")
                     else b}, None, "anthropic/claude-haiku-4-5", (2,)),
    "output_line": ({"output": lambda raw, k: raw + f'{{"custom_id": "{k}", "oops": "{k}"}}\n'.encode()}, None,
                    "openai/gpt-4o-mini", (0, 2)),
}


@pytest.mark.parametrize("place", sorted(ECHO))
@pytest.mark.parametrize("shape", sorted(KEYS))
def test_an_echoed_key_is_in_no_output_file_or_store(tmp_path, monkeypatch, capsys, batch_fakes, shape, place):
    key = KEYS[shape]
    mutate, marker, model, codes = ECHO[place]
    with batch_fakes.FakeBatchServer(delay=0.02, mutate=mutate) as server:
        code, out, err = _judge(tmp_path, monkeypatch, capsys, server, model=model, key=key,
                                extra=marker or (lambda i: ""))
        chat = server.chat.stats()
    _check(code, out, err, tmp_path, key, codes=codes)
    if place.startswith("answer"):
        assert chat["paid"] >= N  # the hostile server did answer, echoing the key
        _grades_right(tmp_path)
        details = (tmp_path / "o.qrels.details.jsonl").read_text()
        assert details.count("***") >= N  # the echoed key, masked, in every reason


# -- malformed provider answers ---------------------------------------------------------------------------------------

def _drop(d, k):
    return {x: v for x, v in d.items() if x != k}


MALFORMED = {  # class: (mutate, model, expected exit codes, "right" = every grade right when exit 0)
    "status_not_object": ({"status": lambda b, k: [b]}, "openai", (2,)),
    "status_unknown": ({"status": lambda b, k: {**b, "status": "weird"}}, "openai", (2,)),
    "status_other_id": ({"status": lambda b, k: {**b, "id": "batch_other"}}, "openai", (2,)),
    "counts_list": ({"status": lambda b, k: {**b, "request_counts": [1, 2]}}, "openai", (2,)),
    "counts_negative": ({"status": lambda b, k: {**b, "request_counts": {"total": -3}}}, "openai", (2,)),
    "counts_bool": ({"status": lambda b, k: {**b, "request_counts": {"total": True}}}, "openai", (2,)),
    "errors_string": ({"status": lambda b, k: {**b, "errors": "bad"}}, "openai", (2,)),
    "errors_data_string": ({"status": lambda b, k: {**b, "errors": {"data": "bad"}}}, "openai", (2,)),
    "file_id_int": ({"status": lambda b, k: {**b, "output_file_id": 7} if b.get("output_file_id") else b}, "openai", (2,)),
    "file_id_path": ({"status": lambda b, k: {**b, "output_file_id": "../../v1/batches"} if b.get("output_file_id")
                      else b}, "openai", (2,)),
    "created_at_string": ({"status": lambda b, k: {**b, "created_at": "yesterday"}}, "openai", (2,)),
    "created_no_id": ({"create": lambda b, k: _drop(b, "id")}, "openai", (2,)),
    "created_id_list": ({"create": lambda b, k: {**b, "id": ["x"]}}, "openai", (2,)),
    "upload_not_object": ({"upload": lambda b, k: "ok"}, "openai", (2,)),
    "output_404": ({"output": once(lambda raw, k: (_ for _ in ()).throw(LookupError()))}, "openai", (2,)),
    "output_unterminated": ({"output": once(lambda raw, k: raw[:-15])}, "openai", (2,)),
    "output_list_line": ({"output": once(lambda raw, k: raw + b"[1, 2, 3]\n")}, "openai", (2,)),
    "output_not_utf8": ({"output": once(lambda raw, k: raw + b'{"custom_id": "\xff\xfe"}\n')}, "openai", (2,)),
    "output_no_custom_id": ({"output": once(lambda raw, k: raw + b'{"response": null}\n')}, "openai", (2,)),
    "line_response_list": ({"output": once(on_lines(lambda r, k: [{**r, "response": [1]}]))}, "openai", (0,)),
    "line_body_string": ({"output": once(on_lines(lambda r, k: [{**r, "response": {**r["response"], "body": "x"}}]))},
                         "openai", (0,)),
    "line_status_string": ({"output": once(on_lines(lambda r, k: [{**r, "response": {**r["response"],
                                                                                      "status_code": "200"}}]))},
                           "openai", (0,)),
    "line_choices_empty": ({"output": once(on_lines(lambda r, k: [_set(r, ["choices"], [])]))}, "openai", (0,)),
    "line_message_int": ({"output": once(on_lines(lambda r, k: [_set(r, ["choices", 0, "message"], 5)]))}, "openai", (0,)),
    "line_content_int": ({"output": once(on_lines(lambda r, k: [_set(r, ["choices", 0, "message", "content"], 7)]))},
                         "openai", (0,)),
    "line_content_list": ({"output": once(on_lines(lambda r, k: [_set(r, ["choices", 0, "message", "content"],
                                                                       ["a"])]))}, "openai", (0,)),
    "line_error_int": ({"output": once(on_lines(lambda r, k: [{**r, "error": 5}]))}, "openai", (0,)),
    "logprobs_garbage": ({"output": on_lines(lambda r, k: [_set(r, ["choices", 0, "logprobs"], {"content": 5})])},
                         "openai", (0,)),
    "logprobs_overflow": ({"output": on_lines(lambda r, k: [_set(r, ["choices", 0, "logprobs"], {"content": [
        {"token": 5}, {"token": "2", "top_logprobs": [{"token": "2", "logprob": 1000.0}, {"token": 3}]}]})])},
                          "openai", (0,)),
    "duplicate_identical": ({"output": on_lines(lambda r, k: [r, r])}, "openai", (0,)),
    "content_half_emoji": ({"output": on_lines(lambda r, k: [_set(r, ["choices", 0, "message", "content"], _body(r)[
        "choices"][0]["message"]["content"] + " \ud83d") if r.get("response") else r])}, "openai", (0,)),
    "anthropic_status_unknown": ({"status": lambda b, k: {**b, "processing_status": "weird"}}, "anthropic", (2,)),
    "anthropic_counts_string": ({"status": lambda b, k: {**b, "request_counts": "many"}}, "anthropic", (2,)),
    "anthropic_result_list": ({"output": once(on_lines(lambda r, k: [{**r, "result": [1]}]))}, "anthropic", (0,)),
    "anthropic_content_string": ({"output": once(on_lines(lambda r, k: [_set_a(r, ["content"], "text")]))},
                                 "anthropic", (0,)),
    "anthropic_text_int": ({"output": once(on_lines(lambda r, k: [_set_a(r, ["content", 0, "text"], 3)]))},
                           "anthropic", (0,)),
    "anthropic_unterminated": ({"output": once(lambda raw, k: raw[:-9])}, "anthropic", (2,)),
}
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}


def _set(row, path, value):
    row = json.loads(json.dumps(row))
    if row.get("response") is None:
        return row
    target = _body(row)
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return row


def _set_a(row, path, value):
    row = json.loads(json.dumps(row))
    message = (row.get("result") or {}).get("message")
    if message is None:
        return row
    target = message
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return row


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_one_line_or_the_right_result(tmp_path, monkeypatch, capsys, batch_fakes, case):
    mutate, provider, codes = MALFORMED[case]
    with batch_fakes.FakeBatchServer(delay=0.02, mutate=mutate) as server:
        code, out, err = _judge(tmp_path, monkeypatch, capsys, server, model=MODELS[provider])
        if code == 0:
            _grades_right(tmp_path)
        if code == 2 and case.startswith(("output_", "anthropic_unterminated")):
            # unreadable results: the readable answers are kept, the batch is closed, the next run finishes
            line = _check(code, out, err, tmp_path, codes=codes)
            assert "cannot be read" in line and "asked again by the next run" in line, line
            again = _judge(tmp_path, monkeypatch, capsys, server, model=MODELS[provider])
            _check(*again, tmp_path, codes=(0,))
            _grades_right(tmp_path)
            paid = server.chat.stats()["by_pair"]
            assert sum(v["paid"] for v in paid.values()) <= N + (N if case == "output_404" else 1)
            return
    _check(code, out, err, tmp_path, codes=codes)


@pytest.mark.parametrize("tokens", [-5, 1e30, "12", True, None, 10 ** 12])
def test_unbelievable_token_counts_make_the_cost_unknown_never_negative(tmp_path, monkeypatch, capsys, batch_fakes,
                                                                       tokens):
    def usage(row, key):
        if row.get("response") is None:
            return [row]
        return [_set(row, ["usage"], {"prompt_tokens": tokens, "completion_tokens": 3}) if row["custom_id"][0] in "02"
                else row]

    with batch_fakes.FakeBatchServer(delay=0.02, mutate={"output": on_lines(usage)}) as server:
        code, out, err = _judge(tmp_path, monkeypatch, capsys, server)
    _check(code, out, err, tmp_path, codes=(0,))
    _grades_right(tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "o.qrels.details.jsonl").read_text().splitlines()]
    costs = {r["doc_id"]: r["cost_usd"] for r in rows}
    assert costs["d0"] is None and costs["d2"] is None  # custom ids 0-... and 2-...: unknown, not absurd
    assert all(c is None or 0 <= c < 0.01 for c in costs.values()), costs
    assert "(+2 calls of unknown price)" in out


def test_conflicting_duplicate_lines_are_never_chosen_between(tmp_path, monkeypatch, capsys, batch_fakes):
    def twice(row, key):
        if row.get("response") is None or not row["custom_id"].startswith("1-"):
            return [row]
        other = _set(row, ["choices", 0, "message", "content"], '{"grade": 0, "reason": "the other answer"}')
        return [row, other]

    with batch_fakes.FakeBatchServer(delay=0.02, mutate={"output": on_lines(twice)}) as server:
        code, out, err = _judge(tmp_path, monkeypatch, capsys, server)
        chat = server.chat.stats()
    _check(code, out, err, tmp_path, codes=(0,))
    rows = {r["doc_id"]: r for r in map(json.loads, (tmp_path / "o.qrels.details.jsonl").read_text().splitlines())}
    assert rows["d1"]["status"] == "unjudged" and rows["d1"]["grade"] is None
    assert "2 different answers" in rows["d1"]["error"] and "grades 1, 0" in rows["d1"]["error"]
    assert "the other answer" in rows["d1"]["raw_answer"]
    labels = (tmp_path / "o.qrels").read_text()
    assert " d1 " not in labels and len(labels.splitlines()) == N - 1
    assert chat["paid"] == N  # asked once; the duplicate is the provider's


@pytest.mark.parametrize("fault", ["500", "html"])
def test_a_status_endpoint_that_never_answers_stops_with_one_line(tmp_path, monkeypatch, capsys, batch_fakes, fault):
    with batch_fakes.FakeBatchServer(delay=0.02, status_fault=fault) as server:
        code, out, err = _judge(tmp_path, monkeypatch, capsys, server)
        polls = server.stats()["status_requests"]
    line = _check(code, out, err, tmp_path, codes=(2,))
    assert "could not be read 10 times in a row" in line and "re-run the same command" in line, line
    assert polls == 10
    assert "waiting for 1 provider batch(es)" in err and "status not readable (9 of 10" in err
    assert "1 pending batches" in out  # kept for the next run
