"""Two runs that show one doc id with different texts: each (query, text) is judged on its own text."""

from __future__ import annotations

import json
from pathlib import Path

from relgrade.cli import main
from relgrade.io import read_qrels, read_run
from relgrade.judge import Pair, judge_pairs, pool

MODEL = "openai/gpt-4o-mini"


def _two_chunkers(tmp_path, make_run):
    a = make_run(tmp_path / "a.jsonl", {"q1": ("tides", [("d1", "chunker A text [[grade=3]]"),
                                                          ("d2", "shared text [[grade=1]]")])})
    b = make_run(tmp_path / "b.jsonl", {"q1": ("tides", [("d1", "chunker B text [[grade=0]]"),
                                                          ("d2", "shared text [[grade=1]]"),
                                                          ("d3", "only in B [[grade=2]]")])})
    return a, b


def test_pool_keeps_each_runs_text(tmp_path, make_run):
    a, b = _two_chunkers(tmp_path, make_run)
    pairs = pool([read_run(a), read_run(b)], depth=10)
    assert [(p.doc_id, p.text[:9], p.runs) for p in pairs] == [
        ("d1", "chunker A", (0,)), ("d1", "chunker B", (1,)), ("d2", "shared te", (0, 1)), ("d3", "only in B", (1,))]
    # a corpus, when given, is the text every run showed
    pairs = pool([read_run(a), read_run(b)], depth=10, corpus={"d1": "corpus text"})
    assert [(p.doc_id, p.text[:9], p.runs) for p in pairs][0] == ("d1", "corpus te", (0, 1))


def test_each_text_is_judged_and_qrels_hold_the_first_runs(server, tmp_path, make_run, fake_key):
    a, b = _two_chunkers(tmp_path, make_run)
    result = judge_pairs(pool([read_run(a), read_run(b)], depth=10), model=MODEL, api_base=server.base_url,
                         api_key=fake_key, store=tmp_path / "s.sqlite", handle_sigint=False)
    assert server.stats()["paid"] == 4  # d1 twice (two texts), d2 once (one text shown by both), d3
    got = {(j.doc_id, j.runs): j.grade for j in result.judgments}
    assert got == {("d1", (0,)): 3, ("d1", (1,)): 0, ("d2", (0, 1)): 1, ("d3", (1,)): 2}
    assert result.qrels() == {"q1": {"d1": 3, "d2": 1, "d3": 2}}  # d1: the first run's text, never B's in its place
    assert list(result.conflicts()) == [("q1", "d1")]
    # Reversing the run order gives run B's grade for d1: the qrels follow the first run given.
    rev = judge_pairs(pool([read_run(b), read_run(a)], depth=10), model=MODEL, api_base=server.base_url,
                      api_key=fake_key, store=tmp_path / "s.sqlite", handle_sigint=False)
    assert rev.qrels()["q1"]["d1"] == 0 and server.stats()["paid"] == 4  # and nothing paid again


def test_cli_details_say_which_text_each_grade_belongs_to(server, tmp_path, make_run, fake_key, monkeypatch, capsys):
    import hashlib

    a, b = _two_chunkers(tmp_path, make_run)
    out = tmp_path / "o.qrels"
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    code = main(["judge", "--run", str(a), "--run", str(b), "--model", MODEL, "--api-base", server.base_url,
                 "--store", str(tmp_path / "s.sqlite"), "--out", str(out)])
    assert code == 0
    assert "1 doc ids were shown with different texts" in capsys.readouterr().out
    rows = [json.loads(line) for line in Path(f"{out}.details.jsonl").read_text().splitlines()]
    d1 = [r for r in rows if r["doc_id"] == "d1"]
    assert [(r["runs"], r["grade"]) for r in d1] == [([0], 3), ([1], 0)]
    assert all(r["text_sha256"] == hashlib.sha256(r["text"].encode()).hexdigest() for r in rows)
    assert read_qrels(out).labels == {"q1": {"d1": 3, "d2": 1, "d3": 2}}


def test_hand_built_pairs_still_work(server, tmp_path, fake_key):
    result = judge_pairs([Pair("q", "d", "query", "text [[grade=2]]")], model=MODEL, api_base=server.base_url,
                         api_key=fake_key, store=tmp_path / "s.sqlite", handle_sigint=False)
    assert result.qrels() == {"q": {"d": 2}} and "runs" not in result.judgments[0].to_dict()
