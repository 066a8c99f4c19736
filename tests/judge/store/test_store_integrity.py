"""A store row that was altered is refused, never a grade in the qrels (issue 24): each row's integrity check ties its
grade to its raw answer. On a real SQLite file and a real PostgreSQL store: judge 40 pairs, alter the rows with SQL
(each class of alteration), re-run ``relgrade judge``: exit 2 with one line naming the store, nothing written, no
call paid. Stores written before the seal (rows with the older check, or none) are sealed as found by the first
writer; a legacy row altered before that is still refused (issue 34)."""

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


def _rows(store: str, columns: str = "key, record", table: str = "judgments") -> list[tuple]:
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as db:
            return db.execute(f"SELECT {columns} FROM {table}").fetchall()
    import sqlite3

    with sqlite3.connect(store) as db:
        rows = db.execute(f"SELECT {columns} FROM {table}").fetchall()
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
    _refused(server, run, store, tmp_path / "again.qrels", capsys)


def _refused(server, run, store, out, capsys) -> None:
    """A re-run on the altered store: exit 2, one line naming the store, no output, no call."""
    paid = server.stats()["paid"]
    assert _rerun(server, run, store, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("relgrade: error:") and "the store was altered" in err[0], err
    assert ("postgresql://" in err[0]) if store.startswith("postgresql") else (store in err[0])
    assert not out.exists() and server.stats()["paid"] == paid


def _edit(store: str, pick, change, *, drop_seal: bool) -> int:
    """Apply ``change(row dict)`` to the rows ``pick(row dict)`` selects, rewriting their grade, status and record
    (its seal removed first when ``drop_seal``); returns how many rows changed."""
    n = 0
    for key, status, grade, record in _rows(store, "key, status, grade, record"):
        row = {"key": key, "status": status, "grade": grade, "record": json.loads(record)}
        if not pick(row):
            continue
        if drop_seal:  # whatever the integrity field is called (``check`` before the seal)
            row["record"].pop("seal", None)
            row["record"].pop("check", None)
        change(row)
        _sql(store, "UPDATE judgments SET status = ?, grade = ?, record = ? WHERE key = ?",
             (row["status"], row["grade"], json.dumps(row["record"]), key))
        n += 1
    return n


def _consistent_3_to_0(row) -> None:
    """Grade 3 to 0 with the raw answer changed to match (what re-parsing alone would believe)."""
    row["grade"] = 0
    row["record"]["raw_answer"] = row["record"]["raw_answer"].replace('"grade": 3', '"grade": 0')


def _judged_3(row) -> bool:
    return row["grade"] == 3


def _recompute_v1_check(row) -> None:
    from relgrade.judge.store._integrity import row_check

    _consistent_3_to_0(row)
    row["record"]["check"] = row_check(row["key"], row["status"], row["grade"], row["record"])


def _drop_primary_key_and_add_a_duplicate(store: str) -> int:
    """A judgments table without its primary key, and a second, unsealed row for a judged key (grade 3 made 0)."""
    key, model, prompt_hash, status, grade, record, created = next(
        r for r in _rows(store, "key, model, prompt_hash, status, grade, record, created") if r[4] == 3)
    if store.startswith("postgresql://"):
        _sql(store, "ALTER TABLE judgments DROP CONSTRAINT judgments_pkey")
    else:
        for statement in ("ALTER TABLE judgments RENAME TO j_old",
                          "CREATE TABLE judgments (key TEXT, model TEXT NOT NULL, prompt_hash TEXT NOT NULL, status TEXT "
                          "NOT NULL, grade INTEGER, record TEXT NOT NULL, created REAL NOT NULL)",
                          "INSERT INTO judgments SELECT * FROM j_old", "DROP TABLE j_old"):
            _sql(store, statement)
    row = {"key": key, "status": status, "grade": grade, "record": json.loads(record)}
    _consistent_3_to_0(row)
    row["record"].pop("seal", None)
    row["record"].pop("check", None)
    _sql(store, "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
         (key, model, prompt_hash, status, row["grade"], json.dumps(row["record"]), created))
    return 1


SEAL_ATTACKS = {  # issue 34: what a seal that can be removed let through
    "seal_removed_grade_and_answer_edited": lambda s: _edit(s, _judged_3, _consistent_3_to_0, drop_seal=True),
    "every_seal_removed_marker_kept": lambda s: _edit(s, lambda r: True, lambda r: _judged_3(r) and
                                                      _consistent_3_to_0(r), drop_seal=True),
    "marker_deleted_one_seal_removed": lambda s: (_sql(s, "DROP TABLE relgrade_meta"), _edit(
        s, _judged_3, _consistent_3_to_0, drop_seal=True))[1],
    "judged_made_unjudged_without_seal": lambda s: _edit(
        s, _judged_3, lambda r: r.update(status="unjudged", grade=None), drop_seal=True),
    "distribution_edited": lambda s: _edit(s, lambda r: r["record"].get("distribution"), lambda r: r["record"].update(
        distribution={"0": 0.97, "1": 0.01, "2": 0.01, "3": 0.01}), drop_seal=False),
    "expected_grade_edited": lambda s: _edit(s, _judged_3, lambda r: r["record"].update(expected_grade=0.1),
                                             drop_seal=False),
    "reason_edited": lambda s: _edit(s, _judged_3, lambda r: r["record"].update(reason="not relevant at all"),
                                     drop_seal=False),
    "cost_edited": lambda s: _edit(s, lambda r: True, lambda r: r["record"].update(cost_usd=0.0), drop_seal=False),
    "v1_check_recomputed": lambda s: _edit(s, _judged_3, _recompute_v1_check, drop_seal=True),
    "duplicate_row_without_seal": _drop_primary_key_and_add_a_duplicate,
}


@pytest.mark.parametrize("attack", sorted(SEAL_ATTACKS))
def test_a_removed_or_bypassed_seal_is_refused(server, tmp_path, make_run, store, capsys, fake_key, monkeypatch,
                                               attack):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = _setup(server, tmp_path, make_run, store)
    assert SEAL_ATTACKS[attack](store) >= 1
    capsys.readouterr()
    _refused(server, run, store, tmp_path / "again.qrels", capsys)
    assert main(["judge", "--run", str(run), "--model", MODEL, "--store", store, "--dry-run"]) == 2  # read-only too
    assert "the store was altered" in capsys.readouterr().err


def make_legacy(store: str, *, v1: bool) -> None:
    """Turn a store into one written before the seal: no marker, no seals; with ``v1`` the older check on every row
    (what relgrade wrote after issue 24), else no check at all (before it)."""
    from relgrade.judge.store._integrity import row_check

    _sql(store, "DROP TABLE relgrade_meta")
    for key, status, grade, record in _rows(store, "key, status, grade, record"):
        rec = json.loads(record)
        assert len(rec.pop("seal")) == 32
        if v1:
            rec["check"] = row_check(key, status, grade, rec)
        _sql(store, "UPDATE judgments SET record = ? WHERE key = ?", (json.dumps(rec), key))


@pytest.mark.parametrize("v1", [True, False], ids=["v1_check", "no_check"])
def test_a_store_written_before_the_seal_opens_and_is_sealed_as_found(server, tmp_path, make_run, store, capsys,
                                                                     fake_key, monkeypatch, v1):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = _setup(server, tmp_path, make_run, store)
    first = read_qrels(tmp_path / "first.qrels").labels
    make_legacy(store, v1=v1)
    paid = server.stats()["paid"]
    assert _rerun(server, run, store, tmp_path / "legacy.qrels") == 0
    assert read_qrels(tmp_path / "legacy.qrels").labels == first and server.stats()["paid"] == paid
    records = [json.loads(r) for (r,) in _rows(store, "record")]
    assert all(len(r["seal"]) == 32 and r["sealed_from"] == ("v1" if v1 else "unchecked") for r in records)
    assert _rows(store, "value", "relgrade_meta") == [("2",)]
    capsys.readouterr()
    _sql(store, ALTERATIONS["one_grade_moved_in_scale"])  # after the migration: the seal catches it
    assert _rerun(server, run, store, tmp_path / "bad.qrels") == 2
    assert "does not match its seal" in capsys.readouterr().err


@pytest.mark.parametrize("v1", [True, False], ids=["v1_check", "no_check"])
def test_a_row_altered_before_the_seal_is_refused_after_it(server, tmp_path, make_run, store, capsys, fake_key,
                                                           monkeypatch, v1):
    """A legacy row altered before this version first opened the store is not sealed as found: its older check
    fails (left unsealed, refused), or it has none and re-parsing its answer catches it."""
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = _setup(server, tmp_path, make_run, store)
    make_legacy(store, v1=v1)
    _sql(store, ALTERATIONS["one_grade_moved_in_scale"])
    paid = server.stats()["paid"]
    capsys.readouterr()
    assert _rerun(server, run, store, tmp_path / "bad.qrels") == 2
    err = capsys.readouterr().err
    assert "the store was altered" in err and len(err.strip().splitlines()) == 1
    assert ("has no seal" if v1 else "its stored answer reads") in err, err
    assert not (tmp_path / "bad.qrels").exists() and server.stats()["paid"] == paid


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
