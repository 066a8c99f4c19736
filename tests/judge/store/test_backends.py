"""The store interface names no backend: ``JudgmentStore(spec)`` opens whichever subclass says it ``accepts`` the spec
(the two shipped ones are imported by ``relgrade.judge.store._open``), so a new backend is one new module."""

from __future__ import annotations

from relgrade.judge import JudgmentStore
from relgrade.judge.store import open_store
from relgrade.judge.store._postgres import PostgresStore
from relgrade.judge.store._sqlite import SQLiteStore


def test_the_shipped_backends_are_picked_by_what_they_accept(tmp_path):
    assert PostgresStore.accepts("postgresql://u@h/db") and PostgresStore.accepts("postgres://u@h/db")
    assert not SQLiteStore.accepts("postgresql://u@h/db") and SQLiteStore.accepts(tmp_path / "s.sqlite")
    with JudgmentStore(tmp_path / "s.sqlite") as db:
        assert type(db) is SQLiteStore and len(db) == 0


def test_a_new_backend_is_a_subclass_that_says_what_it_opens(tmp_path):
    class MemoryStore(JudgmentStore):
        @classmethod
        def accepts(cls, path) -> bool:
            return str(path).startswith("memory:")

        def __init__(self, path, **kw):
            self.path, self.kw = path, kw

        def close(self) -> None:
            pass

    class Spy(SQLiteStore):  # says nothing of what it opens: no backend of its own
        pass

    try:
        with JudgmentStore("memory:team", lease_s=5) as db:
            assert type(db) is MemoryStore and db.path == "memory:team" and db.kw == {"lease_s": 5}
        db, owned = open_store("memory:ci")
        assert type(db) is MemoryStore and owned
        assert Spy not in JudgmentStore._backends
        with JudgmentStore(tmp_path / "s.sqlite") as lite:  # the shipped ones are still picked as before
            assert type(lite) is SQLiteStore
    finally:
        JudgmentStore._backends.remove(MemoryStore)
