"""What a judge run leaves behind: the judged qrels, the details JSONL beside them, and the one line that says what
happened to the pairs (one wording for ``relgrade judge`` and the demo).

``OUT`` gets the judged labels as TREC qrels (``qid 0 docid grade``; CSV or JSONL by extension), unjudged and failed
pairs left out; ``OUT.details.jsonl`` beside it gets one object per pooled pair (grade, status, distribution, expected
grade, reason, model, prompt hash, tokens, cost, latency, cached, and the raw answer when unjudged).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from relgrade._errors import InputError
from relgrade._words import plural

__all__ = ["check_writable", "details_path", "judged_line", "write_outputs"]


def judged_line(result) -> str:
    """What happened to the pairs and where their answers came from, one wording for ``judge`` and ``demo``:
    ``329 judged, 0 unjudged, 0 failed: 322 paid for now, 7 duplicates (...)``; a duplicate (the same query and
    chunk text as another doc id, judged once) is explained where it is counted."""
    c = result.counts()
    line = f"{c['judged']} judged, {c['unjudged']} unjudged, {c['failed']} failed"
    if c["remaining"]:
        line += f", {c['remaining']} not done"
    sources = [f"{c['paid']} paid for now" if c["paid"] else "", f"{c['stored']} from the store" if c["stored"] else "",
               f"{plural(c['duplicates'], 'duplicate')} (the same query and chunk text as another doc id: judged "
               "once, the grade shared)" if c["duplicates"] else ""]
    sources = [x for x in sources if x]
    return line + (f": {', '.join(sources)}" if sources else "")


def details_path(out: str | Path) -> Path:
    """Where the details JSONL goes: ``OUT.details.jsonl`` beside ``--out`` (:data:`relgrade.io._outputs.SIDE_FILES`)."""
    from relgrade.io._outputs import side_path

    return side_path(out, "judge", "its details file")


def check_writable(path: Path, option: str) -> None:
    """Raise :class:`InputError` unless ``path`` can be written (atomically, beside itself): checked
    before the first paid call so that no answer is paid for and then lost."""
    if path.is_dir():
        raise InputError(f"{option} {path}: is a folder; give a file name such as {path / 'judged.qrels'}")
    folder = path.parent
    if not folder.exists():
        raise InputError(f"{option} {path}: the folder {folder} does not exist; create it or write elsewhere")
    if not folder.is_dir():
        raise InputError(f"{option} {path}: {folder} is not a folder; write elsewhere")
    probe = folder / f".{path.name}.{os.getpid()}.probe"
    try:
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in {folder} ({exc.strerror}); make it writable or "
                         "write elsewhere") from None


def _write_atomic(path: Path, lines) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
    os.replace(tmp, path)


def write_outputs(result, out: "str | Path") -> None:
    """Write a :class:`~relgrade.judge.JudgeResult`'s judged labels to ``out`` as qrels (unjudged and failed pairs
    left out) and one JSON line per pooled pair to :func:`details_path` (``remaining`` for a pair not done), each
    file atomically."""
    from relgrade.io import text_sha256, write_qrels

    tmp = Path(out).with_name(f".{Path(out).name}.{os.getpid()}.tmp{Path(out).suffix}")
    write_qrels(result.qrels(), tmp)
    os.replace(tmp, out)
    rows = [json.dumps(j.to_dict(), ensure_ascii=False) + "\n" for j in result.judgments]
    for p in result.remaining:
        rows.append(json.dumps({"query_id": p.query_id, "doc_id": p.doc_id, "query": p.query, "text": p.text,
                                "text_sha256": text_sha256(p.text),
                                **({"runs": list(p.runs)} if p.runs else {}),
                                "grade": None, "status": "remaining", "model": result.model,
                                "prompt_hash": result.prompt_hash}, ensure_ascii=False) + "\n")
    _write_atomic(details_path(out), rows)
