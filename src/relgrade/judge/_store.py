"""The judgment store: one row per paid answer, committed on arrival, and claims so that N processes
share the work.

A row's key is ``sha256`` of the JSON list ``[model, prompt sha256, sampling params, query text, chunk
text]`` (see :func:`judgment_key`): everything that changes the answer and nothing that does not
(retries, timeouts, concurrency, the API base URL or the key are not in it). The row keeps the status
(``judged``, ``unjudged`` or ``pending_repair`` when the first answer was unreadable and the repair has
not arrived yet), the grade, and a JSON record with the raw answer, reason, distribution, tokens, cost
and latency. Query and chunk texts are not stored, only hashed.

Claims before calls: before paying for a key a process claims it (a row in ``claims`` with its owner
and a lease expiry, written in one transaction that also checks the key is not already answered and not held by
a provider batch still open). Other processes skip a claimed key and poll for its answer; a claim whose lease
expired (its process was killed on another machine), or whose owner is a dead process of this machine, is taken
over. A ``judged`` row is never replaced. The whole protocol, shared with ``judge --batch``, is in
:mod:`relgrade.judge._claims`. Every row carries an integrity check (:mod:`relgrade.judge._integrity`). Backends:
SQLite (the embedded default, :mod:`relgrade.judge._sqlite`) and PostgreSQL (``postgresql://...``,
:mod:`relgrade.judge._postgres`, a shared team store), same tables and semantics.

Adding a table (e.g. provider batch ids): add its DDL to ``TABLES`` in both backends and a method
pair on :class:`JudgmentStore` implemented by each; ``check_schema`` verifies every table's columns.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any, Mapping

from relgrade._errors import InputError

__all__ = ["DEFAULT_LEASE_S", "DEFAULT_STORE", "STORE_ENV", "JudgmentStore", "judgment_key", "new_owner", "open_store",
           "store_name", "store_spec"]

DEFAULT_STORE = Path(".relgrade") / "judgments.sqlite"
STORE_ENV = "RELGRADE_STORE"
"""Environment variable naming the store (a path or a ``postgresql://`` URL) when ``--store`` is not given."""
DEFAULT_LEASE_S = 60.0
"""Seconds a claim lives without renewal; a running judge renews its claims every third of it."""

STATUSES = frozenset({"judged", "unjudged", "pending_repair"})
COLUMNS = {
    "judgments": ("key", "model", "prompt_hash", "status", "grade", "record", "created"),
    "claims": ("key", "owner", "expires"),
}


def judgment_key(model: str, prompt_sha256: str, params: Mapping[str, Any], query: str, chunk: str) -> str:
    """The store key: sha256 of what changes the answer (model, prompt, sampling, texts)."""
    blob = json.dumps([model, prompt_sha256, dict(sorted(params.items())), query, chunk],
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def new_owner() -> str:
    """A claim owner id: host, pid and a random suffix (unique per run)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def gone(owner: str) -> bool:
    """True when ``owner`` is a process of this host that no longer runs (killed): its claims are taken
    over at once instead of after the lease. Owners on other hosts are only ever taken over by lease."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def is_url(spec: str | Path) -> bool:
    return isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://"))


def decode(key: str, status: Any, grade: Any, record: Any, where: str) -> dict[str, Any]:
    """Validate one row read back (a tampered or foreign row is refused, never used as a grade): its types, and its
    integrity check (:mod:`relgrade.judge._integrity`)."""
    try:
        rec = json.loads(record) if isinstance(record, (str, bytes)) else record
    except ValueError:
        rec = None
    ok = (isinstance(rec, dict) and status in STATUSES
          and (grade is None or (isinstance(grade, int) and not isinstance(grade, bool)))
          and (status != "judged" or grade is not None))
    if ok:
        from relgrade.judge._integrity import verify

        ok = verify(key, status, grade, rec)
    if not ok:
        raise InputError(f"row {key[:16]}... is not a valid judgment (status {status!r}, grade {grade!r}: it does "
                         "not match its stored answer and check); the store was altered: delete that row (it is "
                         "judged again) or pass another --store", path=where)
    rec["status"], rec["grade"] = status, grade
    return rec


class JudgmentStore:
    """The store interface (both backends). Use from one thread at a time (the judge's event loop, or its
    store thread when ``blocking``).

    ``lease_s`` is the claim lease; ``readonly`` opens an existing store for reading only (a dry run)
    and never creates one; ``blocking``: every call is a server round trip (the judge runs them off its loop).
    """

    path: Any
    lease_s: float = DEFAULT_LEASE_S
    readonly: bool = False
    blocking: bool = False

    def __new__(cls, path: "str | Path" = DEFAULT_STORE, **kw: Any):
        if cls is JudgmentStore:  # pick the backend; Python then runs its __init__(path, **kw)
            if is_url(path):
                from relgrade.judge._postgres import PostgresStore as cls
            else:
                from relgrade.judge._sqlite import SQLiteStore as cls
        return super().__new__(cls)

    # reads
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of ``key`` (with ``status`` and ``grade``), or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def in_open_batches(self, keys: list[str]) -> set[str]:
        """The keys held by a provider batch still open in the ledger (an online judge leaves them to it; see
        :mod:`relgrade.judge._claims`)."""
        raise NotImplementedError

    def batch_ledger(self):
        """The batch ledger on this store (tables ``batches`` and ``batch_items``; see ``_batch_store``)."""
        import sqlite3

        from relgrade.judge._batch_store import BatchLedger

        db = getattr(self, "_db", None)
        lite = isinstance(db, sqlite3.Connection)
        return BatchLedger(db, "sqlite" if lite else "postgres", readonly=self.readonly,
                           errors=(sqlite3.DatabaseError,) if lite else (self._errors,), on_error=self._fail)

    def __len__(self) -> int:
        raise NotImplementedError

    # writes
    def put(self, key: str, *, model: str, prompt_hash: str, status: str, grade: int | None,
            record: Mapping[str, Any], owner: str | None = None) -> bool:
        """Insert or update one row and commit it at once; a ``judged`` row is never replaced (False then).
        Releases ``owner``'s claim on the key in the same transaction."""
        raise NotImplementedError

    def claim(self, keys: list[str], owner: str, *, retry_before: float | None = None) -> tuple[set[str], bool]:
        """Claim the keys not yet answered, all or none: returns ``(claimed, busy)``. ``busy`` is True (and
        nothing claimed) when another owner holds a live lease on one of them. A key with a ``judged`` or
        ``unjudged`` row is answered (an ``unjudged`` row created before ``retry_before`` is claimable,
        for ``--retry-unjudged``); ``pending_repair`` is claimable."""
        raise NotImplementedError

    def renew(self, owner: str) -> None:
        """Extend every lease ``owner`` holds by ``lease_s``."""
        raise NotImplementedError

    def release(self, owner: str) -> None:
        """Drop every claim of ``owner`` (a run that stops early)."""
        raise NotImplementedError

    def check_writable(self) -> None:
        """Raise :class:`InputError` unless a write would succeed (checked before the first paid call)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> "JudgmentStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def store_spec(spec: "str | Path | None") -> "str | Path":
    """The store a ``--store`` value names: itself, else ``$RELGRADE_STORE``, else :data:`DEFAULT_STORE`."""
    if spec is None or spec == "":
        return os.environ.get(STORE_ENV) or DEFAULT_STORE
    return spec


def open_store(spec: "str | Path | JudgmentStore | None" = None, *, readonly: bool = False,
               lease_s: float | None = None) -> "tuple[JudgmentStore | None, bool]":
    """``(store, owned)`` for ``spec``: a store object as is, a ``postgresql://`` URL, a SQLite path, or
    None for ``$RELGRADE_STORE`` or :data:`DEFAULT_STORE`. With ``readonly`` a missing SQLite file gives
    ``(None, False)``: nothing is created."""
    if isinstance(spec, JudgmentStore):
        return spec, False
    spec = store_spec(spec)
    if readonly and not is_url(spec) and not Path(spec).exists():
        return None, False
    kw: dict[str, Any] = {"readonly": readonly}
    if lease_s is not None:
        kw["lease_s"] = lease_s
    return JudgmentStore(spec, **kw), True


def store_name(spec: "str | Path | JudgmentStore | None" = None) -> str:
    """How messages name the store ``spec`` resolves to (see :func:`open_store`): a path, or a URL without its
    password (:func:`relgrade._redact.redact_url`)."""
    if isinstance(spec, JudgmentStore):
        return str(spec.path)
    spec = store_spec(spec)
    if is_url(spec):
        from relgrade._redact import redact_url

        return redact_url(str(spec))
    return str(spec)
