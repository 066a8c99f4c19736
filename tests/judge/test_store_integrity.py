"""A store row that was altered is refused, never a grade in the qrels (issue 24): each row's integrity check ties its
grade to its raw answer. On a real SQLite file and a real PostgreSQL store: judge 40 pairs, alter the rows with SQL
(each class of alteration), re-run ``relgrade judge``: exit 2 with one line naming the store, nothing written, no
call paid. Rows written before the check existed (no ``check`` in the record) open as they are and are verified by
re-parsing their stored answer."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main
from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"
ALTERATIONS = {
    "grade_flipped": "UPDATE judgments SET grade = 3 - grade WHERE status = 'judged'",
    "one_grade_moved_in_scale": "UPDATE judgments SET grade = CASE WHEN grade = 3 THEN 0 ELSE grade + 1 END WHERE key = "
                                "(SELECT MIN(key) FROM judgments WHERE status = 'judged')",
    "unjudged_made_judged": "UPDATE judgments SET status = 'judged', grade = 2 WHERE status = 'unjudged'",
    "judged_made_unjudged": "UPDATE judgments SET status = 'unjudged', grade = NULL WHERE key = "
                            "(SELECT MIN(key) FROM judgments WHERE status = 'judged')",
    "answer_and_grade_edited_together": "UPDATE judgments SET grade = 0, record = REPLACE(record, "
                                        "'\\\"grade\\\": 3', '\\\"grade\\\": 0') WHERE grade = 3",
}


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    return request.getfixturevalue("pg_url")


def _sql(store: str, statement: str, args=()) -> None:
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store, autocommit=True) as db:
            db.execute(statement.replace("?", "%s") if args else statement, args or None)
    else:
        import sqlite3

        with sqlite3.connect(store) as db:
            db.execute(statement, args)
        db.close()


def _rows(store: str) -> list[tuple[str, str]]:
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as db:
            return db.execute("SELECT key, record FROM judgments").fetchall()
    import sqlite3

    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT key, record FROM judgments").fetchall()
    db.close()
    return rows


def _setup(server, tmp_path, make_run, store):
    spec = {f"q{q}": (f"question {q}", [(f"q{q}d{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]"
                                         + (" [[faults=garbage;garbage]]" if (q, d) == (0, 1) else ""))
                                        for d in range(8)]) for q in range(5)}
    run = make_run(tmp_path / "run.jsonl", spec)
    argv = ["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--store", store,
            "--out", str(tmp_path / "first.qrels")]
    assert main(argv) == 0
    assert server.stats()["paid"] == 40 + 1  # one pair asked twice (a repair), then unjudged
    return run


def _rerun(server, run, store, out):
    return main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--store", store,
                 "--out", str(out)])


@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_an_altered_row_is_one_line_error_never_a_grade(server, tmp_path, make_run, store, capsys, alteration,
                                                        fake_key, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = _setup(server, tmp_path, make_run, store)
    capsys.readouterr()
    _sql(store, ALTERATIONS[alteration])
    paid = server.stats()["paid"]
    out = tmp_path / "again.qrels"
    assert _rerun(server, run, store, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("relgrade: error:") and "the store was altered" in err[0], err
    assert ("postgresql://" in err[0]) if store.startswith("postgresql") else (store in err[0])
    assert not out.exists() and server.stats()["paid"] == paid


def test_rows_without_a_check_open_and_are_verified_by_reparsing(server, tmp_path, make_run, store, capsys,
                                                                 fake_key, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = _setup(server, tmp_path, make_run, store)
    first = read_qrels(tmp_path / "first.qrels").labels
    for key, record in _rows(store):  # what a store written before the check looks like
        rec = json.loads(record)
        assert len(rec.pop("check")) == 32
        _sql(store, "UPDATE judgments SET record = ? WHERE key = ?", (json.dumps(rec), key))
    paid = server.stats()["paid"]
    assert _rerun(server, run, store, tmp_path / "legacy.qrels") == 0
    assert read_qrels(tmp_path / "legacy.qrels").labels == first and server.stats()["paid"] == paid
    capsys.readouterr()
    _sql(store, ALTERATIONS["one_grade_moved_in_scale"])
    assert _rerun(server, run, store, tmp_path / "bad.qrels") == 2
    err = capsys.readouterr().err
    assert "its stored answer reads" in err and "the store was altered" in err
    assert not (tmp_path / "bad.qrels").exists()


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_half_an_emoji_in_an_answer_is_stored_as_a_replacement_character(server, tmp_path, make_run, fake_key,
                                                                         monkeypatch, transport):
    """A provider's answer holding a lone UTF-16 surrogate (not text: it cannot be written as UTF-8) is judged, and
    stored and written with U+FFFD in its place (issue 24)."""
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", "a passage [[grade=2]] [[half-emoji]]")])})
    out = tmp_path / "o.qrels"
    argv = ["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--transport", transport,
            "--store", str(tmp_path / "s.sqlite"), "--out", str(out)]
    assert main(argv) == 0 and main(argv) == 0  # the second run reads the stored row back
    assert read_qrels(out).labels == {"q1": {"d1": 2}}
    assert server.stats()["paid"] == 1
    (record,) = [json.loads(r) for _, r in _rows(str(tmp_path / "s.sqlite"))]
    assert record["raw_answer"].endswith("half emoji \ufffd")


@pytest.mark.parametrize("transport,usage", [("http", "-5"), ("http", "1e30"), ("http", '"12"'), ("http", "true"),
                                             ("litellm", "-5")])  # litellm itself refuses the other answers
def test_unbelievable_token_counts_online_make_the_cost_unknown(server, tmp_path, make_run, fake_key, monkeypatch,
                                                                capsys, transport, usage):
    """A provider's negative or absurd token count never becomes a negative or absurd cost (issue 24): the call's
    cost is unknown, said in the summary; the grade is kept."""
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", f"a passage [[grade=1]] [[usage={usage}]]"),
                                                                  ("d2", "another passage [[grade=3]]")])})
    out = tmp_path / "o.qrels"
    assert main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--transport", transport,
                 "--store", str(tmp_path / "s.sqlite"), "--out", str(out)]) == 0
    assert "(+1 calls of unknown price)" in capsys.readouterr().out
    assert read_qrels(out).labels == {"q1": {"d1": 1, "d2": 3}}
    rows = {r["doc_id"]: r for r in map(json.loads, (tmp_path / "o.qrels.details.jsonl").read_text().splitlines())}
    assert rows["d1"]["cost_usd"] is None and 0 < rows["d2"]["cost_usd"] < 0.01
    assert rows["d1"]["prompt_tokens"] == 0
