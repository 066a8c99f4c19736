"""The judge inside a Ray actor: one store connection, one caller, one claim owner per worker process, serving the
batches Ray Data hands it.

A worker judges the distinct (query, chunk text) units of a batch with relgrade's own engine
(:class:`relgrade.judge.engine._engine.Engine`): claims before calls, every answer committed to the shared
PostgreSQL store the moment it arrives, the caller's retry, timeout and rate policy. Several batches of one worker run
at once (a threaded actor) on one event loop, so its ``concurrency`` request slots stay full across batch edges.
Nothing here imports Ray: :mod:`relgrade.judge.cluster._run` wraps these classes as Ray actors.

Across workers and across Ray's retries, pay-once is the store's claim protocol
(:mod:`relgrade.judge.store._claims`): a batch retried on another worker finds the answers already stored and claims
only what is not; the claims of a worker process that died are taken over at once on its machine (``gone``), after
the lease elsewhere. A worker sent SIGTERM (Ray's own stop, or ``kill PID``) drains: no new call goes out, the calls
in flight are answered and stored, then it exits; only ``kill -9`` loses the calls it had in flight (paid again by
whoever takes its pairs over, as for any judge process).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from typing import Any

from relgrade._errors import InputError
from relgrade.judge._config import JudgeConfig
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt
from relgrade.judge.engine._budget import Budget, Stop
from relgrade.judge.engine._engine import Engine, check_grades, is_done, load_records, make_units, unit_done
from relgrade.judge.store._claims import new_owner
from relgrade.judge.store._open import open_store
from relgrade.judge.transport._call import Answer, Caller, FatalCallError, Halted

__all__ = ["PairJudge", "SharedBudget", "unit_rows"]

class SharedBudget:
    """The run's spending across every worker (a Ray actor made by the driver): ``--max-cost`` is reserved here, and
    every paid call is counted here, also those of a worker that died before its batch came back."""

    def __init__(self, max_cost: float | None):
        self.max_cost, self.spent, self.reserved, self.calls, self.unknown = max_cost, 0.0, 0.0, 0, 0

    def reserve(self, worst: float) -> bool:
        if self.max_cost is not None and self.spent + self.reserved + worst > self.max_cost:
            return False
        self.reserved += worst
        return True

    def settle(self, reserved: float, paid: bool, cost: float | None) -> None:
        self.reserved -= reserved
        if paid:
            self.add(0.0 if cost is None else cost, 1, int(cost is None))

    def add(self, spent: float, calls: int, unknown: int) -> None:
        self.spent, self.calls, self.unknown = self.spent + spent, self.calls + calls, self.unknown + unknown

    def totals(self) -> tuple[float, int, int]:
        return self.spent, self.calls, self.unknown


class _WorkerBudget(Budget):
    """:class:`Budget` whose reservations go to the run's :class:`SharedBudget` actor (a round trip per call, only with
    ``--max-cost``); its payments are counted here and sent there in sums (:meth:`flush`)."""

    def __init__(self, max_cost: float | None, model: str, shared: Any, ray_get: Any):
        super().__init__(max_cost, model)
        self.shared, self.ray_get = shared, ray_get
        self.sent = (0.0, 0, 0)
        self.lock = threading.Lock()

    def reserve(self, prompt_tokens: int, max_tokens: int) -> float:
        if self.max_cost is None or self.price is None:
            return 0.0
        worst = prompt_tokens * self.price[0] + max_tokens * self.price[1]
        if not self.ray_get(self.shared.reserve.remote(worst)):
            raise Stop("max_cost")
        return worst

    def settle(self, reserved: float, answer: Answer | None) -> None:
        super().settle(0.0, answer)
        if reserved:
            self.shared.settle.remote(reserved, False, None)

    def flush(self, wait: bool = False) -> None:
        """Send what was paid since the last flush to the shared actor (``wait``: until it has it)."""
        with self.lock:
            now = (self.spent, self.calls, self.unknown)
            delta = tuple(a - b for a, b in zip(now, self.sent))
            self.sent = now
        if any(delta):
            ref = self.shared.add.remote(*delta)
            if wait:
                self.ray_get(ref)


def unit_rows(batch: dict[str, Any]) -> list[tuple[int, str, str]]:
    """``(unit index, query, text)`` of a Ray Data batch (columns ``u``, ``query``, ``text``)."""
    return [(int(u), str(q), str(t)) for u, q, t in zip(batch["u"], batch["query"], batch["text"])]


class _RunEngine(Engine):
    """The engine, with this run's id in every record it writes: a batch Ray retries on another worker then knows
    that the answers it finds in the store were paid by this run (a drained or killed worker's), not by an earlier
    one."""

    run_id = ""

    def _record(self, answer, parsed, *, previous=None):
        return {**super()._record(answer, parsed, previous=previous), "ray_run": self.run_id}


class PairJudge:
    """The callable class of ``Dataset.map_batches``: judges a batch of units, returns one row per unit (its records
    as JSON, ``failed``, ``paid``, ``left`` for a unit not finished: ``max_cost``, ``batched``, ``halted``,
    ``fatal``)."""

    def __init__(self, *, model: str, prompt: Prompt, store: str, config: JudgeConfig, api_base: Any,
                 api_key: str | None, api_key_env: str | None, lease_s: float | None, shared: Any, run_id: str = ""):
        import ray  # inside a worker, Ray is there

        self.model, self.prompt, self.config, self.run_id = model, prompt, config, run_id
        self.db, _ = open_store(store, lease_s=lease_s)
        self.db.check_writable()
        self.owner = new_owner()
        self.budget = _WorkerBudget(config.max_cost, model, shared, ray.get)
        self.stopped: str | None = None
        self.fatal: str | None = None
        self.draining = False
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="relgrade-ray-judge", daemon=True)
        self._thread.start()
        self._api = {"api_base": api_base, "api_key": api_key, "api_key_env": api_key_env}
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._drain)

    async def _start(self) -> None:
        self.caller = Caller(self.model, self.config, **self._api)
        self.engine = _RunEngine(self.model, self.prompt, self.db, self.config, self.caller, self.budget, None,
                                 owner=self.owner, started=time.time())
        self.engine.run_id = self.run_id
        self.slots = asyncio.Semaphore(2 * self.caller.capacity)  # as ajudge_pairs: one parses while one calls
        self.beat = asyncio.ensure_future(self._heartbeat())
        self.running = 0

    async def _heartbeat(self) -> None:
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            self.budget.flush()  # the driver's progress and totals see this worker's calls within a second
            if time.monotonic() - renewed < self.db.lease_s / 3:
                continue
            renewed = time.monotonic()
            try:
                await self.engine._io(self.db.renew, self.owner)
            except InputError:
                return

    def _drain(self, signum, frame) -> None:  # SIGTERM: finish and store the calls in flight, send no new one
        self.draining = True
        self.caller.halt("stopped")
        threading.Thread(target=self._exit_when_idle, daemon=True).start()

    def _exit_when_idle(self) -> None:
        deadline = time.monotonic() + self.config.timeout * 2
        while self.running and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            asyncio.run_coroutine_threadsafe(self.engine._io(self.db.release, self.owner), self.loop).result(10)
            self.budget.flush(wait=True)
        except Exception:  # noqa: BLE001 - exiting anyway; the claims then run out with their lease
            pass
        os._exit(1)  # Ray sees a dead worker and retries its batches elsewhere

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        rows = unit_rows(batch)
        units = make_units([Pair("", "", q, t) for _, q, t in rows], self.model, self.prompt, self.config)
        by_text = {(u.query, u.text): u for u in units}
        ordered = [by_text[(q, t)] for _, q, t in rows]
        left = asyncio.run_coroutine_threadsafe(self._judge(units), self.loop).result()
        self.budget.flush(wait=True)  # counted before the driver can read the totals after the last batch
        if self.draining:
            time.sleep(3600)  # never return a batch cut short: the process exits and Ray retries it
        return {"u": [u for u, _, _ in rows],
                "records": [json.dumps({str(i): r for i, r in unit.records.items()}) for unit in ordered],
                "failed": [unit.failed or "" for unit in ordered],
                "paid": [unit.paid_now for unit in ordered],
                "left": [left.get(id(unit), "") for unit in ordered],
                "fatal": [self.fatal or "" for _ in ordered]}

    def _acquire_all(self, units: list) -> bool:
        """:meth:`Engine.acquire` for a whole batch in one claim and one read (the common case: no other worker holds
        any of its pairs); False, and nothing claimed, when another owner holds one of them (then pair by pair)."""
        config, prompt = self.config, self.prompt
        todo = [k for u in units for i, k in enumerate(u.keys) if not is_done(u.records.get(i), config)]
        if not todo:
            return True
        claimed, busy = self.db.claim(todo, self.owner,
                                      retry_before=self.engine.started if config.retry_unjudged else None)
        if busy:
            return False
        fresh = self.db.get_many([k for u in units for k in u.keys])
        check_grades(fresh, prompt, str(self.db.path))
        for unit in units:
            for i, k in enumerate(unit.keys):
                if k in fresh and (k not in claimed or fresh[k]["status"] == "pending_repair"):
                    unit.records[i] = fresh[k]
            unit.claimed = claimed & set(unit.keys)
            left = [k for i, k in enumerate(unit.keys) if k not in claimed and not is_done(unit.records.get(i), config)]
            unit.batched = self.db.in_open_batches(left) if left else set()
        return True

    async def _judge(self, units: list) -> dict[int, str]:
        engine, config = self.engine, self.config
        await engine._io(load_records, units, self.db, self.prompt)
        todo = [u for u in units if not unit_done(u, config)]
        together = bool(todo) and not (self.stopped or self.fatal or self.draining) \
            and await engine._io(self._acquire_all, todo)
        left: dict[int, str] = {}
        poll = min(1.0, self.db.lease_s / 4)

        async def one(unit) -> None:
            async with self.slots:
                if self.stopped or self.fatal or self.draining:
                    left[id(unit)] = "fatal" if self.fatal else (self.stopped or "halted")
                    return
                self.running += 1
                try:
                    while not together and not await engine.aacquire(unit):  # another worker holds a claim
                        await asyncio.sleep(poll)
                    await engine.judge_unit(unit)
                    if unit.batched and not unit_done(unit, config) and unit.failed is None:
                        left[id(unit)] = "batched"
                except Stop as stop:
                    self.stopped = self.stopped or str(stop)
                    self.caller.halt(self.stopped)
                    left[id(unit)] = self.stopped
                except Halted:
                    left[id(unit)] = "halted"
                except FatalCallError as exc:
                    self.fatal = self.fatal or str(exc)
                    self.caller.halt("fatal")
                    left[id(unit)] = "fatal"
                finally:
                    self.running -= 1

        await asyncio.gather(*(one(u) for u in todo))
        if self.stopped or self.fatal:
            await engine._io(self.db.release, self.owner)  # this worker sends nothing more: free its pairs at once
        return left

