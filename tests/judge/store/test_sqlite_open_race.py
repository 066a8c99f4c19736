"""Judges started together on a new SQLite store all open it: none is told "database is locked".

SQLite answers the loser of the race to switch a new file to WAL and create its tables at once, without its busy
handler; the store retries that setup (relgrade.judge.store._sqlite._open_writable). Before it did, one round in
three of this test lost a process.
"""

from __future__ import annotations

import multiprocessing as mp


def _open(path: str, barrier) -> str:
    from relgrade.judge.store._sqlite import SQLiteStore

    barrier.wait()
    try:
        store = SQLiteStore(path)
        store.check_writable()
        store.close()
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the test reports what a process was told
        return str(exc)


def test_processes_opening_a_new_store_together_all_succeed(tmp_path):
    ctx = mp.get_context("fork")
    with ctx.Manager() as manager, ctx.Pool(3) as pool:
        for round_ in range(25):
            barrier = manager.Barrier(3)
            path = str(tmp_path / f"store{round_}.sqlite")
            answers = pool.starmap(_open, [(path, barrier)] * 3)
            assert answers == ["ok"] * 3, (round_, answers)
