"""Two checks of :func:`relgrade.gate` that come from the guide's whole loop (issue 27).

* :func:`corpus_change`: two reports that record different corpus fingerprints (``settings.corpus``, written
  when a corpus is given, see :func:`relgrade.corpus_fingerprint`) were computed over different documents: a
  drop between them may be a deleted document, not a regression. Refused (InputError, exit 2) unless
  ``allow_corpus_change``; the gate's JSON records both fingerprints and whether the change was allowed. A
  report without a fingerprint cannot be checked, and the record says so (``"checked": false``).
* :func:`repeat_allowance`: when a report holds repeats of one configuration (``aggregate[m]["repeats"]``, from
  :func:`relgrade.evaluate_repeats`), the drop the gate allows grows by :func:`relgrade.stats.repeat_noise` of the
  two sides' repeat means, so repeat-to-repeat noise alone does not fail a build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from relgrade._errors import InputError


def _corpus(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    corpus = (report.get("settings") or {}).get("corpus")
    return corpus if isinstance(corpus, Mapping) and isinstance(corpus.get("sha256"), str) else None


def _show(corpus: Mapping[str, Any]) -> str:
    where = ", ".join(str(x) for x in (corpus.get("path"), f"{corpus.get('n_docs')} docs") if x)
    return f"{corpus['sha256'][:12]} ({where})"


def corpus_change(base: Mapping[str, Any], cur: Mapping[str, Any], base_name: str, cur_name: str,
                  allow: bool = False) -> dict[str, Any]:
    """The gate's corpus record; InputError when the fingerprints differ and ``allow`` is False (module docstring)."""
    a, b = _corpus(base), _corpus(cur)
    if a is None or b is None:
        return {"checked": False, "baseline": a and a["sha256"], "current": b and b["sha256"], "changed": None,
                "allowed": bool(allow)}
    changed = a["sha256"] != b["sha256"]
    if changed and not allow:
        raise InputError(f"{base_name} and {cur_name} were computed over different corpora (corpus {_show(a)} vs "
                         f"{_show(b)}); re-run the baseline on the current corpus, or pass --allow-corpus-change to "
                         "gate across the corpus change")
    return {"checked": True, "baseline": a["sha256"], "current": b["sha256"], "changed": changed, "allowed": bool(allow)}


def _repeat_values(report: Mapping[str, Any], key: str, name: str) -> list[float] | None:
    entry = report["aggregate"].get(key)
    spread = entry.get("repeats") if isinstance(entry, Mapping) else None
    if spread is None:
        return None
    values = spread.get("values") if isinstance(spread, Mapping) else None
    if not (isinstance(values, list) and values and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in values)):
        raise InputError(f"metric {key!r} 'repeats' must hold 'values', the repeat means in [0, 1]; re-write the "
                         "report with 'relgrade evaluate --run R1 --run R2 ... --json'", path=name)
    return [float(v) for v in values]


def repeat_allowance(base: Mapping[str, Any], cur: Mapping[str, Any], key: str, base_name: str, cur_name: str,
                     base_value: float, cur_value: float) -> float:
    """The repeat noise added to ``--max-drop`` for ``key`` (0 when neither report holds repeats)."""
    from relgrade.stats import repeat_noise

    a = _repeat_values(base, key, base_name)
    b = _repeat_values(cur, key, cur_name)
    if a is None and b is None:
        return 0.0
    return repeat_noise(a or [base_value], b or [cur_value])


__all__ = ["corpus_change", "repeat_allowance"]
