"""The judgment store: one SQLite file (WAL), one row per paid answer, committed on arrival.

Default path ``.relgrade/judgments.sqlite`` in the current directory. A row's key is
``sha256`` of the JSON list ``[model, prompt sha256, sampling params, query text, chunk text]``
(see :func:`judgment_key`): everything that changes the answer and nothing that does not
(retries, timeouts, concurrency, the API base URL or the key are not in it). The row keeps the
status (``judged``, ``unjudged`` or ``pending_repair`` when the first answer was unreadable and
the repair has not arrived yet), the grade, and a JSON record with the raw answer, reason,
distribution, tokens, cost and latency. Query and chunk texts are not stored, only hashed.

Every :meth:`JudgmentStore.put` is its own transaction, so a process killed with ``kill -9``
loses at most the answers still in flight. ``synchronous=NORMAL`` in WAL mode keeps every committed
row across a process crash (an OS crash may lose the last few).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Mapping

from relgrade._errors import InputError

DEFAULT_STORE = Path(".relgrade") / "judgments.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    grade INTEGER,
    record TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def judgment_key(model: str, prompt_sha256: str, params: Mapping[str, Any], query: str, chunk: str) -> str:
    """The store key: sha256 of what changes the answer (model, prompt, sampling, texts)."""
    blob = json.dumps([model, prompt_sha256, dict(sorted(params.items())), query, chunk],
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgmentStore:
    """A SQLite judgment store. Use from one thread (the judge's event loop); open it per process."""

    def __init__(self, path: str | Path = DEFAULT_STORE):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot open the judgment store ({exc}); pass another --store", path=self.path) from None
        except OSError as exc:
            raise InputError(f"cannot create the judgment store ({exc.strerror}); pass another --store", path=self.path) from None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of ``key`` (with ``status`` and ``grade``), or None."""
        row = self._db.execute("SELECT status, grade, record FROM judgments WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        record = json.loads(row[2])
        record["status"], record["grade"] = row[0], row[1]
        return record

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            marks = ",".join("?" * len(part))
            for key, status, grade, record in self._db.execute(
                f"SELECT key, status, grade, record FROM judgments WHERE key IN ({marks})", part
            ):
                rec = json.loads(record)
                rec["status"], rec["grade"] = status, grade
                out[key] = rec
        return out

    def put(self, key: str, *, model: str, prompt_hash: str, status: str, grade: int | None,
            record: Mapping[str, Any]) -> None:
        """Insert or replace one row and commit it at once."""
        self._db.execute(
            "INSERT OR REPLACE INTO judgments (key, model, prompt_hash, status, grade, record, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, model, prompt_hash, status, grade, json.dumps(dict(record), ensure_ascii=False), time.time()),
        )

    def batch_ledger(self):
        """The batch ledger on this store (tables ``batches`` and ``batch_items``; see ``_batch_store``)."""
        from relgrade.judge._batch_store import BatchLedger

        return BatchLedger(self._db)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "JudgmentStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
