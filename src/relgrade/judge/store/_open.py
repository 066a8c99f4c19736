"""Opening a judgment store: the one place that knows every backend (the interface, :mod:`._store`, knows none).

A ``--store`` value (or ``store=`` in Python) is a store object, a PostgreSQL URL or DSN, or a SQLite path; none means
``$RELGRADE_STORE``, else :data:`~relgrade.judge.store._store.DEFAULT_STORE`. A value that looks like a database URL
or DSN is one or an error, never a file (:mod:`relgrade.judge.store._spec`). Importing this module defines both
backends, so ``JudgmentStore(spec)`` picks the one whose ``accepts`` takes ``spec``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from relgrade.judge.store._postgres import PostgresStore
from relgrade.judge.store._spec import parse_store
from relgrade.judge.store._sqlite import SQLiteStore
from relgrade.judge.store._store import DEFAULT_STORE, JudgmentStore, is_url

__all__ = ["BACKENDS", "STORE_ENV", "open_store", "store_name", "store_spec"]

BACKENDS = (PostgresStore, SQLiteStore)
"""The backends ``JudgmentStore(spec)`` chooses from (each says which specs it opens: ``accepts``)."""
STORE_ENV = "RELGRADE_STORE"
"""Environment variable naming the store (a path or a ``postgresql://`` URL) when ``--store`` is not given."""


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
    option = "$RELGRADE_STORE" if (spec is None or spec == "") and os.environ.get(STORE_ENV) else "--store"
    kind, spec = parse_store(store_spec(spec), option)
    if readonly and kind == "sqlite" and not Path(spec).exists():
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
