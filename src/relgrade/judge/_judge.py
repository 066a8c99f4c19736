"""The judging engine: pointwise, deduplicated, resumable, within a budget.

Each (query, chunk) pair is judged on its own (no position bias). Pairs with identical query and
chunk text share one judgment. For every judgment the store is consulted first; a miss is paid
for once and committed the moment it arrives. An unreadable answer (no grade, or off the scale)
gets one repair request (the answer is stored as ``pending_repair`` first, so a crash between the
two never pays the first call again); a second failure is recorded as *unjudged* with the raw
answer and the reason. A pair whose calls all fail (after the retries) is *failed*: reported, not
stored, asked again on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.judge._call import (
    Answer, Caller, FatalCallError, Halted, PairCallError, check_local, count_tokens, price_per_token,
)
from relgrade.judge._config import JudgeConfig
from relgrade.judge._parse import Parsed, expected_grade, grade_distribution, parse_answer
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt, load_prompt
from relgrade.judge._store import DEFAULT_STORE, JudgmentStore, judgment_key

DEFAULT_MODEL = "local/gemma3-270m"
"""The default judge: the embedded Gemma 3 270M base model. A plumbing default of near-zero
agreement with human labels; calibrate it (``relgrade calibrate``) like any judge."""

_EXPECTED_COMPLETION_TOKENS = 30
_REPAIR = ("Your answer could not be read: {error}. Reply again with only the JSON object "
           '{{"{key}": <an integer from {lo} to {hi}>, "reason": "<one short sentence>"}} and no other text.')


@dataclass(frozen=True)
class Judgment:
    """The judgment of one pooled pair.

    ``status``: ``judged`` (``grade`` set), ``unjudged`` (the answer had no grade on the scale,
    even after one repair; ``raw_answer`` and ``error`` say why) or ``failed`` (no answer after the
    retries; not stored, asked again next run). ``cached`` is True when this run paid nothing for
    the row (it came from the store, or from an identical pair judged earlier in the run); tokens
    and cost are those of the answer when it was paid for. With ``samples > 1``: ``grade`` is the
    majority of the judged samples (ties to the lower grade), ``mean_grade`` their mean and
    ``spread`` their population standard deviation.
    """

    query_id: str
    doc_id: str
    query: str
    text: str
    grade: int | None
    status: str
    distribution: Mapping[str, float] | None
    expected_grade: float | None
    reason: str | None
    model: str
    prompt_hash: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float | None
    cached: bool
    raw_answer: str | None = None
    error: str | None = None
    samples: tuple[int | None, ...] | None = None
    mean_grade: float | None = None
    spread: float | None = None
    scale: tuple[int, ...] | None = None
    """The grades the prompt allows (``(0, 1, 2, 3)``, ``(0, 1)`` for a binary judge); in the details
    JSONL so that ``relgrade calibrate`` compares a binary judge with graded human labels correctly."""
    runs: tuple[int, ...] = ()
    """The runs (indices in pooling order) that showed this text for this (query id, doc id)."""

    def to_dict(self) -> dict[str, Any]:
        """The details-JSONL object (``raw_answer`` only when not judged; sample fields only with samples)."""
        out: dict[str, Any] = {
            "query_id": self.query_id, "doc_id": self.doc_id, "query": self.query, "text": self.text,
            "grade": self.grade, "status": self.status,
            "distribution": dict(self.distribution) if self.distribution is not None else None,
            "expected_grade": self.expected_grade, "reason": self.reason, "model": self.model,
            "prompt_hash": self.prompt_hash, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd,
            "latency_s": self.latency_s, "cached": self.cached,
            "text_sha256": hashlib.sha256(self.text.encode("utf-8")).hexdigest(),
        }
        if self.runs:
            out["runs"] = list(self.runs)
        if self.scale is not None:
            out["scale"] = list(self.scale)
        if self.status != "judged":
            out["raw_answer"] = self.raw_answer
            out["error"] = self.error
        if self.samples is not None:
            out["samples"] = list(self.samples)
            out["mean_grade"] = self.mean_grade
            out["spread"] = self.spread
        return out


@dataclass(frozen=True)
class JudgeResult:
    """All judgments of a run, what remains undone, and what this run spent.

    ``stopped`` is None when every pair was attempted, ``"max_cost"`` when the budget stopped it,
    ``"interrupted"`` on Ctrl-C. ``cost_usd`` and ``n_calls`` count this run's paid calls only;
    ``cost_unknown`` counts paid calls whose price litellm does not know.
    """

    judgments: tuple[Judgment, ...]
    remaining: tuple[Pair, ...]
    model: str
    prompt_hash: str
    stopped: str | None = None
    cost_usd: float = 0.0
    n_calls: int = 0
    cost_unknown: int = 0
    store: str | None = None
    retries: tuple[tuple[str, float], ...] = ()
    """One ``(cause, seconds waited)`` per retry: the HTTP status (``"429"``) or the error type."""

    def qrels(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}`` of the judged pairs (unjudged and failed left out).

        A qrels file holds one grade per (query id, doc id). When runs showed one doc id with
        different texts (:meth:`conflicts`), each text is judged and kept in the details with its
        ``text_sha256`` and ``runs``; the qrels hold the grade of the text of the *first* run in
        pooling order that showed the doc (left out if that text got no grade), never the other
        text's grade in its place. Evaluate the other runs with the details, or give their chunks
        their own ids.
        """
        out: dict[str, dict[str, int]] = {}
        first: set[tuple[str, str]] = set()
        for j in self.judgments:
            if (j.query_id, j.doc_id) in first:
                continue
            first.add((j.query_id, j.doc_id))
            if j.grade is not None:
                out.setdefault(j.query_id, {})[j.doc_id] = j.grade
        return out

    def conflicts(self) -> dict[tuple[str, str], tuple[Judgment, ...]]:
        """(query id, doc id) pairs judged on more than one text (runs that showed different texts)."""
        by_ids: dict[tuple[str, str], list[Judgment]] = {}
        for j in self.judgments:
            by_ids.setdefault((j.query_id, j.doc_id), []).append(j)
        return {k: tuple(v) for k, v in by_ids.items() if len({j.text for j in v}) > 1}

    @property
    def unjudged(self) -> tuple[Judgment, ...]:
        return tuple(j for j in self.judgments if j.grade is None)

    def counts(self) -> dict[str, int]:
        c = Counter(j.status for j in self.judgments)
        return {"pairs": len(self.judgments) + len(self.remaining), "judged": c["judged"],
                "cached": sum(j.cached for j in self.judgments), "unjudged": c["unjudged"],
                "failed": c["failed"], "remaining": len(self.remaining)}


@dataclass(frozen=True)
class DryRun:
    """What a run would do: pairs, distinct judgments, those already stored, tokens and dollars."""

    pairs: int
    unique: int
    cached: int
    to_judge: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


@dataclass
class _Unit:
    query: str
    text: str
    pairs: list[Pair]
    keys: list[str]
    messages: list[dict[str, str]] | None = None
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    failed: str | None = None
    paid_now: bool = False


class _Stop(Exception):
    pass


def _units(pairs: Iterable[Pair], model: str, prompt: Prompt, config: JudgeConfig) -> list[_Unit]:
    params = {**config.sampling(), "max_grade": prompt.max_grade}
    units: dict[tuple[str, str], _Unit] = {}
    for pair in pairs:
        if not isinstance(pair, Pair):
            raise InputError(f"judge_pairs wants Pair objects (query_id, doc_id, query, text), got {type(pair).__name__}")
        k = (pair.query, pair.text)
        unit = units.get(k)
        if unit is None:
            keys = [judgment_key(model, prompt.sha256, params if i == 0 else {**params, "sample": i},
                                 pair.query, pair.text) for i in range(config.samples)]
            unit = units[k] = _Unit(pair.query, pair.text, [], keys)
        unit.pairs.append(pair)
    return list(units.values())


def _done(record: dict[str, Any] | None, config: JudgeConfig) -> bool:
    if record is None:
        return False
    if record["status"] == "judged":
        return True
    return record["status"] == "unjudged" and not config.retry_unjudged


class _Budget:
    def __init__(self, max_cost: float | None, model: str):
        self.max_cost = max_cost
        self.spent = 0.0
        self.reserved = 0.0
        self.unknown = 0
        self.calls = 0
        self.price = None
        if max_cost is not None:
            self.price = price_per_token(model)
            if self.price is None:
                raise InputError(f"--max-cost: litellm has no price for {model}, so the budget cannot be enforced; "
                                 "drop --max-cost or use a model in litellm's price table")

    def reserve(self, prompt_tokens: int, max_tokens: int) -> float:
        if self.max_cost is None or self.price is None:
            return 0.0
        worst = prompt_tokens * self.price[0] + max_tokens * self.price[1]
        if self.spent + self.reserved + worst > self.max_cost:
            raise _Stop("max_cost")
        self.reserved += worst
        return worst

    def settle(self, reserved: float, answer: Answer | None) -> None:
        self.reserved -= reserved
        if answer is not None:
            self.calls += 1
            if answer.cost_usd is None:
                self.unknown += 1
            else:
                self.spent += answer.cost_usd


class _Engine:
    def __init__(self, model: str, prompt: Prompt, store: JudgmentStore, config: JudgeConfig, caller: Caller,
                 budget: _Budget, on_progress: Callable[[dict[str, Any]], None] | None):
        self.model, self.prompt, self.store, self.config = model, prompt, store, config
        self.caller, self.budget, self.on_progress = caller, budget, on_progress
        self.stopped: str | None = None
        self.fatal: str | None = None
        self.stats = Counter()

    def _progress(self, unit: _Unit) -> None:
        self.stats["done"] += len(unit.pairs)
        if unit.failed is not None:
            self.stats["failed"] += len(unit.pairs)
        else:
            statuses = [unit.records[i]["status"] for i in sorted(unit.records)]
            if "judged" not in statuses:
                self.stats["unjudged"] += len(unit.pairs)
        if unit.failed is None:
            self.stats["cached"] += len(unit.pairs) - (1 if unit.paid_now else 0)
        if self.on_progress is not None:
            self.on_progress({**self.stats, "cost_usd": self.budget.spent})

    async def _call(self, messages, sample: int, est_tokens: int) -> Answer:
        reserved = self.budget.reserve(est_tokens, self.config.max_tokens)
        answer = None
        try:
            answer = await self.caller.complete(messages, sample=sample, est_tokens=est_tokens)
            return answer
        finally:
            self.budget.settle(reserved, answer)

    def _record(self, answer: Answer, parsed: Parsed, *, previous: dict[str, Any] | None = None) -> dict[str, Any]:
        scale = self.prompt.scale
        distribution = grade_distribution(answer.logprobs, answer.content, parsed, scale)
        rec = {
            "grade": parsed.grade, "status": "judged" if parsed.grade is not None else "unjudged",
            "reason": parsed.reason, "distribution": distribution, "expected_grade": expected_grade(distribution),
            "raw_answer": answer.content, "error": parsed.error,
            "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
            "cost_usd": answer.cost_usd, "latency_s": round(answer.latency_s, 6), "calls": 1,
        }
        if previous is not None:  # a repair: carry the first answer's tokens, cost and text
            rec["prompt_tokens"] += previous.get("prompt_tokens", 0)
            rec["completion_tokens"] += previous.get("completion_tokens", 0)
            costs = [c for c in (previous.get("cost_usd"), answer.cost_usd)]
            rec["cost_usd"] = None if None in costs else sum(costs)
            rec["calls"] += previous.get("calls", 1)
            rec["first_answer"] = previous.get("raw_answer")
            rec["repaired"] = True
            if parsed.grade is None:
                rec["raw_answer"] = f"{previous.get('raw_answer')}\n---- repair ----\n{answer.content}"
                rec["error"] = f"{previous.get('error')}; after one repair: {parsed.error}"
        return rec

    def _put(self, key: str, rec: dict[str, Any]) -> None:
        self.store.put(key, model=self.model, prompt_hash=self.prompt.hash, status=rec["status"],
                       grade=rec["grade"], record={k: v for k, v in rec.items() if k not in {"status", "grade"}})

    async def _sample(self, unit: _Unit, i: int) -> None:
        key = unit.keys[i]
        stored = unit.records.get(i)
        if _done(stored, self.config):
            return
        if unit.messages is None:
            unit.messages = self.prompt.render(unit.query, unit.text)
        messages = unit.messages
        est = count_tokens(self.model, messages) if (self.budget.max_cost is not None or self.config.tpm) else 0
        lo, hi = min(self.prompt.scale), max(self.prompt.scale)
        if stored is not None and stored["status"] == "pending_repair":
            first = stored
        else:
            answer = await self._call(messages, i, est)
            unit.paid_now = True
            parsed = parse_answer(answer.content, self.prompt.scale, self.prompt.grade_key)
            rec = self._record(answer, parsed)
            if parsed.grade is not None:
                self._put(key, rec)
                unit.records[i] = rec
                return
            rec["status"] = "pending_repair"
            self._put(key, rec)
            unit.records[i] = first = rec
        repair = [*messages, {"role": "assistant", "content": first.get("raw_answer") or ""},
                  {"role": "user", "content": _REPAIR.format(error=first.get("error"), lo=lo, hi=hi,
                                                                  key=self.prompt.grade_key)}]
        answer = await self._call(repair, i, est + 200)
        unit.paid_now = True
        parsed = parse_answer(answer.content, self.prompt.scale, self.prompt.grade_key)
        rec = self._record(answer, parsed, previous=first)
        self._put(key, rec)
        unit.records[i] = rec

    async def judge_unit(self, unit: _Unit) -> None:
        for i in range(self.config.samples):
            try:
                await self._sample(unit, i)
            except PairCallError as exc:
                unit.failed = str(exc)
                return


def _aggregate(unit: _Unit, model: str, prompt: Prompt, samples: int, cached: bool) -> Judgment:
    recs = [unit.records.get(i) for i in range(samples)]
    present = [r for r in recs if r is not None and r.get("status") in {"judged", "unjudged"}]
    tokens_in = sum(r.get("prompt_tokens", 0) for r in present)
    tokens_out = sum(r.get("completion_tokens", 0) for r in present)
    costs = [r.get("cost_usd") for r in present]
    cost = None if (not present or None in costs) else float(sum(costs))
    latency = max((r.get("latency_s") or 0.0 for r in present), default=None)
    grades = [r.get("grade") if r.get("status") == "judged" else None for r in present]
    judged = [g for g in grades if g is not None]
    base = dict(model=model, prompt_hash=prompt.hash, prompt_tokens=tokens_in, completion_tokens=tokens_out,
                cost_usd=cost, latency_s=latency, cached=cached, scale=tuple(prompt.scale))
    if unit.failed is not None and not judged:
        base["cached"] = False
        return Judgment(**_ids(unit), grade=None, status="failed", distribution=None, expected_grade=None,
                        reason=None, raw_answer=None, error=unit.failed, **base)
    if not judged:
        last = present[-1] if present else {}
        return Judgment(**_ids(unit), grade=None, status="unjudged", distribution=None, expected_grade=None,
                        reason=last.get("reason"), raw_answer=last.get("raw_answer"), error=last.get("error"),
                        samples=tuple(grades) if samples > 1 else None, **base)
    if samples == 1:
        r = present[0]
        return Judgment(**_ids(unit), grade=r["grade"], status="judged", distribution=r.get("distribution"),
                        expected_grade=r.get("expected_grade"), reason=r.get("reason"), **base)
    counts = Counter(judged)
    top = max(counts.values())
    majority = min(g for g, c in counts.items() if c == top)
    dists = [r.get("distribution") for r in present if r.get("status") == "judged"]
    if all(d for d in dists):
        dist = {g: sum(d[g] for d in dists) / len(dists) for g in dists[0]}
    else:
        dist = {str(g): counts.get(g, 0) / len(judged) for g in prompt.scale}
    reason = next((r.get("reason") for r in present if r.get("grade") == majority), None)
    return Judgment(**_ids(unit), grade=majority, status="judged", distribution=dist,
                    expected_grade=expected_grade(dist), reason=reason, samples=tuple(grades),
                    mean_grade=statistics.fmean(judged), spread=statistics.pstdev(judged), **base)


def _ids(unit: _Unit) -> dict[str, str]:
    p = unit.pairs[0]
    return {"query_id": p.query_id, "doc_id": p.doc_id, "query": p.query, "text": p.text, "runs": p.runs}


def _fan_out(unit: _Unit, judgment: Judgment) -> list[Judgment]:
    from dataclasses import replace

    out = [judgment]
    for p in unit.pairs[1:]:
        out.append(replace(judgment, query_id=p.query_id, doc_id=p.doc_id, runs=p.runs,
                           cached=judgment.status != "failed"))
    return out


def _resolve(model: str | None, prompt: "str | Path | Prompt | None", max_grade: int | None) -> tuple[str, Prompt]:
    model = DEFAULT_MODEL if model is None else model  # "" is an error, never the default model
    if not isinstance(model, str) or not model.strip() or model != model.strip():
        raise InputError(f"--model must be a litellm model name such as openai/gpt-4o-mini, got {model!r}")
    if prompt is None:
        prompt = "local" if model.startswith("local/") else "graded"
    return model, load_prompt(prompt, max_grade=max_grade)


def _open_store(store: "str | Path | JudgmentStore | None") -> tuple[JudgmentStore, bool]:
    if isinstance(store, JudgmentStore):
        return store, False
    return JudgmentStore(DEFAULT_STORE if store is None else store), True


def estimate(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
             store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
             max_grade: int | None = None) -> DryRun:
    """What :func:`judge_pairs` would do, paying nothing: counts, prompt tokens and dollars to come.

    Prompt tokens are counted with litellm's tokenizer for the model; completion tokens are
    estimated at 30 per call (a short JSON answer); dollars use litellm's price table (None when the
    model is not in it).
    """
    config = config or JudgeConfig()
    model, prompt_obj = _resolve(model, prompt, max_grade)
    db, owned = _open_store(store)
    try:
        units = _units(pairs, model, prompt_obj, config)
        stored = db.get_many([k for u in units for k in u.keys])
    finally:
        if owned:
            db.close()
    cached = 0
    calls = 0
    tokens = 0
    for unit in units:
        todo = [k for k in unit.keys if not _done(stored.get(k), config)]
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
                  prompt_tokens=tokens, completion_tokens=out_tokens, cost_usd=cost)


async def ajudge_pairs(pairs: Sequence[Pair], *, model: str | None = None,
                       prompt: "str | Path | Prompt | None" = None,
                       store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                       api_base: "str | Sequence[str] | None" = None, api_key: str | None = None, api_key_env: str | None = None,
                       max_grade: int | None = None, on_progress: Callable[[dict[str, Any]], None] | None = None,
                       stop_event: asyncio.Event | None = None) -> JudgeResult:
    """Async :func:`judge_pairs`. Setting ``stop_event`` cancels the calls in flight and returns what is done
    with ``stopped="interrupted"``."""
    config = config or JudgeConfig()
    model, prompt_obj = _resolve(model, prompt, max_grade)
    check_local(model)
    pairs = list(pairs)
    units = _units(pairs, model, prompt_obj, config)
    db, owned = _open_store(store)
    try:
        budget = _Budget(config.max_cost, model)
        caller = Caller(model, config, api_base=api_base, api_key=api_key, api_key_env=api_key_env)
        engine = _Engine(model, prompt_obj, db, config, caller, budget, on_progress)
        stored = db.get_many([k for u in units for k in u.keys])
        todo: list[_Unit] = []
        finished: list[_Unit] = []
        for unit in units:
            unit.records = {i: stored[k] for i, k in enumerate(unit.keys) if k in stored}
            if all(_done(unit.records.get(i), config) for i in range(config.samples)):
                finished.append(unit)
                engine._progress(unit)
            else:
                todo.append(unit)
        remaining: list[_Unit] = []
        queue = iter(todo)

        async def worker() -> None:
            while engine.stopped is None and engine.fatal is None:
                unit = next(queue, None)
                if unit is None:
                    return
                try:
                    await engine.judge_unit(unit)
                except _Stop as stop:
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

        watcher = asyncio.ensure_future(watch()) if stop_event is not None else None
        try:
            await asyncio.gather(*tasks, return_exceptions=False)
        finally:
            if watcher is not None:
                watcher.cancel()
            await caller.aclose()
        if engine.fatal is not None:
            done = sum(1 for u in finished if u.paid_now)
            raise InputError(f"{engine.fatal} ({done} judgments paid before the error are kept in {db.path})")
        taken = {id(u) for u in finished} | {id(u) for u in remaining}
        remaining.extend(u for u in todo if id(u) not in taken)
        judgments: list[Judgment] = []
        for unit in finished:
            judgments.extend(_fan_out(unit, _aggregate(unit, model, prompt_obj, config.samples, not unit.paid_now)))
        order = {(p.query_id, p.doc_id, p.text): n for n, p in enumerate(pairs)}  # one doc id may have two texts
        judgments.sort(key=lambda j: order.get((j.query_id, j.doc_id, j.text), 0))
        left = sorted((p for u in remaining for p in u.pairs), key=lambda p: order.get((p.query_id, p.doc_id, p.text), 0))
        return JudgeResult(tuple(judgments), tuple(left), model=model, prompt_hash=prompt_obj.hash,
                           stopped=engine.stopped, cost_usd=budget.spent, n_calls=budget.calls,
                           cost_unknown=budget.unknown, store=str(db.path), retries=tuple(caller.sleeps))
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

    async def main() -> JudgeResult:
        stop = asyncio.Event()
        installed = False
        if handle_sigint and threading.current_thread() is threading.main_thread():
            try:
                asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
                installed = True
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            return await ajudge_pairs(pairs, model=model, prompt=prompt, store=store, config=config,
                                      api_base=api_base, api_key=api_key, api_key_env=api_key_env,
                                      max_grade=max_grade, on_progress=on_progress, stop_event=stop)
        finally:
            if installed:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # inside a running loop (a Jupyter cell): run on a loop of our own in a worker thread
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relgrade-judge") as pool:
        return pool.submit(asyncio.run, main()).result()
