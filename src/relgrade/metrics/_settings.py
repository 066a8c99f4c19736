"""What a report was computed from, recorded once so two reports can be checked to be comparable.

Every report (``evaluate``, ``estimate``, ``compare``) writes a ``settings`` object holding:

* ``labels``: the labels the metric values are defined by (``{"sha256", "path", "file_sha256", "n_queries",
  "n_labels"}``). ``sha256`` is over the labels' *content* (sorted ``query, doc, grade`` lines, the
  forbidden documents and the declared queries), so the same labels in another file format hash alike
  and a changed grade does not; ``file_sha256`` is the file's bytes, kept for the record;
* ``queries``: the queries in the means (``{"n", "sha256"}`` of their sorted ids);
* ``rel_threshold``, ``no_answer`` and ``metrics`` (names with their cutoffs).

:func:`differences` says in which of these two settings objects differ; the gate refuses to compare
reports that differ (a drop between two different estimands is not a regression).

One rule for queries without any relevant document, one default (:data:`DEFAULT_NO_ANSWER`), for
every command: ``exclude`` reports them apart and keeps them out of the means (the guide's rule);
``zero`` counts them as 0, as trec_eval does.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from relgrade._defaults import DEFAULT_N_BOOT, MAX_N_BOOT, check_limit  # one definition (light module)
from relgrade._errors import InputError

NO_ANSWER_MODES = ("exclude", "zero")
DEFAULT_NO_ANSWER = "exclude"
NO_ANSWER_HELP = ("Queries with no relevant doc: 'exclude' keeps them out of the means (reported apart), "
                  "'zero' counts them as 0 like trec_eval.")

# settings that define the estimand: reports differing in one of them are not comparable
_COMPARED = (
    ("labels", "labels", "score both against the same labels file"),
    ("queries", "query set", "score both on the same queries (same labels, same --no-answer)"),
    ("rel_threshold", "rel_threshold", "re-run both with the same --rel-threshold"),
    ("no_answer", "no_answer", "re-run both with the same --no-answer"),
)


def check_no_answer(no_answer: str) -> str:
    if no_answer not in NO_ANSWER_MODES:
        raise InputError(f"--no-answer must be one of {', '.join(NO_ANSWER_MODES)}, got {no_answer!r}")
    return no_answer


def check_n_boot(n_boot: int, option: str = "--n-boot") -> int:
    """Bootstrap resamples: a whole number >= 1 everywhere (turn intervals off with ``ci=False`` instead)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise InputError(f"{option} must be a whole number >= 1 (e.g. {DEFAULT_N_BOOT}), got {n_boot!r}")
    return check_limit(option, n_boot, MAX_N_BOOT, "resamples")


def check_rel_threshold(rel_threshold: int) -> int:
    if isinstance(rel_threshold, bool) or not isinstance(rel_threshold, numbers.Integral):
        raise InputError(f"--rel-threshold must be an integer grade, got {rel_threshold!r}")
    return int(rel_threshold)


def _sha(lines: Iterable[str]) -> str:
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode("utf-8")).hexdigest()


def labels_fingerprint(qrels: Any) -> dict[str, Any]:
    """``{"sha256", "path", "n_queries", "n_labels"}`` of a :class:`~relgrade.io.Qrels` (content hash, see module)."""
    from relgrade.metrics._fingerprint import content_sha256  # the lines below, hashed on columns

    labels: Any = getattr(qrels, "columns", None) or qrels.labels
    forbidden: Mapping[str, Iterable[str]] = getattr(qrels, "forbidden", {}) or {}
    topics = tuple(getattr(qrels, "topics", ()) or qrels.labels)
    # sha256 of the sorted lines L<TAB>q<TAB>d<TAB>grade, F<TAB>q<TAB>d (forbidden), T<TAB>q (declared queries)
    source = getattr(qrels, "source", None)
    return {"sha256": content_sha256(labels, forbidden, topics), "path": source, "file_sha256": _file_sha(source),
            "n_queries": len(topics), "n_labels": len(labels.grade) if hasattr(labels, "grade") else
            sum(len(d) for d in labels.values())}


def _file_sha(path: Any) -> str | None:
    """SHA-256 of the labels file's bytes (recorded for the record; the content hash decides)."""
    if not isinstance(path, (str, Path)):
        return None
    try:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except (OSError, ValueError):
        return None


def queries_fingerprint(query_ids: Iterable[str]) -> dict[str, Any]:
    """``{"n", "sha256"}`` of a set of query ids (sorted, one per line)."""
    ids = sorted(set(map(str, query_ids)))
    return {"n": len(ids), "sha256": _sha(ids)}


def _key(settings: Mapping[str, Any], name: str) -> Any:
    value = settings.get(name)
    if isinstance(value, Mapping):  # labels / queries: the hash decides, the path is only shown
        return value.get("sha256")
    return value


def _show(settings: Mapping[str, Any], name: str) -> str:
    value = settings.get(name)
    if isinstance(value, Mapping):
        sha = str(value.get("sha256"))[:12]
        extra = value.get("path") or (f"{value['n']} queries" if "n" in value else None)
        return f"{sha} ({extra})" if extra else sha
    return repr(value)


def missing_settings(settings: Any) -> list[str]:
    """The compared settings a report lacks (a report of an older relgrade, or hand-written)."""
    if not isinstance(settings, Mapping):
        return [name for name, _, _ in _COMPARED]
    return [name for name, _, _ in _COMPARED if _key(settings, name) is None]


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``[(what differs, how to fix)]`` between two reports' settings; empty when comparable."""
    out = []
    for name, label, fix in _COMPARED:
        if _key(a, name) != _key(b, name):
            out.append((f"{label} {_show(a, name)} vs {_show(b, name)}", fix))
    return out
