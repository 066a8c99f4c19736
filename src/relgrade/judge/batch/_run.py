"""``judge --batch``: the pairs not in the store go to the provider's batch API at about half price.

Flow (one loop, every step resumable from the store alone):

1. The pairs are keyed exactly as :func:`~relgrade.judge.judge_pairs` keys them; stored answers are
   reused. Keys already in an open batch of the ledger (:mod:`relgrade.judge.store._ledger`) are
   *in flight*: never submitted again, whichever process or machine submitted them.
2. The rest is submitted in batches of at most ``batch_size`` requests. The ledger row and its
   items are written *before* the upload (state ``submitting``) and get the provider's batch id
   right after the create; a row left ``submitting`` by a crash is looked up at the provider by its
   local id (OpenAI batch ``metadata``) and adopted, or, when the provider has no such batch after
   two minutes, abandoned and its keys submitted again.
3. Every ``poll_interval`` seconds each open batch is polled; an ended batch's output (and error
   file) is read line by line into the store rows, with the same parser and the same semantics as
   the online judge: an unreadable answer is stored ``pending_repair`` and its repair goes out in
   the next batch; a second unreadable answer is ``unjudged``. Collecting is idempotent (each row
   records the batch that wrote it), so a crash mid-collection re-reads the file and pays nothing.
4. Lines that errored (per-line errors, the unanswered rest of an expired batch, every line of a
   failed batch) are submitted again, only those lines, up to ``max_rounds`` times in this run,
   after which the pair is *failed* (not stored, asked again on the next run). With
   ``fallback="direct"`` the pairs of a failed or expired batch are judged by direct calls instead.
   A provider does not bill errored or unanswered lines, so nothing is paid twice.

Cost is counted at batch prices: litellm's ``input_cost_per_token_batches`` /
``output_cost_per_token_batches`` where its price table has them, else 50% of the online price
(OpenAI and Anthropic both bill batches at half price; :func:`batch_price_per_token`).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.judge._config import JudgeConfig
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt, resolve
from relgrade.judge._results import JudgeResult, Judgment, in_pairs_order
from relgrade.judge.batch._api import TERMINAL, BatchAPIError, BatchRequest, BatchState
from relgrade.judge.batch._options import (  # the batch options live there; these three re-exported in __all__
    _STALE_SUBMIT, BATCH_DISCOUNT, DEFAULT_BATCH_SIZE, DEFAULT_MAX_POLL_ERRORS, DEFAULT_POLL_INTERVAL, check_batch_options,
)
from relgrade.judge.engine._budget import Budget
from relgrade.judge.engine._engine import _REPAIR, Engine, aggregate, fan_out, is_done, load_records, make_units, unit_done
from relgrade.judge.store._claims import new_owner
from relgrade.judge.store._ledger import BatchRow
from relgrade.judge.store._open import open_store
from relgrade.judge.store._store import JudgmentStore
from relgrade.judge.transport._call import import_litellm, key_env, price_per_token, provider_of
from relgrade.judge.transport._secrets import collect_secrets, redact

def batch_price_per_token(model: str) -> tuple[float, float, str] | None:
    """``(input, output, source)`` USD per token at batch prices, or None when the model has no price.

    ``source`` is ``"litellm"`` when litellm's price table lists ``input_cost_per_token_batches`` and
    ``output_cost_per_token_batches`` for the model, else ``"50% of online"``.
    """
    online = price_per_token(model)
    if online is None:
        return None
    if model.startswith("local/"):
        return (0.0, 0.0, "local")
    table = import_litellm().model_cost
    name = model.split("/", 1)[1] if "/" in model else model
    for entry in (table.get(model), table.get(name)):
        if entry and entry.get("input_cost_per_token_batches") is not None \
                and entry.get("output_cost_per_token_batches") is not None:
            return (float(entry["input_cost_per_token_batches"]), float(entry["output_cost_per_token_batches"]),
                    "litellm")
    return (online[0] * BATCH_DISCOUNT, online[1] * BATCH_DISCOUNT, f"{BATCH_DISCOUNT:.0%} of online")


def batch_cost(plan, model: str) -> tuple[float | None, str]:
    """A :class:`~relgrade.judge.DryRun`'s tokens at batch prices: ``(dollars or None, price source)``."""
    prices = batch_price_per_token(model)
    if prices is None:
        return None, "no price"
    return plan.prompt_tokens * prices[0] + plan.completion_tokens * prices[1], prices[2]


def batch_adapter(model: str, config: JudgeConfig, *, api_base: str | None, api_key: str | None,
                  secrets: tuple[str, ...] = ()):
    """The batch adapter for the model's provider (``openai/...`` or ``anthropic/...``); every answer it returns and
    every error it raises is masked with ``secrets`` (:func:`relgrade.judge.transport._secrets.collect_secrets`)."""
    provider = provider_of(model)
    body: dict[str, Any] = {"temperature": config.temperature, "max_tokens": config.max_tokens}
    kw = dict(api_base=api_base, api_key=api_key, secrets=secrets or collect_secrets(api_key),
              client={"max_attempts": config.max_attempts, "backoff": config.backoff_initial,
                      "backoff_max": config.backoff_max})
    if provider == "openai" and not model.startswith("local/"):
        from relgrade.judge.batch._openai import OpenAIBatches

        if config.logprobs:
            body.update(logprobs=True, top_logprobs=config.top_logprobs)
        return OpenAIBatches(model, body=body, **kw)
    if provider == "anthropic":
        from relgrade.judge.batch._anthropic import AnthropicBatches

        return AnthropicBatches(model, body=body, **kw)
    raise InputError(f"--batch: {model} has no batch API in relgrade (batch providers: openai/, anthropic/); "
                     "drop --batch to judge it with direct calls")


def batch_status(store: "str | Path | JudgmentStore | None" = None, *, model: str | None = None,
                 open_only: bool = True) -> list[BatchRow]:
    """The batches of the store's ledger (open ones by default): what ``judge --batch-status`` lists.
    A store file that does not exist has none (and is not created)."""
    db, owned = open_store(store, readonly=True)
    if db is None:
        return []
    try:
        return db.batch_ledger().rows(model=model, open_only=open_only)
    finally:
        if owned:
            db.close()


def in_pending_batches(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                       store: "JudgmentStore", config: JudgeConfig | None = None, max_grade: int | None = None) -> int:
    """How many of ``pairs`` have a judgment in a batch still pending in the store (the online judge must not pay
    for them again: they are paid for when the batch is collected; :func:`pending_batches_error`)."""
    config = config or JudgeConfig()
    model, prompt_obj = resolve(model, prompt, max_grade)
    ledger = store.batch_ledger()
    rows = [r for r in ledger.rows(model=model) if (r.detail or {}).get("prompt_hash") == prompt_obj.hash]
    if not rows:
        return 0
    pending = {k for r in rows for k, _ in ledger.items(r.local_id).values()}
    return sum(len(u.pairs) for u in make_units(pairs, model, prompt_obj, config) if pending.intersection(u.keys))


def pending_batches_error(n: int, store: str, *, paid: int = 0) -> InputError:
    """The one rule for an online judge that meets ``n`` pairs held by provider batches still pending, at start-up
    or during the run (a batch submitted meanwhile by another process): it pays nothing for them and writes no
    outputs (they would lack those pairs); collecting the batches with ``--batch`` finishes the job, and the ``paid``
    calls of this run are kept in the store."""
    kept = f"; what this run paid ({plural(paid, 'call')}) is kept in the store" if paid else ""
    return InputError(f"{n} of these pairs are in provider batches still pending in {store} (relgrade judge "
                      "--batch-status): collect them with the same command and --batch instead of paying for them "
                      f"twice{kept}")


class _BatchRun:
    def __init__(self, model: str, prompt: Prompt, db: JudgmentStore, config: JudgeConfig, api, *,
                 batch_size: int, max_rounds: int, fallback: str, max_poll_errors: int = DEFAULT_MAX_POLL_ERRORS):
        self.model, self.prompt, self.db, self.config, self.api = model, prompt, db, config, api
        self.ledger = db.batch_ledger()
        self.engine = Engine(model, prompt, db, config, None, Budget(None, model), None,
                             owner=new_owner(), started=time.time())  # for _record/_put
        prices = batch_price_per_token(model)
        self.prices = None if prices is None else prices[:2]
        self.batch_size, self.max_rounds, self.fallback = batch_size, max_rounds, fallback
        self.where: dict[str, tuple[Any, int]] = {}
        self.errors: dict[str, str] = {}
        self.rounds: Counter[str] = Counter()
        self.failed: set[str] = set()
        self.direct: set[str] = set()
        self.spent, self.calls, self.unknown = 0.0, 0, 0
        self.submitted_requests = 0
        self.reserved = 0.0
        self.secrets: tuple[str, ...] = getattr(api, "secrets", ())
        self.max_poll_errors = max_poll_errors
        self.poll_errors: Counter[str] = Counter()

    def rows(self) -> list[BatchRow]:
        tag = self.prompt.hash
        return [r for r in self.ledger.rows(model=self.model) if (r.detail or {}).get("prompt_hash", tag) == tag]

    # -- submit ---------------------------------------------------------------------------------
    def _request(self, key: str, kind: str, custom_id: str) -> BatchRequest:
        unit, i = self.where[key]
        if unit.messages is None:
            unit.messages = self.prompt.render(unit.query, unit.text)
        messages = unit.messages
        if kind == "repair":
            first = unit.records[i]
            lo, hi = min(self.prompt.scale), max(self.prompt.scale)
            messages = [*messages, {"role": "assistant", "content": first.get("raw_answer") or ""},
                        {"role": "user", "content": _REPAIR.format(error=first.get("error"), lo=lo, hi=hi,
                                                                        key=self.prompt.grade_key)}]
        seed = i if (i and self.config.temperature > 0) else None
        return BatchRequest(custom_id, messages, seed)

    def refresh(self) -> None:
        """Read again the rows of keys not done: another process may have collected them."""
        open_keys = [k for k, (unit, i) in self.where.items() if not is_done(unit.records.get(i), self.config)]
        for key, rec in self.db.get_many(open_keys).items():
            unit, i = self.where[key]
            unit.records[i] = rec

    def todo(self, in_flight: set[str]) -> list[tuple[str, str]]:
        out = []
        for key, (unit, i) in self.where.items():
            rec = unit.records.get(i)
            if is_done(rec, self.config) or key in in_flight or key in self.failed or key in self.direct:
                continue
            out.append((key, "repair" if rec is not None and rec.get("status") == "pending_repair" else "first"))
        return out

    def affordable(self, todo: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], bool]:
        """The requests that fit under ``max_cost`` (worst case: counted prompt + max_tokens at batch prices)."""
        if self.config.max_cost is None:
            return todo, False
        if self.prices is None:
            raise InputError(f"--max-cost: litellm has no price for {self.model}, so the budget cannot be enforced; "
                             "drop --max-cost or use a model in litellm's price table")
        from relgrade.judge.transport._call import count_tokens

        out = []
        for key, kind in todo:
            req = self._request(key, kind, "x")
            worst = count_tokens(self.model, req.messages) * self.prices[0] + self.config.max_tokens * self.prices[1]
            if self.spent + self.reserved + worst > self.config.max_cost:
                return out, True
            self.reserved += worst
            out.append((key, kind))
        return out, False

    async def submit(self, todo: list[tuple[str, str]]) -> None:
        for start in range(0, len(todo), self.batch_size):
            part = todo[start:start + self.batch_size]
            local_id = uuid.uuid4().hex
            items = [(f"{n}-{key[:24]}", key, kind) for n, (key, kind) in enumerate(part)]
            items = self.ledger.open(local_id, provider=self.api.provider, model=self.model, items=items,
                                     detail={"prompt_hash": self.prompt.hash})
            if not items:
                continue  # another process submitted (or judged) them meanwhile
            requests = [self._request(key, kind, cid) for cid, key, kind in items]
            try:
                batch_id = await self.api.submit(requests, local_id)
            except BatchAPIError as exc:
                why = redact(str(exc), self.secrets)[:300]
                if exc.fatal:
                    self.ledger.close(local_id, "abandoned", {"prompt_hash": self.prompt.hash, "error": why})
                    raise InputError(f"--batch: {self.api.provider} refused the batch ({why}); check the key in "
                                     f"{key_env(self.model)} and --model") from None
                raise InputError(f"--batch: could not submit a batch ({why}); re-run the same command to "
                                 "resume (the batch is looked up before anything is sent again)") from None
            self.ledger.submitted(local_id, batch_id)
            self.submitted_requests += len(items)

    async def recover(self, row: BatchRow) -> None:
        """A row left ``submitting``: adopt the provider's batch with our local id, or give it up when stale."""
        try:
            found = await self.api.find(row.local_id)
        except BatchAPIError:  # a malformed listing: as if not found (given up by age below)
            found = None
        if found is not None:
            self.ledger.submitted(row.local_id, found)
        elif time.time() - row.created > _STALE_SUBMIT:
            self.ledger.close(row.local_id, "abandoned", {**(row.detail or {}), "error": "never created"})

    # -- collect --------------------------------------------------------------------------------
    async def poll(self, row: BatchRow) -> tuple[BatchState | None, str | None]:
        """``(state, None)``, or ``(None, why)`` when the status could not be read; after ``max_poll_errors`` such
        polls in a row the run stops with one line (the batch stays in the ledger for the next run)."""
        from relgrade.judge.batch._collect import UnreadableBatch, collect

        try:
            state = await self.api.status(row.batch_id)
            if state.state in TERMINAL:
                await collect(self, row, state)
        except UnreadableBatch as exc:
            raise InputError(redact(str(exc), self.secrets)) from None
        except BatchAPIError as exc:
            why = redact(str(exc), self.secrets)[:300]
            if exc.fatal:
                raise InputError(f"--batch: cannot read batch {row.batch_id} at {self.api.provider} ({why})") from None
            self.poll_errors[row.local_id] += 1
            n = self.poll_errors[row.local_id]
            if n >= self.max_poll_errors:
                raise InputError(f"--batch: the status of batch {row.batch_id} at {self.api.provider} could not be "
                                 f"read {n} times in a row (last: {why}); the batch is kept in the store: re-run the "
                                 "same command to resume polling (relgrade judge --batch-status lists it)") from None
            return None, f"status not readable ({n} of {self.max_poll_errors} in a row: {why})"
        self.poll_errors.pop(row.local_id, None)
        return state, None

    def line_failed(self, key: str, error: str) -> None:
        self.rounds[key] += 1
        self.errors[key] = error
        if self.rounds[key] >= self.max_rounds:
            self.failed.add(key)

    def _answer(self, local_id: str, key: str, kind: str, line, turnaround: float) -> None:
        from relgrade.judge.batch._collect import store_answer

        store_answer(self, local_id, key, kind, line, turnaround)


async def ajudge_batch(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                       store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                       api_base: str | None = None, api_key: str | None = None, api_key_env: str | None = None,
                       max_grade: int | None = None, poll_interval: float = DEFAULT_POLL_INTERVAL,
                       batch_size: int = DEFAULT_BATCH_SIZE, max_rounds: int = 3, fallback: str = "batch",
                       max_poll_errors: int = DEFAULT_MAX_POLL_ERRORS,
                       on_poll: Callable[[list[tuple[BatchRow, BatchState | None, str | None]]], None] | None = None,
                       stop_event: asyncio.Event | None = None) -> JudgeResult:
    """Judge ``pairs`` through the provider's batch API; see the module doc. Returns a :class:`JudgeResult`
    whose ``cost_usd`` is at batch prices (plus direct calls with ``fallback="direct"``). ``on_poll`` gets, after each
    round of polls, ``(ledger row, state or None, why the status could not be read or None)`` per open batch."""
    config = config or JudgeConfig()
    check_batch_options(poll_interval=poll_interval, batch_size=batch_size, fallback=fallback,
                        max_poll_errors=max_poll_errors)
    model, prompt_obj = resolve(model, prompt, max_grade)
    env = key_env(model, api_key_env)
    key = api_key if api_key is not None else os.environ.get(env)
    api = batch_adapter(model, config, api_base=api_base, api_key=key,
                        secrets=collect_secrets(key, env_names=(api_key_env, env)))
    pairs = list(pairs)
    units = make_units(pairs, model, prompt_obj, config)
    if units:  # before the first request (a submit or a poll): a key, a server that answers, a known model
        from relgrade.judge.transport._preflight import apreflight

        await apreflight(model, transport="http" if provider_of(model) == "openai" else "litellm", api_base=api_base,
                         api_key=key, api_key_env=api_key_env)
    db, owned = open_store(store)
    db.check_writable()
    run = _BatchRun(model, prompt_obj, db, config, api, batch_size=batch_size, max_rounds=max_rounds,
                    fallback=fallback, max_poll_errors=max_poll_errors)
    try:
        stopped = await _loop(run, units, poll_interval, on_poll, stop_event)
        direct_result = None
        if run.direct:  # fallback="direct": the pairs of failed or expired batches, by direct calls
            from relgrade.judge._judge import ajudge_pairs

            direct_pairs = [p for u in units if any(k in run.direct for k in u.keys) for p in u.pairs]
            direct_result = await ajudge_pairs(direct_pairs, model=model, prompt=prompt_obj, store=db, config=config,
                                               api_base=api_base, api_key=key, max_grade=max_grade,
                                               stop_event=stop_event)
        return _result(pairs, units, run, model, prompt_obj, config, stopped, direct_result, db)
    finally:
        if owned:
            db.close()


async def _loop(run: _BatchRun, units, poll_interval: float, on_poll, stop_event) -> str | None:
    """Submit, poll and collect until nothing is left in flight; returns ``stopped``."""
    db = run.db
    stopped = None
    try:
        load_records(units, db, run.prompt)
        for unit in units:
            for i, k in enumerate(unit.keys):
                run.where[k] = (unit, i)
        over_budget = False
        while True:
            rows = run.rows()
            for row in rows:
                if row.state == "submitting":
                    await run.recover(row)
            rows = run.rows()
            run.refresh()
            in_flight = {k for r in rows for k, _ in run.ledger.items(r.local_id).values()}
            todo = run.todo(in_flight)
            if todo and not over_budget and (stop_event is None or not stop_event.is_set()):
                todo, over_budget = run.affordable(todo)
                if todo:
                    await run.submit(todo)
                    rows = run.rows()
            if not rows:
                break
            report = []
            for row in rows:
                state, why = await run.poll(row) if row.state == "submitted" else (None, None)
                report.append((row, state, why))
            if on_poll is not None:
                on_poll(report)
            if all(s is not None and s.state in TERMINAL for _, s, _ in report):
                continue  # collected: the errored lines and repairs go out at once
            if stop_event is not None:
                try:
                    await asyncio.wait_for(stop_event.wait(), poll_interval)
                except asyncio.TimeoutError:
                    pass
                if stop_event.is_set():
                    stopped = "interrupted"
                    break
            else:
                await asyncio.sleep(poll_interval)
        if over_budget and stopped is None:
            stopped = "max_cost"
    finally:
        await run.api.aclose()
    return stopped


def _result(pairs, units, run: _BatchRun, model, prompt_obj, config, stopped, direct, db) -> JudgeResult:
    direct_ids = set()
    judgments: list[Judgment] = []
    remaining: list[Pair] = []
    if direct is not None:
        judgments.extend(direct.judgments)
        remaining.extend(direct.remaining)
        direct_ids = ({(j.query_id, j.doc_id, j.text) for j in direct.judgments}
                      | {(p.query_id, p.doc_id, p.text) for p in direct.remaining})  # one doc id may have two texts
    for unit in units:
        if (unit.pairs[0].query_id, unit.pairs[0].doc_id, unit.pairs[0].text) in direct_ids:
            continue
        if unit_done(unit, config):
            judgments.extend(fan_out(unit, aggregate(unit, model, prompt_obj, config.samples, not unit.paid_now)))
        elif any(k in run.failed for k in unit.keys):
            unit.failed = "; ".join(sorted({run.errors[k] for k in unit.keys if k in run.errors}))[:300]
            judgments.extend(fan_out(unit, aggregate(unit, model, prompt_obj, config.samples, False)))
        else:
            remaining.extend(unit.pairs)
    ordered, left = in_pairs_order(pairs, judgments, remaining)
    cost = run.spent + (direct.cost_usd if direct else 0.0)
    return JudgeResult(ordered, left, model=model, prompt_hash=prompt_obj.hash, stopped=stopped,
                       cost_usd=cost, n_calls=run.calls + (direct.n_calls if direct else 0),
                       cost_unknown=run.unknown + (direct.cost_unknown if direct else 0), store=str(db.path))


def judge_batch(pairs: Sequence[Pair], *, handle_sigint: bool = True, **kwargs: Any) -> JudgeResult:
    """Synchronous :func:`ajudge_batch` (same keywords). With ``handle_sigint`` the first Ctrl-C stops
    polling (``stopped="interrupted"``): the batches keep running at the provider and the next run collects them."""

    from relgrade.judge.engine._sync import run_sync

    return run_sync(lambda stop: ajudge_batch(pairs, stop_event=stop, **kwargs), handle_sigint=handle_sigint,
                    name="relgrade-batch")


__all__ = ["BATCH_DISCOUNT", "DEFAULT_BATCH_SIZE", "DEFAULT_POLL_INTERVAL", "ajudge_batch", "batch_adapter",
           "batch_cost", "batch_price_per_token", "batch_status", "in_pending_batches", "judge_batch",
           "pending_batches_error"]
