"""The judgment store: one row per paid answer, claims so that N processes share the work, the batch ledger.

``_store`` is the interface (keys, rows, :class:`JudgmentStore`); ``_claims`` the claim protocol and its owners;
``_integrity`` the check every row carries; ``_ledger`` the provider batches in flight; ``_sqlite`` and
``_postgres`` the backends; ``_open`` picks and opens one (:func:`open_store`).
"""

from relgrade.judge.store._open import open_store, store_name, store_spec  # importing _open defines every backend

__all__ = ["open_store", "store_name", "store_spec"]
