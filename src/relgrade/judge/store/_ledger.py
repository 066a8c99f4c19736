"""The batch ledger: which provider batches are in flight and which store keys each one answers.

Two tables beside ``judgments`` in the same store (SQLite or PostgreSQL), so a killed process or another machine
with the same store resumes polling instead of paying again:

- ``batches``: one row per batch, ``local_id`` (ours, a uuid, also sent to the provider as
  metadata), ``provider``, ``model``, ``batch_id`` (the provider's), ``state``: ``submitting``
  (the row is written before the upload, so a crash between the provider's create and our
  record can be recovered by the local id), ``submitted``, then a terminal state
  (``completed``, ``failed``, ``expired``, ``cancelled``, ``abandoned`` = never created).
- ``batch_items``: ``(local_id, custom_id, key, kind)``, ``kind`` = ``first`` or ``repair``.

A row and its items are written in one ``BEGIN IMMEDIATE`` transaction that first leaves out the
keys already in an open batch, already judged, or claimed by a live online judge (the store's
``claims`` table), so two processes on one store never submit the same pair twice.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable

from relgrade.judge.store._claims import LEDGER_LOCK, OPEN_STATES, answered, held_online, in_open_batches

LEDGER_TABLES = (
    """CREATE TABLE IF NOT EXISTS batches (
        local_id TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, batch_id TEXT,
        state TEXT NOT NULL, requests INTEGER NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
        detail TEXT)""",
    """CREATE TABLE IF NOT EXISTS batch_items (
        local_id TEXT NOT NULL, custom_id TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
        PRIMARY KEY (local_id, custom_id))""",
    "CREATE INDEX IF NOT EXISTS batch_items_key ON batch_items (key)",
)


@dataclass(frozen=True)
class BatchRow:
    """One ledger row (see the module doc)."""

    local_id: str
    provider: str
    model: str
    batch_id: str | None
    state: str
    requests: int
    created: float
    updated: float
    detail: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {"local_id": self.local_id, "provider": self.provider, "model": self.model,
                "batch_id": self.batch_id, "state": self.state, "requests": self.requests,
                "created": self.created, "updated": self.updated, "detail": self.detail}


class BatchLedger:
    """The ledger on a store's connection: SQLite (``isolation_level=None``, ``BEGIN IMMEDIATE`` for the
    write lock) or PostgreSQL (psycopg 3 in autocommit, a transaction holding an advisory lock)."""

    _LOCK = LEDGER_LOCK  # exclusive while a batch is opened; online claims take it shared (see _claims)

    def __init__(self, db: Any, dialect: str = "sqlite", *, readonly: bool = False,
                 errors: tuple[type[BaseException], ...] = (), on_error=None):
        self._db = db
        self.pg = dialect == "postgres"
        self.empty = False
        self._errors, self._on_error = errors, on_error
        try:
            self._setup(readonly)
        except self._errors as exc:  # a corrupted or unreachable store: the store's one-line error
            self._on_error(exc)

    def _setup(self, readonly: bool) -> None:
        if readonly:  # a read-only store (``--batch-status``): no table created, none there means no batch
            probe = "SELECT to_regclass('batches') IS NOT NULL" if self.pg else \
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'batches'"
            self.empty = not self._db.execute(probe).fetchone()[0]
            return
        with self._tx():
            for stmt in LEDGER_TABLES:
                self._x(stmt.replace(" REAL ", " DOUBLE PRECISION ") if self.pg else stmt)

    def _x(self, sql: str, args: tuple | list = ()):
        try:
            return self._db.execute(sql.replace("?", "%s") if self.pg else sql, args)
        except self._errors as exc:
            self._on_error(exc)  # closes the connection (rolling back) and raises the store's one-line error

    @contextmanager
    def _tx(self):
        if self.pg:
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (self._LOCK,))
                yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            try:
                self._db.execute("ROLLBACK")
            except Exception:  # noqa: BLE001 - the connection is already closed by the store's error path
                pass
            raise
        self._x("COMMIT")

    def open(self, local_id: str, *, provider: str, model: str, items: Iterable[tuple[str, str, str]],
             detail: dict[str, Any] | None = None, retry_before: float | None = None) -> list[tuple[str, str, str]]:
        """Record a batch about to be submitted with its ``(custom_id, key, kind)`` items, in one transaction.

        Items whose key is taken (:mod:`relgrade.judge.store._claims`: answered, claimed by a live online judge, or in
        an open batch) are left out: another process took them first (``BEGIN IMMEDIATE``, or PostgreSQL's
        exclusive ledger lock, serialises the check and the insert with every claim); returns the items recorded.
        No row is written when none is left.
        """
        items = list(items)
        now = time.time()
        with self._tx():
            keys = [k for _c, k, _kind in items]
            # Order matters on PostgreSQL (read committed: each query sees what was committed before it): a pair
            # leaves a batch (collection stores its answers, then closes the batch) and leaves an online claim (put:
            # the answer and the claim's removal in one commit) without this lock, so whatever it held is read
            # before the answers: a key that left between the queries is then seen in its new state.
            taken = in_open_batches(self._x, keys) | held_online(self._x, keys, now)
            taken |= answered(self._x, keys, retry_before, first=[k for _c, k, kind in items if kind == "first"])
            kept = [(c, k, kind) for c, k, kind in items if k not in taken]
            if kept:
                self._x("INSERT INTO batches (local_id, provider, model, batch_id, state, requests, created, "
                        "updated, detail) VALUES (?, ?, ?, NULL, 'submitting', ?, ?, ?, ?)",
                        (local_id, provider, model, len(kept), now, now,
                         None if detail is None else json.dumps(detail)))
                sql = "INSERT INTO batch_items (local_id, custom_id, key, kind) VALUES (?, ?, ?, ?)"
                rows = [(local_id, c, k, kind) for c, k, kind in kept]
                if self.pg:
                    with self._db.cursor() as cur:
                        cur.executemany(sql.replace("?", "%s"), rows)
                else:
                    self._db.executemany(sql, rows)
        return kept

    def submitted(self, local_id: str, batch_id: str) -> None:
        self._x("UPDATE batches SET batch_id = ?, state = 'submitted', updated = ? WHERE local_id = ?",
                (batch_id, time.time(), local_id))

    def close(self, local_id: str, state: str, detail: dict[str, Any] | None = None) -> None:
        """Mark a batch terminal (its answers are already in the store)."""
        self._x("UPDATE batches SET state = ?, updated = ?, detail = ? WHERE local_id = ?",
                (state, time.time(), None if detail is None else json.dumps(detail), local_id))

    def rows(self, *, model: str | None = None, open_only: bool = True) -> list[BatchRow]:
        if self.empty:
            return []
        sql = "SELECT local_id, provider, model, batch_id, state, requests, created, updated, detail FROM batches"
        where, args = [], []
        if open_only:
            where.append(f"state IN ({','.join('?' * len(OPEN_STATES))})")
            args.extend(OPEN_STATES)
        if model is not None:
            where.append("model = ?")
            args.append(model)
        if where:
            sql += " WHERE " + " AND ".join(where)
        out = []
        for r in self._x(sql + " ORDER BY created", args):
            out.append(BatchRow(*r[:8], json.loads(r[8]) if r[8] else None))
        return out

    def items(self, local_id: str) -> dict[str, tuple[str, str]]:
        """``{custom_id: (key, kind)}`` of a batch."""
        if self.empty:
            return {}
        return {c: (k, kind) for c, k, kind in self._x(
            "SELECT custom_id, key, kind FROM batch_items WHERE local_id = ?", (local_id,))}


__all__ = ["BatchLedger", "BatchRow", "LEDGER_TABLES", "OPEN_STATES"]
