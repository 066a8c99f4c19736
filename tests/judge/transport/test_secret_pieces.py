"""Every piece of 12 or more characters of a key is masked in every output and store write, and a key given where a
name goes is refused without being shown (issue 34).

A hostile server (tests/fakes/openai_server.py, ``[[echo-key:HOW]]``) echoes pieces of the key it receives: its last
24 characters, its first 30, its middle, its halves on two lines, HTML- or JSON-escaped and cut short; in 200 answers
(prose, a JSON object, the reason) and in a 401's message. Then keys given in the wrong place: ``--api-key-env KEY``,
``--api-base`` with ``user:KEY@`` or ``?api-key=KEY``, ``--model KEY`` and ``--model openai/KEY``, and a key given
to a number option. Each run searches stdout, stderr and the bytes of every file written (qrels, details, the SQLite
store and its WAL) for every 12-character piece of the key and of its escaped forms.
"""

from __future__ import annotations

import html
import json
import sqlite3
from urllib.parse import quote

import pytest

from relgrade.cli import main
from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
KEYS = {
    "sk": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "html": "k<e>y&\"quote'x-77-Zt8Wq3Lp0Nv5Rb1Yc6",
}
PIECES = ("tail24", "head30", "middle", "split", "html_cut", "json_cut")


def _windows(key: str) -> set[str]:
    """Every 12-character piece of the key and of the forms it may be echoed in."""
    forms = {key, json.dumps(key)[1:-1], html.escape(key), html.escape(key, quote=False), quote(key, safe="")}
    return {f[i:i + 12] for f in forms for i in range(len(f) - 11)}


def _leaks(key: str, work, *texts: str) -> list[str]:
    found = [w for w in _windows(key) for t in texts if w in t]
    for path in work.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {w}" for w in _windows(key) if w.encode() in data]
    return found


@pytest.mark.parametrize("shape", sorted(KEYS))
@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_no_piece_of_an_echoed_key_is_shown_or_stored(server, tmp_path, make_run, monkeypatch, capsys, shape,
                                                     transport):
    key = KEYS[shape]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.delenv("RELGRADE_STORE", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [
        (f"d{i}", f"passage {i} [[grade={i % 4}]] [[echo-key:{how}]]") for i, how in enumerate(PIECES)])})
    common = ["--model", MODEL, "--api-base", server.base_url, "--transport", transport, "--max-attempts", "1"]
    assert main(["judge", "--run", str(run), *common, "--store", "s.sqlite", "--out", "o.qrels"]) == 0
    out, err = capsys.readouterr()
    assert read_qrels(work / "o.qrels").labels == {"q1": {f"d{i}": i % 4 for i in range(len(PIECES))}}
    rows = [json.loads(x) for x in (work / "o.qrels.details.jsonl").read_text().splitlines()]
    assert all("***" in r["reason"] for r in rows), [r["reason"] for r in rows]  # a piece under 12 may stay
    with sqlite3.connect(work / "s.sqlite") as db:
        records = [json.loads(r) for (r,) in db.execute("SELECT record FROM judgments")]
    db.close()
    assert len(records) == len(PIECES) and all("***" in r["raw_answer"] for r in records)
    for how in ("tail24", "head30", "split"):  # a 401 whose message echoes a piece of the key: fatal, one line
        fatal = make_run(tmp_path / f"f{how}.jsonl", {"q9": ("question", [
            ("d", f"passage [[grade=1]] [[faults=401]] [[echo-key:{how}]]")])})
        assert main(["judge", "--run", str(fatal), *common, "--store", f"f{how}.sqlite", "--out", f"f{how}.qrels"]) == 2
        fout, ferr = capsys.readouterr()
        assert "authentication failed" in ferr and len(ferr.strip().splitlines()) == 1, ferr
        out, err = out + fout, err + ferr
    assert not _leaks(key, work, out, err)


WRONG_PLACES = {
    "api_key_env_holds_the_key": lambda key, base: ["--api-base", base, "--api-key-env", key],
    "api_base_userinfo": lambda key, base: ["--api-base", base.replace("http://", f"http://judge:{key}@")],
    "api_base_query": lambda key, base: ["--api-base", f"{base}?api-key={key}"],
    "api_base_is_the_key": lambda key, base: ["--api-base", key],
    "model_is_the_key": lambda key, base: ["--api-base", base, "--model", key],
    "model_is_provider_slash_key": lambda key, base: ["--api-base", base, "--model", f"openai/{key}"],
    "key_given_to_a_number_option": lambda key, base: ["--api-base", base, "--concurrency", key],
}


CASES = [(place, env) for place in sorted(WRONG_PLACES) for env in ("key_in_env", "key_not_in_env")
         if (place, env) != ("key_given_to_a_number_option", "key_not_in_env")]  # an unknown key in --concurrency: click
# quotes it in its usage error, and nothing says it is a key


@pytest.mark.parametrize("place,env", CASES)
def test_a_key_given_in_the_wrong_place_is_refused_unshown(server, tmp_path, make_run, monkeypatch, capsys, place, env):
    key = KEYS["sk"]
    monkeypatch.setenv("OPENAI_API_KEY", key if env == "key_in_env" else "sk-fake-7Qm3xZ9pL2vR8tK4nW6yB1cD5")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", "a passage [[grade=2]]")])})
    extra = WRONG_PLACES[place](key, server.base_url)
    argv = ["judge", "--run", str(run), "--model", MODEL, *extra, "--store", "s.sqlite"]
    for tail in (["--out", "o.qrels"], ["--dry-run"]):
        code = main(argv + tail)
        out, err = capsys.readouterr()
        one_line = len(err.strip().splitlines()) == 1 or "Invalid value for '--concurrency'" in err  # click's usage
        assert code == 2 and one_line, (code, err)
        assert not _leaks(key, work, out, err), err
    assert server.stats()["paid"] == 0 and not (work / "s.sqlite").exists()
