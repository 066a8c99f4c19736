"""A judging session shared by many small batches: one store connection, one budget, one caller.

:func:`relgrade.judge.ajudge_pairs` builds its engine, budget, store connection and HTTP session per
call, which is right for one run. A caller that judges in many small pieces (the ragas metric: one
sample's contexts at a time, samples scored concurrently) needs them shared, or ``max_cost``,
``concurrency``, ``rpm`` and ``tpm`` would apply per piece. :class:`JudgeSession` holds them:

- the store connection is opened once (:meth:`close` closes it);
- the budget (``config.max_cost``) counts every call of the session; once it would be exceeded no
  further call goes out and the pieces still to judge come back in ``remaining`` with ``stopped="max_cost"``;
- the caller (its ``concurrency`` slots, ``rpm``/``tpm`` windows, lean HTTP connections) is built
  once per event loop: ``ragas`` runs one loop for a whole evaluation, so one caller serves all samples.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from relgrade._errors import InputError
from relgrade.judge._budget import Budget, Stop
from relgrade.judge._call import Caller, FatalCallError, Halted, check_local
from relgrade.judge._config import JudgeConfig
from relgrade.judge._engine import Engine, aggregate, fan_out, load_records, make_units, unit_done
from relgrade.judge._judge import _resolve
from relgrade.judge._pool import Pair
from relgrade.judge._preflight import PROBE_TIMEOUT, apreflight
from relgrade.judge._prompt import Prompt
from relgrade.judge._results import JudgeResult, in_pairs_order
from relgrade.judge._store import JudgmentStore, new_owner, open_store


class JudgeSession:
    """Judge pairs in many calls of :meth:`ajudge` that share one store, budget and caller (module doc)."""

    def __init__(self, *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                 store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                 api_base: str | None = None, api_key: str | None = None, api_key_env: str | None = None,
                 max_grade: int | None = None):
        self.config = config or JudgeConfig()
        self.model, self.prompt = _resolve(model, prompt, max_grade)
        check_local(self.model)
        self._store_arg = store
        self._db: JudgmentStore | None = None
        self._owned = False
        self._api = {"api_base": api_base, "api_key": api_key, "api_key_env": api_key_env}
        self.budget = Budget(self.config.max_cost, self.model)
        self.owner = new_owner()  # claims: another process on the same store never pays for what this one claimed
        self.callers_built = 0
        self._caller: Caller | None = None
        self._engine: Engine | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stopped: str | None = None
        self.preflighted = False

    @property
    def store(self) -> JudgmentStore:
        if self._db is None:
            self._db, self._owned = open_store(self._store_arg)
            self._db.check_writable()
        return self._db

    def _engine_for_loop(self) -> Engine:
        loop = asyncio.get_running_loop()
        if self._engine is None or self._loop is not loop:
            self._caller = Caller(self.model, self.config, **self._api)
            self._engine = Engine(self.model, self.prompt, self.store, self.config, self._caller, self.budget, None,
                                  owner=self.owner, started=time.time())
            self._loop = loop
            self.callers_built += 1
        return self._engine

    async def ajudge(self, pairs: Sequence[Pair]) -> JudgeResult:
        """Judge ``pairs`` within the session; what the budget stopped comes back in ``remaining``."""
        pairs = list(pairs)
        units = make_units(pairs, self.model, self.prompt, self.config)
        load_records(units, self.store, self.prompt)
        todo = [unit for unit in units if not unit_done(unit, self.config)]
        if todo and not self.preflighted:  # once, before the session's first paid call (relgrade.judge._preflight)
            await apreflight(self.model, transport=self.config.transport, **self._api,
                             timeout=min(PROBE_TIMEOUT, self.config.timeout))
            self.preflighted = True
        engine = self._engine_for_loop()
        remaining: list = []
        calls_before = self.budget.calls

        async def one(unit) -> None:
            if self.stopped is not None:
                remaining.append(unit)
                return
            try:
                while not await engine.aacquire(unit):  # another process holds a claim: wait for its answer
                    await asyncio.sleep(min(1.0, self.store.lease_s / 4))
                await engine.judge_unit(unit)
                if unit.batched and not unit_done(unit, self.config) and unit.failed is None:
                    remaining.append(unit)  # held by a provider batch still pending: never paid here
            except Stop as stop:
                self.stopped = self.stopped or str(stop)
                remaining.append(unit)
            except Halted:
                remaining.append(unit)
            except FatalCallError as exc:
                self.stopped = self.stopped or "fatal"
                self._caller.halt("fatal")  # type: ignore[union-attr]
                raise exc

        try:
            await asyncio.gather(*(one(u) for u in todo))
        finally:
            try:
                self.store.release(self.owner)  # what this piece did not finish goes back to the pool at once
            except InputError:
                pass
        left = {id(u) for u in remaining}
        judgments = []
        for unit in units:
            if id(unit) not in left:
                judgments.extend(fan_out(unit, aggregate(unit, self.model, self.prompt, self.config.samples,
                                                           not unit.paid_now)))
        ordered, rest = in_pairs_order(pairs, judgments, (p for u in remaining for p in u.pairs))
        return JudgeResult(ordered, rest, model=self.model, prompt_hash=self.prompt.hash,
                           stopped=self.stopped, cost_usd=self.budget.spent,
                           n_calls=self.budget.calls - calls_before, cost_unknown=self.budget.unknown,
                           store=str(self.store.path))

    async def aclose(self) -> None:
        """Close the caller's connections (of the current loop) and the store, if the session opened it."""
        if self._caller is not None and self._loop is asyncio.get_running_loop():
            await self._caller.aclose()
        if self._engine is not None:
            self._engine.close()
        self._caller = self._engine = self._loop = None
        self.close()

    def close(self) -> None:
        """Close the store connection if the session opened it (a later :meth:`ajudge` reopens it)."""
        if self._db is not None and self._owned:
            self._db.close()
        self._db = None


__all__ = ["JudgeSession"]
