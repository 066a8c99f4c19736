"""Every store row is sealed; an altered row is an error, never a grade.

**The seal.** A row written by this relgrade ends its JSON record with ``"seal": "<32 hex>"``: the first 32 hex digits
of SHA-256 over the row's key, model, prompt hash, status, grade and the exact text of the rest of its record (every
field: raw answer, reason, distribution, expected grade, tokens, cost, latency, and any field added later). Reading a
row recomputes it (:func:`unseal`): a grade flipped, a status changed (judged to unjudged or back), an edited answer,
reason, distribution or cost, a row copied under another key all break it. Sealing costs one SHA-256 of the record
text and no second JSON encoding (``python benchmarks/store_protocol.py`` measures it).

**A sealed store.** A store this relgrade opened for writing holds the marker ``seal = 2`` in its table
``relgrade_meta``; in a sealed store a row without a seal (its seal deleted, or a row added by hand or by an older
relgrade) is altered. A store is also taken as sealed when any row carries a seal, so deleting the marker does not
make unsealed rows believed.

**Stores written before the seal** are sealed once, by the first writer of this version (:func:`seal_store`, in one
transaction): a row with the older check (``check``: key, status, grade and raw answer) is verified against it and
sealed as found, with ``sealed_from: "v1"``; a row with neither is sealed with ``sealed_from: "unchecked"`` and stays
verified by re-parsing its stored answer on every read (:func:`reparse_problem`); a row whose check is wrong is left
unsealed, so it is refused when read. Read-only opens (a dry run) of a store not sealed yet verify rows the old way.

**What the seal protects against:** accidents and casual edits (an ``UPDATE`` in a SQL console, a script that rewrites
rows, a bug in another tool, a row copied or restored from elsewhere). It is an unkeyed hash: someone who reads this
code can recompute it, and someone who strips every row's seal and the marker together turns the store back into an
unsealed one (whose grades must still agree with their stored answers). It is not a defence against a deliberate
forger with write access to the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

CHECK = "check"
SEAL = "seal"
SEALED_FROM = "sealed_from"
META_TABLE = "CREATE TABLE IF NOT EXISTS relgrade_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
SEAL_VERSION = "2"
_TAIL_HEAD = '"seal": "'
_TAIL = len(_TAIL_HEAD) + 32 + 2  # '"seal": "' + 32 hex + '"}': a fixed-length end, read without a regex
_ROWS_PER_PASS = 2000

Execute = Callable[[str, list[Any]], Iterable[tuple]]


def _digest(key: str, model: str, prompt_hash: str, status: str, grade: int | None, body: str) -> str:
    head = f"relgrade-seal-{SEAL_VERSION}|{key}|{model}|{prompt_hash}|{status}|{grade}|"
    return hashlib.sha256((head + body).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def seal_text(key: str, model: str, prompt_hash: str, status: str, grade: int | None,
              record: Mapping[str, Any]) -> str:
    """The record text a store writes: ``record`` as JSON with its seal as the last member."""
    body = json.dumps({k: v for k, v in record.items() if k not in {CHECK, SEAL, "status", "grade"}},
                      ensure_ascii=False)
    digest = _digest(key, model, prompt_hash, status, grade, body)
    return f'{body[:-1]}{", " if len(body) > 2 else ""}"seal": "{digest}"}}'


def unseal(key: str, model: str, prompt_hash: str, status: str, grade: int | None, text: str) -> bool | None:
    """True when the record text's seal matches the row, False when it does not, None when it has no seal."""
    if not isinstance(text, str) or not text.endswith('"}') or text[-_TAIL:-_TAIL + len(_TAIL_HEAD)] != _TAIL_HEAD:
        return None
    body = text[:-_TAIL]
    body = (body[:-2] if body.endswith(", ") else body) + "}"
    return text[-34:-2] == _digest(key, model, prompt_hash, status, grade, body)


def row_check(key: str, status: str, grade: int | None, record: Mapping[str, Any]) -> str:
    """The older check (rows written before the seal): SHA-256 of ``key|status|grade|len|raw answer``."""
    raw = record.get("raw_answer")
    raw = raw if isinstance(raw, str) else repr(raw)
    blob = f"{key}|{status}|{grade}|{len(raw)}|{raw}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:32]


def verify_legacy(key: str, status: str, grade: int | None, record: Mapping[str, Any]) -> bool:
    """An unsealed row of a store not sealed yet: its older check matches, or it has none (then
    :func:`reparse_problem` verifies it)."""
    check = record.get(CHECK)
    return check is None or check == row_check(key, status, grade, record)


def reparse_problem(record: Mapping[str, Any], scale, grade_key: str) -> str | None:
    """Why a row with no check of its grade is not what its raw answer says (None when it is, or when the row is
    sealed or checked): rows written before any check, sealed as found (``sealed_from: "unchecked"``) or not."""
    if CHECK in record or (SEAL in record and record.get(SEALED_FROM) != "unchecked"):
        return None
    status, grade = record.get("status"), record.get("grade")
    if status != "judged":
        return None if grade is None else f"status {status} with grade {grade}"
    answer = record.get("raw_answer")
    if not isinstance(answer, str):
        return "a judged row without its raw answer"
    from relgrade.judge._parse import parse_answer

    read = parse_answer(answer, scale, grade_key).grade
    return None if read == grade else f"grade {grade} but its stored answer reads {read}"


def is_sealed(execute: Execute, *, has_meta: bool = True) -> bool:
    """Whether the store is sealed: its marker, else any sealed row (see the module doc)."""
    if has_meta and any(True for _ in execute("SELECT value FROM relgrade_meta WHERE name = ?", ["seal"])):
        return True
    return any(True for _ in execute("SELECT key FROM judgments WHERE record LIKE ? LIMIT 1", ['%"seal": "%']))


def seal_store(execute: Execute, executemany: Callable[[str, list[tuple]], Any]) -> int:
    """Mark the store sealed, sealing the rows of a store written before the seal (see the module doc); to run inside
    the backend's write transaction, after ``META_TABLE`` exists. Returns the number of rows sealed."""
    if any(True for _ in execute("SELECT value FROM relgrade_meta WHERE name = ?", ["seal"])):
        return 0
    done = 0
    if not is_sealed(execute, has_meta=False):  # a store written before the seal (not one whose marker was deleted)
        last = ""
        while True:
            rows = list(execute("SELECT key, model, prompt_hash, status, grade, record FROM judgments WHERE key > ? "
                                f"ORDER BY key LIMIT {_ROWS_PER_PASS}", [last]))
            if not rows:
                break
            last = rows[-1][0]
            updates = [u for u in (_legacy_update(*row) for row in rows) if u is not None]
            if updates:
                executemany("UPDATE judgments SET record = ? WHERE key = ?", updates)
            done += len(updates)
    execute("INSERT INTO relgrade_meta (name, value) VALUES (?, ?)", ["seal", SEAL_VERSION])
    return done


def _legacy_update(key, model, prompt_hash, status, grade, record) -> tuple[str, str] | None:
    try:
        rec = json.loads(record)
    except (TypeError, ValueError):
        return None
    if not isinstance(rec, dict) or not verify_legacy(key, status, grade, rec):
        return None  # left unsealed: refused when read
    rec[SEALED_FROM] = "v1" if CHECK in rec else "unchecked"
    return seal_text(key, model, prompt_hash, status, grade, rec), key


__all__ = ["CHECK", "META_TABLE", "SEAL", "SEALED_FROM", "is_sealed", "reparse_problem", "row_check", "seal_store",
           "seal_text", "unseal", "verify_legacy"]
