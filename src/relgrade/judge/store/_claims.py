"""One claim protocol for online and batch judging: no combination of processes pays twice for a pair.

A key is *taken* when any of these holds, and whoever takes a key checks all three in one transaction:

1. **answered**: a ``judged`` row, or an ``unjudged`` one (unless ``--retry-unjudged`` and it is older than this
   run); for a batch's *first* request also a ``pending_repair`` row (its repair is what is owed);
2. **claimed online**: a row in ``claims`` whose lease is live and whose owner (:func:`new_owner`) is not a dead
   process of this machine (:func:`gone`); an online judge renews its leases while it works;
3. **in a provider batch**: the key is an item of a batch of the ledger that is still open (``submitting`` or
   ``submitted``); a batch holds its keys without a lease until it is collected or closed, whatever process
   submitted it (the batch runs at the provider after that process is gone).

An online judge (:meth:`~relgrade.judge.JudgmentStore.claim`) claims the keys of one pair that are not taken, all
or none, and leaves the keys held by a batch to that batch (the pair is reported as *in a pending batch*, not
paid). A batch (:meth:`~relgrade.judge.store._ledger.BatchLedger.open`) records the keys that are not taken as its
items. Serialisation: SQLite, ``BEGIN IMMEDIATE`` (one writer) for both; PostgreSQL, the ledger's advisory lock
:data:`LEDGER_LOCK`, *exclusive* while a batch is opened and *shared* by online claims (which do not block each
other, and lock their ``claims`` rows besides), so a batch never misses a claim committed before it and a claim
never misses a batch committed before it. A key leaves a claim (an answer stored with its claim removed, one commit)
or an open batch (answers stored, then the batch closed) without that lock, so on PostgreSQL, where each query sees
what was committed before it, whoever takes keys reads what holds them (open batches, live claims) before the
answers: a key that moved between the reads is seen answered.

The exception, as documented: a process killed with ``kill -9`` loses the answers of the calls it had in flight;
whoever takes its keys over pays for them again.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterable
from typing import Any

LEDGER_LOCK = 7243017
"""PostgreSQL advisory lock of the ledger: exclusive to open a batch, shared to claim online."""
OPEN_STATES = ("submitting", "submitted")
_CHUNK = 500

Execute = Callable[[str, list[Any]], Iterable[tuple]]


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


def _chunks(keys: list[str]):
    for i in range(0, len(keys), _CHUNK):
        part = keys[i:i + _CHUNK]
        yield part, ",".join("?" * len(part))


def in_open_batches(execute: Execute, keys: Iterable[str]) -> set[str]:
    """The keys that are items of an open batch of the ledger (rule 3)."""
    keys, out = list(dict.fromkeys(keys)), set()
    states = ",".join("?" * len(OPEN_STATES))
    for part, marks in _chunks(keys):
        out.update(k for (k,) in execute(
            f"SELECT DISTINCT i.key FROM batch_items i JOIN batches b ON b.local_id = i.local_id "
            f"WHERE b.state IN ({states}) AND i.key IN ({marks})", [*OPEN_STATES, *part]))
    return out


def held_online(execute: Execute, keys: Iterable[str], now: float, owner: str | None = None) -> set[str]:
    """The keys with a live claim of another owner than ``owner`` (rule 2)."""
    keys, out = list(dict.fromkeys(keys)), set()
    for part, marks in _chunks(keys):
        for key, who, expires in execute(f"SELECT key, owner, expires FROM claims WHERE key IN ({marks})", part):
            if who not in ("", owner) and expires > now and not gone(who):
                out.add(key)
    return out


def answered(execute: Execute, keys: Iterable[str], retry_before: float | None = None, *,
             first: Iterable[str] = ()) -> set[str]:
    """The keys answered (rule 1); keys in ``first`` (a batch's first requests) count ``pending_repair`` too."""
    keys, first, out = list(dict.fromkeys(keys)), set(first), set()
    for part, marks in _chunks(keys):
        for key, status, created in execute(
                f"SELECT key, status, created FROM judgments WHERE key IN ({marks})", part):
            if status == "judged" or (status == "unjudged" and (retry_before is None or created >= retry_before)) \
                    or (status == "pending_repair" and key in first):
                out.add(key)
    return out


__all__ = ["LEDGER_LOCK", "OPEN_STATES", "answered", "gone", "held_online", "in_open_batches", "new_owner"]
