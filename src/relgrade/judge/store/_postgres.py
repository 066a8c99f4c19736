"""The PostgreSQL judgment store: one store shared by a team, CI jobs and notebooks (``--store
postgresql://USER@HOST/DB``, a libpq DSN ``host=HOST dbname=DB``, or ``$RELGRADE_STORE``). Same tables and semantics as the SQLite store:
content-addressed keys, every answer committed on arrival, a ``judged`` row never replaced, claims with
leases so that N processes on M machines split the work. Claims use the standard queue pattern
``SELECT ... FOR UPDATE SKIP LOCKED`` inside one transaction: a key another process is claiming right now
is skipped (busy) instead of waited for. Needs ``pip install 'relgrade[postgres]'`` (psycopg 3).
Passwords come from the URL, ``PGPASSWORD`` or ``~/.pgpass``; messages never show them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

from relgrade._errors import InputError
from relgrade._redact import redact_text, redact_url
from relgrade.judge.store._claims import LEDGER_LOCK, gone, in_open_batches
from relgrade.judge.store._integrity import META_TABLE, is_sealed, seal_store, seal_text
from relgrade.judge.store._ledger import LEDGER_TABLES, BatchLedger
from relgrade.judge.store._spec import parse_store
from relgrade.judge.store._store import (
    COLUMNS, DEFAULT_LEASE_S, LATEST, MODEL_INDEX, JudgmentStore, decode_rows, is_url, latest_args,
)

__all__ = ["PostgresStore"]

TABLES = (
    """CREATE TABLE IF NOT EXISTS judgments (
        key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt_hash TEXT NOT NULL, status TEXT NOT NULL,
        grade INTEGER, record TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL)",
    *(ddl.replace(" REAL ", " DOUBLE PRECISION ") for ddl in LEDGER_TABLES),  # online claims check the ledger
    META_TABLE,  # the store's seal marker (relgrade.judge.store._integrity)
)


class PostgresStore(JudgmentStore):
    """A PostgreSQL judgment store (see :class:`relgrade.judge.JudgmentStore`)."""

    blocking = True

    @classmethod
    def accepts(cls, path: "str | Path") -> bool:
        return is_url(path)

    def __init__(self, url: str, *, lease_s: float = DEFAULT_LEASE_S, readonly: bool = False):
        _, url = parse_store(url)  # POSTGRESQL://, postgres+psycopg://, ' postgresql://…' as one; else an error
        self.path = redact_url(url)
        self._url = url  # kept only to mask its secrets in the driver's messages
        self.lease_s = float(lease_s)
        self.readonly = readonly
        self._db = None
        self._empty = False
        try:
            import psycopg
        except ImportError:
            raise InputError("a postgresql:// store needs psycopg: pip install 'relgrade[postgres]'",
                             path=self.path) from None
        self._errors = psycopg.Error
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
            if readonly:
                self._db.read_only = True
            else:
                with self._db.transaction():
                    self._db.execute("SELECT pg_advisory_xact_lock(7243001)")  # concurrent CREATE TABLE races
                    for ddl in TABLES:
                        self._db.execute(ddl)
            self._check_schema()
            if not readonly:
                with self._db.transaction():
                    self._db.execute("SELECT pg_advisory_xact_lock(7243001)")  # concurrent CREATE INDEX races
                    self._db.execute(MODEL_INDEX)
            if not self._empty:
                self.sealed = self._seal()
        except psycopg.Error as exc:
            self._fail(exc)

    def _fail(self, exc: Exception):
        msg = redact_text(str(exc).strip().splitlines()[0], self._url) if str(exc).strip() else type(exc).__name__
        if self._db is not None:
            try:
                self._db.close()
            except self._errors:
                pass
            self._db = None
        raise InputError(f"judgment store: {msg}; check the server, user and database, or pass another --store",
                         path=self.path) from None

    def _check_schema(self) -> None:
        for table, cols in COLUMNS.items():
            have = tuple(r[0] for r in self._db.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = %s ORDER BY ordinal_position", (table,)))
            if self.readonly and not have:
                self._empty = True  # a dry run on a database with no store yet: nothing cached, nothing created
                continue
            if have != cols:
                raise InputError(f"its table {table} has columns {', '.join(have) or '(none)'}, not a relgrade store's "
                                 f"({', '.join(cols)}); pass another --store", path=self.path)

    def _seal(self) -> bool:
        """Whether the store is sealed; a writable open seals it (once: a store written before the seal)."""
        db, query = self._db, self._query(self._db)
        has_meta = db.execute("SELECT to_regclass('relgrade_meta') IS NOT NULL").fetchone()[0]
        if has_meta and db.execute("SELECT 1 FROM relgrade_meta WHERE name = 'seal'").fetchone():
            return True
        if self.readonly:
            return is_sealed(query, has_meta=False)
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(7243001)")  # one writer seals a store written before the seal
            seal_store(query, lambda sql, rows: db.cursor().executemany(sql.replace("?", "%s"), rows))
        return True

    def _run(self, fn):
        try:
            return fn(self._db)
        except self._errors as exc:
            self._fail(exc)

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if self._empty:
            return {}

        def read(db):
            out: dict[str, dict[str, Any]] = {}
            for i in range(0, len(keys), 1000):
                out.update(decode_rows(db.execute(
                    "SELECT key, model, prompt_hash, status, grade, record FROM judgments WHERE key = ANY(%s)",
                    (keys[i:i + 1000],)), self.path, sealed=self.sealed))
            return out

        return self._run(read)

    def latest(self, model: str, limit: int = 1000) -> list[dict[str, Any]]:
        if self._empty:
            return []
        rows = self._run(lambda db: db.execute(LATEST.replace("?", "%s"), latest_args(model, limit)).fetchall())
        return list(decode_rows(rows, self.path, sealed=self.sealed).values())

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def put(self, key: str, *, model: str, prompt_hash: str, status: str, grade: int | None,
            record: Mapping[str, Any], owner: str | None = None) -> bool:
        blob = seal_text(key, model, prompt_hash, status, grade, record)

        def write(db):
            with db.transaction():
                cur = db.execute(
                    "INSERT INTO judgments (key, model, prompt_hash, status, grade, record, created) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET model=EXCLUDED.model, "
                    "prompt_hash=EXCLUDED.prompt_hash, status=EXCLUDED.status, grade=EXCLUDED.grade, "
                    "record=EXCLUDED.record, created=EXCLUDED.created WHERE judgments.status <> 'judged'",
                    (key, model, prompt_hash, status, grade, blob, time.time()))
                if owner is not None and status != "pending_repair":
                    db.execute("DELETE FROM claims WHERE key = %s AND owner = %s", (key, owner))
                return cur.rowcount > 0

        return self._run(write)

    def claim(self, keys: list[str], owner: str, *, retry_before: float | None = None) -> tuple[set[str], bool]:
        def take(db):
            now = time.time()
            with db.transaction():  # the claim protocol of relgrade.judge.store._claims
                db.execute("SELECT pg_advisory_xact_lock_shared(%s)", (LEDGER_LOCK,))  # no batch opens meanwhile
                db.execute("SET LOCAL synchronous_commit = off")  # a claim lost in a server crash costs nothing
                # A claim row per key first (no-op when present), so that every key has a row to lock.
                db.execute("INSERT INTO claims (key, owner, expires) SELECT k, '', 0 FROM unnest(%s::text[]) AS k "
                           "ON CONFLICT (key) DO NOTHING", (sorted(keys),))  # one lock order: no deadlock
                locked = {k: (o, e) for k, o, e in db.execute(
                    "SELECT key, owner, expires FROM claims WHERE key = ANY(%s) FOR UPDATE SKIP LOCKED", (keys,))}
                if len(locked) < len(set(keys)) or any(o not in ("", owner) and e > now and not gone(o)
                                                      for o, e in locked.values()):
                    return set(), True  # another process is claiming one of them now, or holds a live lease
                # The open batches before the answers (read committed): a batch being collected stores its answers
                # and then closes, without this lock, so a key that left a batch between the queries is answered.
                batched = in_open_batches(self._query(db), keys)  # left to the batch that holds them
                answered = {k for k, s, c in db.execute(
                    "SELECT key, status, created FROM judgments WHERE key = ANY(%s)", (keys,))
                    if s == "judged" or (s == "unjudged" and (retry_before is None or c >= retry_before))}
                answered |= batched
                free = [k for k in keys if k not in answered]
                if free:
                    db.execute("UPDATE claims SET owner = %s, expires = %s WHERE key = ANY(%s)",
                               (owner, now + self.lease_s, free))
                if answered:
                    db.execute("DELETE FROM claims WHERE key = ANY(%s) AND owner IN ('', %s)", (list(answered), owner))
                return set(free), False

        return self._run(take)

    @staticmethod
    def _query(db):
        return lambda sql, args: db.execute(sql.replace("?", "%s"), args)

    def in_open_batches(self, keys: list[str]) -> set[str]:
        if self._empty:
            return set()
        return self._run(lambda db: in_open_batches(self._query(db), keys))

    def batch_ledger(self) -> BatchLedger:
        return BatchLedger(self._db, "postgres", readonly=self.readonly, errors=(self._errors,), on_error=self._fail)

    def renew(self, owner: str) -> None:
        self._run(lambda db: db.execute("UPDATE claims SET expires = %s WHERE owner = %s",
                                        (time.time() + self.lease_s, owner)))

    def release(self, owner: str) -> None:
        self._run(lambda db: db.execute("DELETE FROM claims WHERE owner = %s", (owner,)))

    def check_writable(self) -> None:
        if self.readonly:
            raise InputError("opened read-only; pass another --store", path=self.path)

        def probe(db):
            try:
                with db.transaction(force_rollback=True):
                    db.execute("INSERT INTO claims (key, owner, expires) VALUES ('relgrade-write-probe', '', 0) "
                               "ON CONFLICT (key) DO NOTHING")
            except self._errors as exc:
                raise InputError(f"judgment store: cannot write ({redact_text(str(exc).strip().splitlines()[0], self._url)}); grant INSERT "
                                 "and UPDATE on judgments and claims, or pass another --store", path=self.path) from None

        self._run(probe)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
