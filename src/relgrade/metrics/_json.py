"""A report as JSON, written at the speed of the metrics: one entry of a big table per line.

``json.dumps(indent=2)`` runs Python's pure-Python encoder (CPython's C encoder does no indentation): 100k
queries of per-query values take seconds. :func:`dumps_report` writes the top level indented and each entry of a
top-level object or list on one line, with the C encoder; a table of per-query values (``{query: {metric:
number}}``, the same metrics for every query) is formatted column-wise (``repr`` of each float, as ``json``
writes it), with no Python loop per query. Every value is what ``json.dumps`` writes; ``json.loads`` of the text
equals ``json.loads(json.dumps(data))``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import chain
from typing import Any

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
_ENCODE_FINITE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_KEY = json.encoder.encode_basestring  # the C string encoder json uses with ensure_ascii=False


def dumps_report(data: Mapping[str, Any], *, allow_nan: bool = True) -> str:
    """``data`` as JSON text (module docstring), ending with a newline; ``allow_nan=False``: a NaN or infinity
    anywhere is a ValueError, as with ``json.dumps``."""
    parts = [f"  {_KEY(str(key))}: {_value(value, allow_nan)}" for key, value in data.items()]
    return "{\n" + ",\n".join(parts) + "\n}\n" if parts else "{}\n"


def _value(value: Any, allow_nan: bool = True) -> str:
    encode = _ENCODE if allow_nan else _ENCODE_FINITE
    if isinstance(value, Mapping) and value and all(isinstance(v, Mapping) for v in value.values()):
        table = _float_table(value)
        lines = table if table is not None else [f"{_KEY(str(k))}: {encode(v)}" for k, v in value.items()]
        return "{\n    " + ",\n    ".join(lines) + "\n  }"
    if isinstance(value, list) and value and all(isinstance(v, (Mapping, list)) for v in value):
        return "[\n    " + ",\n    ".join(map(encode, value)) + "\n  ]"
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=allow_nan).replace("\n", "\n  ")


def _float_table(table: Mapping[Any, Mapping[str, Any]]) -> list[str] | None:
    """``"query": {"m1": v1, ...}`` lines of a table of finite floats with the same keys in every row, else None."""
    import numpy as np

    names = list(next(iter(table.values())))
    keys = list(map(list, map(dict.keys, table.values()))) if all(type(v) is dict for v in table.values()) else None
    if not names or keys is None or keys.count(names) != len(keys):
        return None
    rows = list(map(list, map(dict.values, table.values())))
    if set(map(type, chain.from_iterable(rows))) != {float}:
        return None
    matrix = np.array(rows, dtype=np.float64)
    if not np.isfinite(matrix).all():
        return None
    cells = ", ".join(_KEY(n).replace("{", "{{").replace("}", "}}") + ": {}" for n in names)
    template = "{}: {{" + cells + "}}"
    return list(map(template.format, map(_KEY, map(str, table)), *(_reprs(col) for col in matrix.T)))


def _reprs(column: "np.ndarray") -> list[str]:
    """``repr`` of each float, computed once per distinct value (metrics repeat: 0.0, 1.0, 1/2, ...)."""
    import numpy as np

    distinct, index = np.unique(column, return_inverse=True)
    return np.array(list(map(float.__repr__, distinct.tolist())), dtype=object)[index].tolist()
