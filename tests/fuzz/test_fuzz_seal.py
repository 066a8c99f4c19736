"""Seal removal and row edits, generated (issue 34): a store of sealed rows (judged with a distribution, unjudged, a
pending repair) is edited with SQL by a seeded generator, one edit per case, on a real SQLite file and on PostgreSQL:
a column (grade, status, model, prompt hash, the unsealed ``created``), any field of the record changed, added or
removed, the seal removed or changed, the record reformatted, swapped with another row's or cut short, a row copied
under another key, a second row for a key, the store's seal marker deleted with a seal.

Every case ends one of two right ways, read-only (a dry run) and writable: every row reads back exactly as written,
or the read is one :class:`InputError` saying the store was altered or the row is not a valid judgment. Never a row
that reads back different.
"""

from __future__ import annotations

import json
import random

import pytest

from relgrade._errors import InputError

ROWS = 12
N_SQLITE, N_POSTGRES = 160, 40


def _records() -> list[tuple[str, str, int | None, dict]]:
    out = []
    for i in range(ROWS):
        status = ("judged", "judged", "unjudged", "pending_repair")[i % 4]
        grade = i % 4 if status == "judged" else None
        rec = {"reason": f"reason {i}", "raw_answer": json.dumps({"grade": grade, "reason": f"reason {i}"}),
               "error": None if status == "judged" else "no grade", "prompt_tokens": 100 + i, "completion_tokens": 12,
               "cost_usd": 0.0001 * i, "latency_s": 0.1 * i, "calls": 1}
        if status == "judged":
            rec["distribution"] = {"0": 0.1, "1": 0.2, "2": 0.3, "3": 0.4}
            rec["expected_grade"] = 2.0
        out.append((f"{i:02d}" + "k" * 62, status, grade, rec))
    return out


def _execute(store: str, statement: str, args=()):
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store, autocommit=True) as db:
            cur = db.execute(statement.replace("?", "%s"), args or None)
            return cur.fetchall() if cur.description else []
    import sqlite3

    with sqlite3.connect(store) as db:
        rows = db.execute(statement, args).fetchall()
    db.close()
    return rows


def _row(store: str, rng: random.Random) -> tuple:
    rows = _execute(store, "SELECT key, model, prompt_hash, status, grade, record, created FROM judgments ORDER BY key")
    return rng.choice(rows), rows


def _set_record(store, key, text):
    _execute(store, "UPDATE judgments SET record = ? WHERE key = ?", (text, key))


def _edit_field(store, rng):
    (key, *_, record, _created), _ = _row(store, rng)
    rec = json.loads(record)
    field = rng.choice(sorted(rec))
    how = rng.choice(("change", "drop", "add"))
    if how == "drop":
        rec.pop(field)
    elif how == "add":
        rec[rng.choice(("note", "grade", "status", "check", field + "_2"))] = rng.choice((0, 3, "x", None, 1.5))
    else:
        old = rec[field]
        rec[field] = rng.choice([v for v in (0, 1, 3, 2.5, "edited", None, {"0": 1.0}, old) if v != old])
    seal = rec.pop("seal", None)
    text = json.dumps(rec)
    if seal is not None and field != "seal" and rng.random() < 0.7:  # keep the old seal where it was
        text = text[:-1] + f', "seal": "{seal}"}}'
    _set_record(store, key, text)
    return f"{how} {field}"


def _column(store, rng):
    (key, model, prompt_hash, status, grade, *_), _ = _row(store, rng)
    column, value = rng.choice((("grade", rng.choice((0, 1, 2, 3, None))), ("status", rng.choice(
        ("judged", "unjudged", "pending_repair"))), ("model", "openai/gpt-4o"), ("prompt_hash", "0" * 12),
        ("created", 0.0)))
    _execute(store, f"UPDATE judgments SET {column} = ? WHERE key = ?", (value, key))
    return f"{column} = {value}"


def _seal_text(store, rng):
    (key, *_, record, _created), _ = _row(store, rng)
    how = rng.choice(("remove", "flip", "reformat", "cut", "uppercase"))
    if how == "remove":
        rec = json.loads(record)
        rec.pop("seal")
        text = json.dumps(rec)
    elif how == "flip":
        i = record.rindex('"seal": "') + 9 + rng.randrange(32)
        text = record[:i] + ("0" if record[i] != "0" else "1") + record[i + 1:]
    elif how == "reformat":
        text = json.dumps(json.loads(record), indent=rng.choice((None, 1)), separators=(",", ":"))
    elif how == "cut":
        text = record[:rng.randrange(len(record))]
    else:
        text = record.upper()
    _set_record(store, key, text)
    return f"seal {how}"


def _swap(store, rng):
    _, rows = _row(store, rng)
    a, b = rng.sample(rows, 2)
    _set_record(store, a[0], b[5])
    if rng.random() < 0.5:
        _set_record(store, b[0], a[5])
    return "records swapped"


def _copy(store, rng):
    (key, model, prompt_hash, status, grade, record, created), _ = _row(store, rng)
    new = rng.choice(("z" * 64, key[:-1] + "x"))
    _execute(store, "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
             (new, model, prompt_hash, status, grade, record, created))
    return "row copied under another key"


def _duplicate(store, rng):
    (key, model, prompt_hash, status, grade, record, created), _ = _row(store, rng)
    if store.startswith("postgresql://"):
        _execute(store, "ALTER TABLE judgments DROP CONSTRAINT judgments_pkey")
    else:
        for statement in ("ALTER TABLE judgments RENAME TO j_old",
                          "CREATE TABLE judgments (key TEXT, model TEXT, prompt_hash TEXT, status TEXT, grade INTEGER, "
                          "record TEXT, created REAL)", "INSERT INTO judgments SELECT * FROM j_old", "DROP TABLE j_old"):
            _execute(store, statement)
    rec = json.loads(record)
    rec.pop("seal")
    if grade is not None:
        grade = 3 - grade
    _execute(store, "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
             (key, model, prompt_hash, status, grade, json.dumps(rec), created))
    return "a second, unsealed row for a key"


def _marker(store, rng):
    _execute(store, "DROP TABLE relgrade_meta")
    (key, *_, record, _created), _ = _row(store, rng)
    rec = json.loads(record)
    rec.pop("seal")
    _set_record(store, key, json.dumps(rec))
    return "marker dropped, one seal removed"


EDITS = (_edit_field, _edit_field, _column, _seal_text, _swap, _copy, _duplicate, _marker)


def _read(spec: str, keys: list[str], readonly: bool):
    from relgrade.judge.store._open import open_store

    db, _ = open_store(spec, readonly=readonly)
    try:
        return {k: {f: v for f, v in r.items()} for k, r in db.get_many(keys).items()}
    finally:
        db.close()


def _one_case(spec: str, seed: int) -> None:
    from relgrade.judge import JudgmentStore

    rng = random.Random(seed)
    rows = _records()
    with JudgmentStore(spec) as db:
        for key, status, grade, rec in rows:
            db.put(key, model="openai/gpt-4o-mini", prompt_hash="abc123", status=status, grade=grade, record=rec)
    keys = [r[0] for r in rows]
    before = _read(spec, keys, readonly=True)
    what = rng.choice(EDITS)(spec, rng)
    for readonly in (True, False):
        try:
            after = _read(spec, keys + ["z" * 64] + [k[:-1] + "x" for k in keys], readonly)  # copies included
        except InputError as exc:
            message = str(exc)
            assert "\n" not in message and ("the store was altered" in message or "not a valid judgment" in message), (
                what, message)
            continue
        assert after == before, (seed, what)


@pytest.mark.parametrize("chunk", range(8))
def test_an_edited_store_reads_back_exactly_or_is_refused_sqlite(tmp_path, chunk):
    for seed in range(chunk, N_SQLITE, 8):
        _one_case(str(tmp_path / f"s{seed}.sqlite"), seed)


@pytest.mark.parametrize("chunk", range(4))
def test_an_edited_store_reads_back_exactly_or_is_refused_postgres(pg_url, chunk):
    import uuid

    import psycopg

    base = pg_url.split("?", 1)[0]
    for seed in range(1000 + chunk, 1000 + N_POSTGRES, 4):
        schema = f"t_{uuid.uuid4().hex[:10]}"  # a fresh store per case
        with psycopg.connect(base, autocommit=True) as db:
            db.execute(f"CREATE SCHEMA {schema}")
        try:
            _one_case(f"{base}?options=-csearch_path%3D{schema}", seed)
        finally:
            with psycopg.connect(base, autocommit=True) as db:
                db.execute(f"DROP SCHEMA {schema} CASCADE")
