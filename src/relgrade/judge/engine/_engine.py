"""The judging engine: pointwise, deduplicated, resumable, within a budget.

Each (query, chunk) pair is judged on its own (no position bias). Pairs with identical query and
chunk text share one judgment (a :class:`Unit`). For every judgment the store is consulted first; a
miss is paid for once and committed the moment it arrives. An unreadable answer (no grade, or off
the scale) gets one repair request (the answer is stored as ``pending_repair`` first, so a crash
between the two never pays the first call again); a second failure is recorded as *unjudged* with
the raw answer and the reason. A pair whose calls all fail (after the retries) is *failed*:
reported, not stored, asked again on the next run.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from relgrade._errors import InputError
from relgrade.io._text import no_surrogates
from relgrade.judge._config import JudgeConfig
from relgrade.judge._parse import Parsed, expected_grade, grade_distribution, parse_answer
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt
from relgrade.judge._results import Judgment
from relgrade.judge.engine._budget import Budget
from relgrade.judge.store._integrity import reparse_problem
from relgrade.judge.store._store import JudgmentStore, judgment_key
from relgrade.judge.transport._call import Answer, Caller, PairCallError, count_tokens
from relgrade.judge.transport._secrets import check_key_places

__all__ = ["Engine", "Unit", "aggregate", "check_grades", "fan_out", "is_done", "make_units"]

_REPAIR = ("Your answer could not be read: {error}. Reply again with only the JSON object "
           '{{"{key}": <an integer from {lo} to {hi}>, "reason": "<one short sentence>"}} and no other text.')


@dataclass
class Unit:
    query: str
    text: str
    pairs: list[Pair]
    keys: list[str]
    messages: list[dict[str, str]] | None = None
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    failed: str | None = None
    paid_now: bool = False
    claimed: set[str] = field(default_factory=set)
    """The keys this process holds a claim on (only those are paid for)."""
    batched: set[str] = field(default_factory=set)
    """The keys held by a provider batch still open (left to it: the unit stays undone here)."""


def make_units(pairs: Iterable[Pair], model: str, prompt: Prompt, config: JudgeConfig) -> list[Unit]:
    check_key_places(model=model)  # a key given as the model would be written into every key, row and output
    params = {**config.sampling(), "max_grade": prompt.max_grade}
    units: dict[tuple[str, str], Unit] = {}
    for pair in pairs:
        if not isinstance(pair, Pair):
            raise InputError(f"judge_pairs wants Pair objects (query_id, doc_id, query, text), got {type(pair).__name__}")
        k = (pair.query, pair.text)
        unit = units.get(k)
        if unit is None:
            if no_surrogates(pair.query) is not pair.query or no_surrogates(pair.text) is not pair.text:
                raise InputError(f"pair (query {pair.query_id}, doc {pair.doc_id}): its text holds a lone UTF-16 "
                                 "surrogate, which is not text (half of an emoji?); clean the text first")
            keys = [judgment_key(model, prompt.sha256, params if i == 0 else {**params, "sample": i},
                                 pair.query, pair.text) for i in range(config.samples)]
            unit = units[k] = Unit(pair.query, pair.text, [], keys)
        unit.pairs.append(pair)
    return list(units.values())


def check_grades(records: dict[str, dict[str, Any]], prompt: Prompt, where: str) -> None:
    """Refuse a stored judgment whose grade is off the prompt's scale, or (a row written before rows carried an
    integrity check) is not what its stored answer reads (a tampered or foreign row)."""
    for key, rec in records.items():
        if rec["status"] == "judged" and rec["grade"] not in prompt.scale:
            raise InputError(f"row {key[:16]}... has grade {rec['grade']}, off the scale {min(prompt.scale)}-"
                             f"{max(prompt.scale)}; the store was altered: delete that row (it is judged again) "
                             "or pass another --store", path=where)
        problem = reparse_problem(rec, prompt.scale, prompt.grade_key)
        if problem is not None:
            raise InputError(f"row {key[:16]}... has {problem}; the store was altered: delete that row (it is judged "
                             "again) or pass another --store", path=where)


def is_done(record: dict[str, Any] | None, config: JudgeConfig) -> bool:
    if record is None:
        return False
    if record["status"] == "judged":
        return True
    return record["status"] == "unjudged" and not config.retry_unjudged


def load_records(units: list[Unit], store: JudgmentStore, prompt: Prompt) -> None:
    """Attach to each unit what the store holds for its keys (one read, grades validated against the prompt)."""
    stored = store.get_many([k for u in units for k in u.keys])
    check_grades(stored, prompt, str(store.path))
    for unit in units:
        unit.records = {i: stored[k] for i, k in enumerate(unit.keys) if k in stored}


def unit_done(unit: Unit, config: JudgeConfig) -> bool:
    """Every sample of the unit is answered (see :func:`is_done`)."""
    return all(is_done(unit.records.get(i), config) for i in range(config.samples))


class Engine:
    def __init__(self, model: str, prompt: Prompt, store: JudgmentStore, config: JudgeConfig, caller: Caller,
                 budget: Budget, on_progress: Callable[[dict[str, Any]], None] | None, *, owner: str,
                 started: float):
        self.model, self.prompt, self.store, self.config = model, prompt, store, config
        self.owner, self.started = owner, started
        self.caller, self.budget, self.on_progress = caller, budget, on_progress
        self.stopped: str | None = None
        self.fatal: str | None = None
        self.stats = Counter()
        self._pool = None  # the store thread of a network store (see _io)

    def _progress(self, unit: Unit) -> None:
        self.stats["done"] += len(unit.pairs)
        if unit.failed is not None:
            self.stats["failed"] += len(unit.pairs)
        else:
            statuses = [unit.records[i]["status"] for i in sorted(unit.records)]
            if "judged" not in statuses:
                self.stats["unjudged"] += len(unit.pairs)
        if unit.failed is None:  # paid nothing this run: from the store, or a duplicate of a pair judged once
            self.stats["cached"] += len(unit.pairs) - (1 if unit.paid_now else 0)
            self.stats["stored"] += 0 if unit.paid_now else 1
            self.stats["duplicates"] += len(unit.pairs) - 1
        if self.on_progress is not None:
            self.on_progress({**self.stats, "cost_usd": self.budget.spent})

    async def _call(self, messages, sample: int, est_tokens: int) -> Answer:
        reserved = self.budget.reserve(est_tokens, self.config.max_tokens)
        answer = None
        try:
            answer = await self.caller.complete(messages, sample=sample, est_tokens=est_tokens)
        finally:
            self.budget.settle(reserved, answer)
        content = no_surrogates(answer.content)  # half an emoji from the provider: stored and written as U+FFFD
        return answer if content is answer.content else replace(answer, content=content)

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

    async def _io(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a store call: on the loop for SQLite (microseconds), on one worker thread for a store over the
        network (``store.blocking``: PostgreSQL), so that a server round trip does not stall the calls in flight."""
        if not self.store.blocking:
            return fn(*args)
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="relgrade-store")
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        """Stop the store thread (if one was started)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    async def aacquire(self, unit: Unit) -> bool:
        """:meth:`acquire` without blocking the event loop on a network store."""
        return await self._io(self.acquire, unit)

    async def _aput(self, key: str, rec: dict[str, Any]) -> dict[str, Any]:
        return await self._io(self._put, key, rec)

    def acquire(self, unit: Unit) -> bool:
        """Claim the unit's unanswered keys (all or none) and reload what other processes answered;
        False when another process holds one of them (poll again later). Keys held by an open provider batch are
        not claimed (``unit.batched``): the batch answers them (:mod:`relgrade.judge.store._claims`)."""
        todo = [k for i, k in enumerate(unit.keys) if not is_done(unit.records.get(i), self.config)]
        if not todo:
            return True
        claimed, busy = self.store.claim(todo, self.owner,
                                         retry_before=self.started if self.config.retry_unjudged else None)
        if busy:
            return False
        fresh = self.store.get_many(unit.keys)
        check_grades(fresh, self.prompt, str(self.store.path))
        for i, k in enumerate(unit.keys):
            if k in fresh and (k not in claimed or fresh[k]["status"] == "pending_repair"):
                unit.records[i] = fresh[k]
        unit.claimed = claimed
        left = [k for i, k in enumerate(unit.keys) if k not in claimed and not is_done(unit.records.get(i), self.config)]
        unit.batched = self.store.in_open_batches(left) if left else set()
        return True

    def _put(self, key: str, rec: dict[str, Any]) -> dict[str, Any]:
        """Store ``rec``; when a ``judged`` row is already there (a lease taken over), that row wins."""
        wrote = self.store.put(key, model=self.model, prompt_hash=self.prompt.hash, status=rec["status"],
                               grade=rec["grade"], owner=self.owner,
                               record={k: v for k, v in rec.items() if k not in {"status", "grade"}})
        if wrote:
            return rec
        stored = self.store.get(key)
        if stored is not None:
            check_grades({key: stored}, self.prompt, str(self.store.path))
        return stored or rec

    async def _sample(self, unit: Unit, i: int) -> None:
        key = unit.keys[i]
        stored = unit.records.get(i)
        if is_done(stored, self.config) or key not in unit.claimed:
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
                unit.records[i] = await self._aput(key, rec)
                return
            rec["status"] = "pending_repair"
            unit.records[i] = first = await self._aput(key, rec)
            if first["status"] != "pending_repair":
                return
        repair = [*messages, {"role": "assistant", "content": first.get("raw_answer") or ""},
                  {"role": "user", "content": _REPAIR.format(error=first.get("error"), lo=lo, hi=hi,
                                                                  key=self.prompt.grade_key)}]
        answer = await self._call(repair, i, est + 200)
        unit.paid_now = True
        parsed = parse_answer(answer.content, self.prompt.scale, self.prompt.grade_key)
        rec = self._record(answer, parsed, previous=first)
        unit.records[i] = await self._aput(key, rec)

    async def judge_unit(self, unit: Unit) -> None:
        for i in range(self.config.samples):
            try:
                await self._sample(unit, i)
            except PairCallError as exc:
                unit.failed = str(exc)
                return


def aggregate(unit: Unit, model: str, prompt: Prompt, samples: int, cached: bool) -> Judgment:
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


def _ids(unit: Unit) -> dict[str, str]:
    p = unit.pairs[0]
    return {"query_id": p.query_id, "doc_id": p.doc_id, "query": p.query, "text": p.text, "runs": p.runs}


def fan_out(unit: Unit, judgment: Judgment) -> list[Judgment]:
    out = [judgment]
    for p in unit.pairs[1:]:
        out.append(replace(judgment, query_id=p.query_id, doc_id=p.doc_id, runs=p.runs,
                           cached=judgment.status != "failed"))
    return out
