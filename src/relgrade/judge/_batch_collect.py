"""Collecting an ended batch: its result lines into the store rows, with provider data taken on trust nowhere.

- Lines are read and checked by the adapter (:mod:`relgrade.judge._batch_checks`); a line that cannot be read as an
  answer (malformed, or a per-line error) is a line error: asked again, never a grade.
- **Duplicate ``custom_id`` lines** (one request answered more than once): copies of the same answer count once;
  answers that differ are never chosen between: the pair is stored *unjudged* with every answer kept and the
  error ``the provider returned N different answers ...`` (``--retry-unjudged`` asks again). An error line beside an
  answer does not make a conflict (an error has no grade).
- **Token counts** that are missing, negative or absurd (over :data:`~relgrade.judge._prices.MAX_TOKENS`) make
  the line's cost *unknown* (counted in ``cost_unknown``): no negative or absurd dollars in details or totals.
- **Unreadable results** (a result line that is not UTF-8, not JSON, unterminated, not an object, or without a
  ``custom_id``; a results file the provider no longer has, e.g. HTTP 404): the readable answers are stored, the
  batch is closed in the ledger as ``unreadable`` (it does not block later runs) and the run stops with one line
  saying how many requests the next run asks again (:class:`UnreadableBatch`).
"""

from __future__ import annotations

import time
from typing import Any

from relgrade.judge._batch_api import BatchAPIError, BatchLine, BatchState
from relgrade.judge._batch_checks import BatchAnswerError, Results
from relgrade.judge._call import Answer
from relgrade.io._text import no_surrogates
from relgrade.judge._parse import parse_answer


class UnreadableBatch(Exception):
    """A batch whose results cannot be (fully) read; the message is one masked line for the user."""


def dedupe(lines: list[BatchLine]) -> tuple[dict[str, BatchLine], dict[str, list[BatchLine]]]:
    """``({custom_id: line}, {custom_id: [conflicting answers]})`` by the rule of the module doc."""
    by_id: dict[str, list[BatchLine]] = {}
    for line in lines:
        by_id.setdefault(line.custom_id, []).append(line)
    one, conflicts = {}, {}
    for cid, group in by_id.items():
        answers = [ln for ln in group if ln.content is not None]
        distinct = {ln.content for ln in answers}
        if len(distinct) > 1:
            conflicts[cid] = answers
        else:
            one[cid] = answers[0] if answers else group[0]
    return one, conflicts


async def collect(run, row, state: BatchState) -> None:
    """Store an ended batch's answers (see the module doc); ``run`` is the batch run (``_batch._BatchRun``)."""
    items = run.ledger.items(row.local_id)
    results = Results()
    if state.state != "failed":
        try:
            results = await run.api.results(state)
        except BatchAnswerError as exc:
            results.problems.append(str(exc))
        except BatchAPIError as exc:
            if not exc.fatal:
                raise  # transient (retries exhausted): the batch stays open, read again at the next poll
            results.problems.append(str(exc))
    turnaround = (state.ended_at - state.created_at) if state.ended_at and state.created_at else \
        time.time() - row.created
    lines, conflicts = dedupe(results.lines)
    seen = set()
    for cid, (key, kind) in items.items():
        if cid in conflicts:
            seen.add(cid)
            store_conflict(run, row.local_id, key, kind, conflicts[cid], turnaround)
        elif cid in lines:
            seen.add(cid)
            line = lines[cid]
            if line.content is None:
                run.line_failed(key, line.error or "error")
            else:
                run._answer(row.local_id, key, kind, line, turnaround)  # store_answer (a seam for crash tests)
    detail = {**(row.detail or {}), "counts": state.counts, "batch_detail": state.detail}
    if results.problems:
        missing = len(items) - len(seen)
        detail["error"] = "; ".join(results.problems[:3])[:500]
        run.ledger.close(row.local_id, "unreadable", detail)
        more = f" and {len(results.problems) - 1} more" if len(results.problems) > 1 else ""
        raise UnreadableBatch(f"--batch: the results of batch {state.batch_id} at {run.api.provider} cannot be read "
                              f"({results.problems[0][:300]}{more}): {len(seen)} answers are stored; the batch is "
                              f"closed and its {missing} requests without a readable answer are asked again by the "
                              "next run")
    why = f"batch {state.state}" + (f": {state.detail}" if state.detail else "")
    for cid, (key, _kind) in items.items():
        if cid not in seen:
            run.line_failed(key, why)
            if run.fallback == "direct" and state.state in {"failed", "expired", "cancelled"}:
                run.direct.add(key)
    run.ledger.close(row.local_id, state.state, detail)


def _fresh(run, local_id: str, key: str, kind: str) -> tuple[bool, dict[str, Any] | None]:
    """``(take, stored row)``: False when this batch's answer is already in (a crash mid-collection) or another
    process answered meanwhile (the stored row stands)."""
    now = run.db.get(key)
    if now is not None and now.get("batch") == local_id:
        return False, now
    if now is not None and (now["status"] == "judged" or (kind == "repair") != (now["status"] == "pending_repair")):
        return False, now
    return True, now


def _cost(run, line: BatchLine) -> float | None:
    if run.prices is None or line.prompt_tokens is None or line.completion_tokens is None:
        return None
    return line.prompt_tokens * run.prices[0] + line.completion_tokens * run.prices[1]


def _count(run, cost: float | None) -> None:
    run.calls += 1
    if cost is None:
        run.unknown += 1
    else:
        run.spent += cost


def _keep(run, key: str, rec: dict[str, Any], local_id: str) -> None:
    rec["batch"] = local_id
    rec = run.engine._put(key, rec)  # a judged row already there (another process) wins
    slot = run.where.get(key)
    if slot is not None:
        slot[0].records[slot[1]] = rec
        slot[0].paid_now = True


def _answer_of(line: BatchLine, cost: float | None, turnaround: float) -> Answer:
    return Answer(no_surrogates(line.content or ""), line.logprobs, line.prompt_tokens or 0, line.completion_tokens or 0, cost,
                  max(0.0, float(turnaround)), 1)


def store_answer(run, local_id: str, key: str, kind: str, line: BatchLine, turnaround: float) -> None:
    """One answer into its store row, parsed exactly as the online judge parses (a repair carries the first answer)."""
    take, now = _fresh(run, local_id, key, kind)
    if not take:
        return
    cost = _cost(run, line)
    _count(run, cost)
    answer = _answer_of(line, cost, turnaround)
    parsed = parse_answer(answer.content, run.prompt.scale, run.prompt.grade_key)
    rec = run.engine._record(answer, parsed, previous=now if kind == "repair" else None)
    if kind == "first" and parsed.grade is None:
        rec["status"] = "pending_repair"
    _keep(run, key, rec, local_id)


def store_conflict(run, local_id: str, key: str, kind: str, answers: list[BatchLine], turnaround: float) -> None:
    """Several different answers to one request: stored *unjudged* with all of them, none chosen."""
    take, now = _fresh(run, local_id, key, kind)
    if not take:
        return
    costs = [_cost(run, ln) for ln in answers]
    for cost in costs:
        _count(run, cost)
    scale, grade_key = run.prompt.scale, run.prompt.grade_key
    grades = [parse_answer(ln.content or "", scale, grade_key).grade for ln in answers]
    first = _answer_of(answers[0], None if None in costs else sum(costs), turnaround)
    rec = run.engine._record(first, parse_answer("", scale, grade_key), previous=now if kind == "repair" else None)
    shown = ", ".join("unreadable" if g is None else str(g) for g in grades)
    others = answers[1:]
    rec.update(status="unjudged", grade=None, distribution=None, expected_grade=None,
               calls=rec.get("calls", 1) + len(others),
               error=f"the provider returned {len(answers)} different answers to this request (grades {shown}); "
                     "none is taken (relgrade judge --retry-unjudged asks again)",
               raw_answer=no_surrogates("\n---- another answer to the same request ----\n".join(ln.content or ""
                                                                                                 for ln in answers)),
               prompt_tokens=rec.get("prompt_tokens", 0) + sum(ln.prompt_tokens or 0 for ln in others),
               completion_tokens=rec.get("completion_tokens", 0) + sum(ln.completion_tokens or 0 for ln in others))
    _keep(run, key, rec, local_id)


__all__ = ["UnreadableBatch", "collect", "dedupe", "store_answer", "store_conflict"]
