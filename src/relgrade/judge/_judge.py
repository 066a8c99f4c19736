"""Running the judge: :func:`judge_pairs` (its own event loop), :func:`ajudge_pairs` (async) and
:func:`estimate` (the dry run). The engine is in :mod:`relgrade.judge.engine._engine`, the results in
:mod:`relgrade.judge._results`."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.judge._config import JudgeConfig
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt, resolve
from relgrade.judge._results import DryRun, JudgeResult, Judgment, in_pairs_order
from relgrade.judge.engine._budget import Budget, Stop
from relgrade.judge.engine._engine import (
    Engine, Unit, aggregate, check_grades, fan_out, is_done, load_records, make_units, unit_done,
)
from relgrade.judge.engine._walltime import median_latency
from relgrade.judge.store._claims import new_owner
from relgrade.judge.store._open import open_store
from relgrade.judge.store._store import JudgmentStore
from relgrade.judge.transport._call import Caller, FatalCallError, Halted, check_local, count_tokens, price_per_token
from relgrade.judge.transport._preflight import PROBE_TIMEOUT, apreflight

__all__ = ["DryRun", "JudgeResult", "Judgment", "ajudge_pairs", "estimate", "judge_pairs"]

_EXPECTED_COMPLETION_TOKENS = 30
LATENCY_ROWS = 1000
"""The dry run measures a model's latency over its latest judgments in the store, at most this many."""


def estimate(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
             store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
             max_grade: int | None = None) -> DryRun:
    """What :func:`judge_pairs` would do, paying nothing: counts, prompt tokens and dollars to come.

    Prompt tokens are counted with litellm's tokenizer for the model; completion tokens are
    estimated at 30 per call (a short JSON answer); dollars use litellm's price table (None when the
    model is not in it). ``latency_s``: the median latency of the model's latest judgments in the whole store (up to
    :data:`LATENCY_ROWS`, whatever their pool or prompt; :func:`relgrade.judge.engine._walltime.wall_time` turns it
    into a wall time).
    """
    config = config or JudgeConfig()
    model, prompt_obj = resolve(model, prompt, max_grade)
    units = make_units(pairs, model, prompt_obj, config)
    db, owned = open_store(store, readonly=True)  # a dry run writes nothing: no store is created
    try:
        stored = db.get_many([k for u in units for k in u.keys]) if db is not None else {}
        if db is not None:
            check_grades(stored, prompt_obj, str(db.path))
        latency, n_latency = median_latency(db.latest(model, LATENCY_ROWS) if db is not None else ())
    finally:
        if owned and db is not None:
            db.close()
    cached = 0
    calls = 0
    tokens = 0
    for unit in units:
        todo = [k for k in unit.keys if not is_done(stored.get(k), config)]
        if not todo:
            cached += 1
            continue
        n = count_tokens(model, prompt_obj.render(unit.query, unit.text))
        calls += len(todo)
        tokens += n * len(todo)
    out_tokens = calls * _EXPECTED_COMPLETION_TOKENS
    price = price_per_token(model)
    cost = None if price is None else tokens * price[0] + out_tokens * price[1]
    return DryRun(pairs=len(pairs), unique=len(units), cached=cached, to_judge=len(units) - cached, calls=calls,
                  prompt_tokens=tokens, completion_tokens=out_tokens, cost_usd=cost, latency_s=latency,
                  latency_n=n_latency)


async def ajudge_pairs(pairs: Sequence[Pair], *, model: str | None = None,
                       prompt: "str | Path | Prompt | None" = None,
                       store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                       api_base: "str | Sequence[str] | None" = None, api_key: str | None = None, api_key_env: str | None = None,
                       max_grade: int | None = None, on_progress: Callable[[dict[str, Any]], None] | None = None,
                       stop_event: asyncio.Event | None = None) -> JudgeResult:
    """Async :func:`judge_pairs`. Setting ``stop_event`` cancels the calls in flight and returns what is done
    with ``stopped="interrupted"``."""
    config = config or JudgeConfig()
    model, prompt_obj = resolve(model, prompt, max_grade)
    check_local(model)
    pairs = list(pairs)
    units = make_units(pairs, model, prompt_obj, config)
    db, owned = open_store(store)
    owner = new_owner()
    try:
        db.check_writable()
        load_records(units, db, prompt_obj)
        if not all(unit_done(u, config) for u in units):  # before the first paid call, and before importing the
            # transport: a key, a server that answers, a known model (issue 25)
            await apreflight(model, transport=config.transport, api_base=api_base, api_key=api_key,
                             api_key_env=api_key_env, timeout=min(PROBE_TIMEOUT, config.timeout))
        budget = Budget(config.max_cost, model)
        caller = Caller(model, config, api_base=api_base, api_key=api_key, api_key_env=api_key_env)
        engine = Engine(model, prompt_obj, db, config, caller, budget, on_progress, owner=owner, started=time.time())
        todo: list[Unit] = []
        finished: list[Unit] = []
        for unit in units:
            if unit_done(unit, config):
                finished.append(unit)
                engine._progress(unit)
            else:
                todo.append(unit)
        remaining: list[Unit] = []
        queue = iter(todo)
        waiting: deque[Unit] = deque()  # units another process holds a claim on: poll for their answers
        poll = min(1.0, db.lease_s / 4)

        async def worker() -> None:
            while engine.stopped is None and engine.fatal is None:
                unit = next(queue, None)
                polled = unit is None
                if polled:
                    if not waiting:
                        return
                    unit = waiting.popleft()
                try:
                    if polled:
                        await asyncio.sleep(poll)
                    if not await engine.aacquire(unit):
                        waiting.append(unit)
                        continue
                    await engine.judge_unit(unit)
                    if unit.batched and not unit_done(unit, config) and unit.failed is None:
                        remaining.append(unit)  # held by a provider batch still pending: judge --batch collects it
                        continue
                except Stop as stop:
                    engine.stopped = engine.stopped or str(stop)
                    caller.halt(engine.stopped)
                    remaining.append(unit)
                    return
                except FatalCallError as exc:
                    engine.fatal = engine.fatal or str(exc)
                    caller.halt("fatal")
                    remaining.append(unit)
                    return
                except Halted:
                    remaining.append(unit)
                    return
                except asyncio.CancelledError:
                    remaining.append(unit)
                    return
                finished.append(unit)
                engine._progress(unit)

        # Twice as many workers as request slots (Caller.slots): while one worker parses and stores an
        # answer, or waits out a Retry-After, another one's request already takes the freed slot.
        tasks = [asyncio.ensure_future(worker()) for _ in range(min(2 * caller.capacity, max(1, len(todo))))]

        async def watch() -> None:
            await stop_event.wait()  # type: ignore[union-attr]
            engine.stopped = engine.stopped or "interrupted"
            for t in tasks:
                t.cancel()

        async def heartbeat() -> None:  # keep this process's claims alive while it works
            while True:
                await asyncio.sleep(db.lease_s / 3)
                try:
                    db.renew(owner)
                except InputError:  # the store went away: the next put reports it
                    return

        watcher = asyncio.ensure_future(watch()) if stop_event is not None else None
        beat = asyncio.ensure_future(heartbeat())
        try:
            await asyncio.gather(*tasks, return_exceptions=False)
        finally:
            beat.cancel()
            if watcher is not None:
                watcher.cancel()
            await caller.aclose()
            engine.close()
            try:
                db.release(owner)  # unfinished pairs go back to the pool at once (else after the lease)
            except InputError:
                pass
        if engine.fatal is not None:
            done = sum(1 for u in finished if u.paid_now)
            raise InputError(f"{engine.fatal} ({done} judgments paid before the error are kept in {db.path})")
        taken = {id(u) for u in finished} | {id(u) for u in remaining}
        remaining.extend(u for u in todo if id(u) not in taken)
        judgments: list[Judgment] = []
        for unit in finished:
            judgments.extend(fan_out(unit, aggregate(unit, model, prompt_obj, config.samples, not unit.paid_now)))
        ordered, left = in_pairs_order(pairs, judgments, (p for u in remaining for p in u.pairs))
        return JudgeResult(ordered, left, model=model, prompt_hash=prompt_obj.hash,
                           stopped=engine.stopped, cost_usd=budget.spent, n_calls=budget.calls,
                           cost_unknown=budget.unknown, store=str(db.path), retries=tuple(caller.sleeps),
                           in_batches=sum(len(u.pairs) for u in remaining if u.batched))
    finally:
        if owned:
            db.close()


def judge_pairs(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                api_base: "str | Sequence[str] | None" = None, api_key: str | None = None, api_key_env: str | None = None,
                max_grade: int | None = None, on_progress: Callable[[dict[str, Any]], None] | None = None,
                handle_sigint: bool = True) -> JudgeResult:
    """Judge ``pairs`` (see :func:`relgrade.judge.pool`) and return a :class:`JudgeResult`.

    Runs its own event loop; called where a loop is already running (a notebook cell), it runs
    on a worker thread (``await ajudge_pairs(...)`` is the async form). With ``handle_sigint`` (main
    thread only) the first Ctrl-C stops cleanly: calls in flight are abandoned, everything already
    answered is kept and returned with ``stopped="interrupted"``.
    """

    from relgrade.judge.engine._sync import run_sync

    return run_sync(lambda stop: ajudge_pairs(pairs, model=model, prompt=prompt, store=store, config=config,
                                              api_base=api_base, api_key=api_key, api_key_env=api_key_env,
                                              max_grade=max_grade, on_progress=on_progress, stop_event=stop),
                    handle_sigint=handle_sigint, name="relgrade-judge")
