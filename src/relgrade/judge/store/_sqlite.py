"""The SQLite judgment store: one file (WAL), the embedded default.

Every :meth:`SQLiteStore.put` is its own transaction, so a process killed with ``kill -9`` loses at
most the answers still in flight; ``synchronous=NORMAL`` in WAL mode keeps every committed row across a
process crash (an OS crash may lose the last few). Claims are taken under ``BEGIN IMMEDIATE`` (the
write lock), so two processes never both see a key as free. A corrupted file, a foreign table or a
read-only file is a one-line :class:`InputError` naming the file.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Mapping

from relgrade._errors import InputError
from relgrade.judge.store._claims import answered, held_online, in_open_batches
from relgrade.judge.store._integrity import META_TABLE, is_sealed, seal_store, seal_text
from relgrade.judge.store._ledger import LEDGER_TABLES, BatchLedger
from relgrade.judge.store._store import (
    COLUMNS, DEFAULT_LEASE_S, DEFAULT_STORE, LATEST, MODEL_INDEX, JudgmentStore, decode_rows, is_url, latest_args,
)

__all__ = ["SQLiteStore"]

TABLES = (
    """CREATE TABLE IF NOT EXISTS judgments (
        key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt_hash TEXT NOT NULL, status TEXT NOT NULL,
        grade INTEGER, record TEXT NOT NULL, created REAL NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)",
    *LEDGER_TABLES,  # the batch ledger: online claims check it (relgrade.judge.store._claims)
    META_TABLE,  # the store's seal marker (relgrade.judge.store._integrity)
)



_OPEN_WAIT_S = 30.0  # as long as a write waits for the lock (busy_timeout)


def _open_writable(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode with the tables made. Judges started together on a new file race to switch it to
    WAL and create the tables; SQLite answers the loser "database is locked" at once, without its busy handler,
    so the setup is tried again until it succeeds or ``_OPEN_WAIT_S`` has passed."""
    deadline, pause = time.monotonic() + _OPEN_WAIT_S, 0.01
    while True:
        db = sqlite3.connect(str(path), timeout=_OPEN_WAIT_S, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout={int(_OPEN_WAIT_S * 1000)}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            for ddl in TABLES:
                db.execute(ddl)
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            if not ("locked" in str(exc) or "busy" in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)

class SQLiteStore(JudgmentStore):
    """A SQLite judgment store (see :class:`relgrade.judge.JudgmentStore`)."""

    @classmethod
    def accepts(cls, path: "str | Path") -> bool:
        return not is_url(path)  # any path: a missing file is created

    def __init__(self, path: str | Path = DEFAULT_STORE, *, lease_s: float = DEFAULT_LEASE_S, readonly: bool = False):
        self.path = Path(path)
        self.lease_s = float(lease_s)
        self.readonly = readonly
        self._db: sqlite3.Connection | None = None
        if self.path.is_dir():
            raise InputError("is a folder, not a judgment store; pass a file such as judgments.sqlite to --store",
                             path=self.path)
        try:
            if readonly:
                # A dry run writes nothing: with no WAL file beside it (no writer now, closed cleanly) the file is
                # read as immutable, which creates no -wal/-shm files; else read-only beside the live writer.
                wal = Path(f"{self.path}-wal")
                mode = "mode=ro" if wal.exists() and wal.stat().st_size else "mode=ro&immutable=1"
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=30.0,
                                           isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = _open_writable(self.path)
            self._check_schema()
            if not readonly:
                self._db.execute(MODEL_INDEX)
            self.sealed = self._seal()
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
        except OSError as exc:
            raise InputError(f"cannot create the judgment store ({exc.strerror}); pass another --store",
                             path=self.path) from None

    def _fail(self, exc: Exception):
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        msg = str(exc)
        if "readonly" in msg or "read-only" in msg:
            hint = "the store is read-only; make it writable or pass another --store"
        elif "malformed" in msg or "not a database" in msg:
            hint = "the store file is corrupted; move it away (answers in it are lost) or pass another --store"
        else:
            hint = "pass another --store"
        raise InputError(f"judgment store: {msg}; {hint}", path=self.path) from None

    def _check_schema(self) -> None:
        for table, cols in COLUMNS.items():
            have = tuple(r[1] for r in self._db.execute(f"PRAGMA table_info({table})"))  # type: ignore[union-attr]
            if self.readonly and not have and table == "claims":
                continue
            if have != cols:
                raise InputError(f"its table {table} has columns {', '.join(have) or '(none)'}, not a relgrade store's "
                                 f"({', '.join(cols)}); pass another --store", path=self.path)

    def _seal(self) -> bool:
        """Whether the store is sealed; a writable open seals it (once: a store written before the seal)."""
        db = self._db
        has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'relgrade_meta'").fetchone()
        if has_meta and db.execute("SELECT 1 FROM relgrade_meta WHERE name = 'seal'").fetchone():
            return True
        if self.readonly:
            return is_sealed(db.execute, has_meta=False)
        db.execute("BEGIN IMMEDIATE")
        seal_store(db.execute, db.executemany)
        db.execute("COMMIT")
        return True

    def _run(self, fn):
        try:
            return fn(self._db)
        except sqlite3.DatabaseError as exc:
            if self._db is not None and self._db.in_transaction:
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            self._fail(exc)

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        def read(db):
            out: dict[str, dict[str, Any]] = {}
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                marks = ",".join("?" * len(part))
                rows = db.execute("SELECT key, model, prompt_hash, status, grade, record FROM judgments "
                                  f"WHERE key IN ({marks})", part)
                out.update(decode_rows(rows, str(self.path), sealed=self.sealed))
            return out

        return self._run(read)

    def latest(self, model: str, limit: int = 1000) -> list[dict[str, Any]]:
        rows = self._run(lambda db: db.execute(LATEST, latest_args(model, limit)).fetchall())
        return list(decode_rows(rows, str(self.path), sealed=self.sealed).values())

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def put(self, key: str, *, model: str, prompt_hash: str, status: str, grade: int | None,
            record: Mapping[str, Any], owner: str | None = None) -> bool:
        blob = seal_text(key, model, prompt_hash, status, grade, record)

        def write(db):
            db.execute("BEGIN IMMEDIATE")
            cur = db.execute(
                "INSERT INTO judgments (key, model, prompt_hash, status, grade, record, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET model=excluded.model, "
                "prompt_hash=excluded.prompt_hash, status=excluded.status, grade=excluded.grade, "
                "record=excluded.record, created=excluded.created WHERE judgments.status != 'judged'",
                (key, model, prompt_hash, status, grade, blob, time.time()))
            if owner is not None and status != "pending_repair":
                db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner))
            db.execute("COMMIT")
            return cur.rowcount > 0

        return self._run(write)

    def claim(self, keys: list[str], owner: str, *, retry_before: float | None = None) -> tuple[set[str], bool]:
        def take(db):  # the claim protocol of relgrade.judge.store._claims, under SQLite's one write lock
            now = time.time()
            db.execute("BEGIN IMMEDIATE")
            taken = answered(db.execute, keys, retry_before) | in_open_batches(db.execute, keys)
            free = [k for k in dict.fromkeys(keys) if k not in taken]
            if held_online(db.execute, free, now, owner):
                db.execute("ROLLBACK")
                return set(), True
            db.executemany("INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                           [(k, owner, now + self.lease_s) for k in free])
            db.execute("COMMIT")
            return set(free), False

        return self._run(take)

    def in_open_batches(self, keys: list[str]) -> set[str]:
        return self._run(lambda db: in_open_batches(db.execute, keys))

    def batch_ledger(self) -> BatchLedger:
        return BatchLedger(self._db, "sqlite", readonly=self.readonly, errors=(sqlite3.DatabaseError,),
                           on_error=self._fail)

    def renew(self, owner: str) -> None:
        self._run(lambda db: db.execute("UPDATE claims SET expires = ? WHERE owner = ?",
                                        (time.time() + self.lease_s, owner)))

    def release(self, owner: str) -> None:
        self._run(lambda db: db.execute("DELETE FROM claims WHERE owner = ?", (owner,)))

    def check_writable(self) -> None:
        def probe(db):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR REPLACE INTO claims (key, owner, expires) VALUES ('relgrade-write-probe', '', 0)")
            db.execute("ROLLBACK")

        if self.readonly:
            raise InputError("opened read-only; pass another --store", path=self.path)
        self._run(probe)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
