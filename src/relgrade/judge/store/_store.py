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
:mod:`relgrade.judge.store._claims`. Every row carries a seal
(:mod:`relgrade.judge.store._integrity`), and a store opened for writing is sealed.
Backends: SQLite (the embedded default, :mod:`relgrade.judge.store._sqlite`) and PostgreSQL (``postgresql://...``,
:mod:`relgrade.judge.store._postgres`, a shared team store), same tables and semantics; this interface imports
neither (:mod:`relgrade.judge.store._open`, one floor up, opens them).

Adding a table (e.g. provider batch ids): add its DDL to ``TABLES`` in both backends and a method
pair on :class:`JudgmentStore` implemented by each; ``check_schema`` verifies every table's columns.
Adding a backend: a subclass in its own module with ``accepts``, imported by :mod:`relgrade.judge.store._open`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from relgrade._errors import InputError
from relgrade.judge.store._integrity import unseal, verify_legacy
from relgrade.judge.store._spec import is_database

__all__ = ["COLUMNS", "DEFAULT_LEASE_S", "DEFAULT_STORE", "LATEST", "MODEL_INDEX", "JudgmentStore", "decode",
           "decode_rows", "is_url", "judgment_key", "latest_args"]

DEFAULT_STORE = Path(".relgrade") / "judgments.sqlite"
DEFAULT_LEASE_S = 60.0
"""Seconds a claim lives without renewal; a running judge renews its claims every third of it."""

STATUSES = frozenset({"judged", "unjudged", "pending_repair"})
COLUMNS = {
    "judgments": ("key", "model", "prompt_hash", "status", "grade", "record", "created"),
    "claims": ("key", "owner", "expires"),
}
MODEL_INDEX = "CREATE INDEX IF NOT EXISTS judgments_model ON judgments (model, created)"
"""A model's latest rows (:meth:`JudgmentStore.latest`), made by a writable open once the schema is checked."""
LATEST = ("SELECT key, model, prompt_hash, status, grade, record FROM judgments WHERE model = ? AND record NOT LIKE ? "
          "ORDER BY created DESC LIMIT ?")
"""A model's latest online rows (a batch answer's record holds ``"batch": "<its local id>"``): the arguments are
``latest_args(model, limit)``."""


def latest_args(model: str, limit: int) -> tuple[str, str, int]:
    return model, '%"batch": "%', int(limit)


def judgment_key(model: str, prompt_sha256: str, params: Mapping[str, Any], query: str, chunk: str) -> str:
    """The store key: sha256 of what changes the answer (model, prompt, sampling, texts)."""
    blob = json.dumps([model, prompt_sha256, dict(sorted(params.items())), query, chunk],
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def is_url(spec: str | Path) -> bool:
    """True when ``spec`` names a database, not a SQLite file: anything that looks like a database URL or DSN
    (:func:`relgrade.judge.store._spec.is_database`; the PostgreSQL backend opens it or says why it cannot)."""
    return isinstance(spec, (str, Path)) and is_database(spec)


def decode(key: str, model: str, prompt_hash: str, status: Any, grade: Any, record: Any, where: str, *,
           sealed: bool) -> dict[str, Any]:
    """Validate one row read back (a tampered or foreign row is refused, never used as a grade): its types, and its
    seal (:mod:`relgrade.judge.store._integrity`); in a ``sealed`` store a row without a seal is altered."""
    try:
        rec = json.loads(record) if isinstance(record, (str, bytes)) else None
    except ValueError:
        rec = None
    ok = (isinstance(rec, dict) and status in STATUSES
          and (grade is None or (isinstance(grade, int) and not isinstance(grade, bool)))
          and (status != "judged" or grade is not None))
    why = "it does not match its seal"
    if ok:
        match = unseal(key, model, prompt_hash, status, grade, record)
        if match is None and sealed:
            ok, why = False, ("it has no seal, in a store whose rows are sealed (written by hand or by an older "
                              "relgrade)")
        else:
            ok = match if match is not None else verify_legacy(key, status, grade, rec)
    if not ok:
        raise InputError(f"row {key[:16]}... is not a valid judgment (status {status!r}, grade {grade!r}: {why}); "
                         "the store was altered: delete that row (it is judged again) or pass another --store",
                         path=where)
    rec["status"], rec["grade"] = status, grade
    return rec


def decode_rows(rows, where: str, *, sealed: bool) -> dict[str, dict[str, Any]]:
    """``{key: record}`` of rows ``(key, model, prompt_hash, status, grade, record)`` (:func:`decode`); a key met twice
    with different rows (a table without its primary key) is altered."""
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, tuple] = {}
    for row in rows:
        key = row[0]
        if key in seen and seen[key] != tuple(row):
            raise InputError(f"row {key[:16]}... appears twice with different contents; the store was altered: delete "
                             "one of them or pass another --store", path=where)
        seen[key] = tuple(row)
        out[key] = decode(*row, where, sealed=sealed)
    return out


class JudgmentStore:
    """The store interface (both backends). Use from one thread at a time (the judge's event loop, or its
    store thread when ``blocking``).

    ``lease_s`` is the claim lease; ``readonly`` opens an existing store for reading only (a dry run)
    and never creates one; ``blocking``: every call is a server round trip (the judge runs them off its loop).

    ``JudgmentStore(spec, **kw)`` opens the backend whose :meth:`accepts` takes ``spec``: every subclass that defines
    ``accepts`` is a backend (this interface names none; :mod:`relgrade.judge.store._open` imports them all).
    """

    path: Any
    lease_s: float = DEFAULT_LEASE_S
    readonly: bool = False
    blocking: bool = False
    sealed: bool = False
    """Whether every row must carry a seal (:mod:`relgrade.judge.store._integrity`)."""

    _backends: "list[type[JudgmentStore]]" = []

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "accepts" in cls.__dict__:  # the newest first: a new backend may claim specs SQLite would take as paths
            JudgmentStore._backends.insert(0, cls)

    @classmethod
    def accepts(cls, path: "str | Path") -> bool:
        """Whether this backend opens ``path`` (a backend overrides it; see the class doc)."""
        return False

    def __new__(cls, path: "str | Path" = DEFAULT_STORE, **kw: Any):
        if cls is JudgmentStore:  # pick the backend; Python then runs its __init__(path, **kw)
            cls = next((b for b in JudgmentStore._backends if b.accepts(path)), None)
            if cls is None:
                raise InputError(f"no judgment store backend opens {path!r}: pass a SQLite file or a postgresql:// URL "
                                 "to --store")
        return super().__new__(cls)

    # reads
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of ``key`` (with ``status`` and ``grade``), or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def latest(self, model: str, limit: int = 1000) -> list[dict[str, Any]]:
        """The records of ``model``'s latest ``limit`` rows in the whole store (any pool, any prompt; answers of
        provider batches left out), verified as :meth:`get_many` verifies them: what the dry run measures the model's
        latency from."""
        raise NotImplementedError

    def in_open_batches(self, keys: list[str]) -> set[str]:
        """The keys held by a provider batch still open in the ledger (an online judge leaves them to it; see
        :mod:`relgrade.judge.store._claims`)."""
        raise NotImplementedError

    def batch_ledger(self):
        """The batch ledger on this store (tables ``batches`` and ``batch_items``; see
        :mod:`relgrade.judge.store._ledger`)."""
        raise NotImplementedError

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
