"""The one id rule, for every reader and constructor of relgrade.

It applies to query and document ids in labels (TREC qrels, CSV, JSONL, judge details, hybrid sets), runs (TREC
and JSONL), golden sets, corpora, queries files, the label page's items, and to ``Qrels`` / ``Run`` built from
dicts or DataFrames:

* an id is a string; the whitespace around it (what ``str.strip()`` removes: spaces, tabs, line breaks, no-break
  spaces, ...) is dropped, so ``" q1"`` in a CSV and ``q1`` in a TREC run are one query; whitespace inside an id
  is kept (such an id cannot be written to a TREC file, whose writers refuse it);
* an integer (not a boolean) is its decimal string: ``7`` is ``"7"``; any other non-string (a float, a
  boolean, null, a JSON object or list) is refused with one line naming the file and line, never guessed
  (``1.0`` could stand for ``"1"`` or for ``"1.0"``);
* an id that is empty after stripping, or holds a lone surrogate (no UTF-8 file can hold it), is refused;
* ``NA``, ``NULL``, ``nan``, ``None`` are ids like any other, never missing values.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

from relgrade._errors import InputError

WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
              "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""Every character ``str.isspace()`` accepts (``str.strip()`` and ``str.split()`` use the same set)."""

_RE2_WHITESPACE = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in WHITESPACE) + "]"
EDGE_WHITESPACE_RE2 = f"^{_RE2_WHITESPACE}|{_RE2_WHITESPACE}$"
"""RE2 pattern (pyarrow) matching an id with whitespace at either end."""

ID_RULE = "ids are strings (an integer is read as its decimal string) with the whitespace around them dropped"


def as_id(value: Any, what: str = "id", *, path: str | Path | None = None, line: int | None = None) -> str:
    """``value`` as an id by the module's rule, or an :class:`InputError` naming ``what``, the file and the line."""
    if type(value) is str:
        out = value.strip()
        if out:
            if out.isprintable() or _encodable(out):
                return out
            raise InputError(f"{what} {value!r} is not valid Unicode (a lone surrogate); fix the id", path=path, line=line)
    elif isinstance(value, str):  # a str subclass (numpy.str_)
        return as_id(str(value), what, path=path, line=line)
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if value is None or isinstance(value, str):
        raise InputError(f"missing {what}; {ID_RULE}", path=path, line=line)
    raise InputError(f"{what} {_show(value)} is not an id: {ID_RULE}; write it as a string", path=path, line=line)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
