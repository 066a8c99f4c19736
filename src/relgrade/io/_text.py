"""Reading user files safely: every problem becomes a one-line :class:`InputError`."""

from __future__ import annotations

import codecs
import csv
import io
import json
import mmap
import re
from pathlib import Path
from typing import Any, Iterator

from relgrade._errors import InputError


def read_bytes(path: str | Path, *, what: str = "file") -> bytes | mmap.mmap:
    """The bytes of ``path``, refusing missing, empty and binary files (UTF-8 is checked by :func:`read_text`). A file
    over 16 MB is memory-mapped (read-only) rather than copied: a 10M-line run is 300 MB."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such {what}; check the path", path=p)
    if p.is_dir():
        raise InputError(f"is a directory, expected a {what}", path=p)
    try:
        if p.stat().st_size > 1 << 24:
            with open(p, "rb") as fh:
                data: bytes | mmap.mmap = _map(fh.fileno())
        else:
            data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror}); check its permissions", path=p) from None
    if not data[:65536].strip() and not bytes(data).strip():
        raise InputError(f"empty {what}; it needs at least one record", path=p)
    if b"\x00" in data[:65536]:
        raise InputError(f"binary data (NUL bytes), expected a UTF-8 text {what}", path=p)
    return data


def _map(fileno: int) -> mmap.mmap:
    """A read-only map of the whole file, its pages mapped at once where the system can (Linux's MAP_POPULATE: one
    call instead of a page fault per 4 KB)."""
    if hasattr(mmap, "MAP_POPULATE"):
        return mmap.mmap(fileno, 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ)
    return mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)


def read_text(path: str | Path, *, what: str = "file", data: bytes | mmap.mmap | None = None) -> str:
    """Return the text of ``path``, refusing missing, empty, binary and non-UTF-8 files (``data``: its bytes, read
    already by :func:`read_bytes`)."""
    p = Path(path)
    if data is None:
        data = read_bytes(p, what=what)
    try:
        text = codecs.utf_8_decode(data, "strict", True)[0]
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not valid UTF-8 (byte {exc.start}); re-save the {what} as UTF-8", path=p, line=line
        ) from None
    return text.lstrip("\ufeff")


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` for the non-blank, non-comment lines of ``text``."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def iter_jsonl(path: str | Path, text: str, *, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON object line; bad lines raise InputError."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        truncated = number == len(lines) and not text.endswith(("\n", "\r"))
        obj = loads_json(line, path=path, line=number, truncated=truncated)
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object per line in a {what}", path=path, line=number)
        yield number, obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def no_surrogates(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (a string that is not text: half an emoji from a provider or a
    writer that split one) replaced by U+FFFD, so that it can be hashed, stored and written as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def has_lone_surrogate(value: Any) -> bool:
    """True when a string anywhere in a decoded JSON value (keys included) holds a lone UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if no_surrogates(item) is not item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _refuse_lone_surrogates(value: Any, path: str | Path, line: int | None) -> None:
    if has_lone_surrogate(value):
        raise InputError("a string holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair), "
                         "which is not text (half of an emoji?); re-export the file as valid UTF-8", path=path, line=line)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; write a finite number or null")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def loads_json(text: str, *, path: str | Path, line: int | None = None, truncated: bool = False) -> Any:
    """``json.loads`` with every failure an :class:`InputError`: bad syntax, NaN/Infinity, nesting too deep, a lone
    UTF-16 surrogate escape (``"\\ud800"``: not text, it could not be hashed or written as UTF-8)."""

    try:
        if not isinstance(text, str):
            value = json.loads(text, parse_constant=_no_constant)
        elif text.startswith("\ufeff"):  # as json.loads (one decoder for every line: json.loads builds one a call)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        else:
            value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        hint = "the file looks truncated; re-export it" if truncated else "fix or remove the line"
        where = line if line is not None else exc.lineno
        raise InputError(f"invalid JSON ({exc.msg}); {hint}", path=path, line=where) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path, line=line) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read; flatten the structure", path=path, line=line) from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(value, path, line)
    return value


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is a formula to a spreadsheet (OWASP "CSV injection")."""


def csv_cell(value: Any) -> Any:
    """A text cell as written to CSV: prefixed with ``'`` when a spreadsheet would run it as a formula (or when it
    starts with ``'``, so that :func:`csv_value` reads back exactly the value written). Numbers pass unchanged."""
    if isinstance(value, str) and value.startswith((*FORMULA_START, "'")):
        return "'" + value
    return value


def csv_value(cell: str) -> str:
    """Inverse of :func:`csv_cell`: drop the ``'`` written before a formula-like or quote-led cell."""
    if cell.startswith("'") and cell[1:2] and cell[1:].startswith((*FORMULA_START, "'")):
        return cell[1:]
    return cell


def iter_csv(path: str | Path, text: str, *, what: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, {lowercase header: cell})`` for each non-blank CSV row (line = where the row starts).

    Strict: a quote that is never closed, a row with more or fewer cells than the header, or a malformed quote
    is an :class:`InputError` naming the line the row starts on (a lenient reader would silently swallow the rest
    of the file into one cell). CR-only line endings are read; cells of any size are read. Cells are unescaped with
    :func:`csv_value`.
    """
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        header = next(reader, None)
        while header is not None and not any(h.strip() for h in header):
            start = reader.line_num + 1
            header = next(reader, None)
        if header is None:
            raise InputError(f"CSV has no header; the first line must name the columns of the {what}", path=path, line=1)
        names = [h.strip().lower() for h in header]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise InputError(f"CSV header names the column {dup!r} twice; name each column once", path=path, line=start)
        start = reader.line_num + 1
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                if len(cells) != len(names):
                    raise InputError(
                        f"row has {len(cells)} cells but the header names {len(names)} columns; quote cells that "
                        "contain commas (\"a, b\")", path=path, line=start)
                yield start, {n: csv_value(c) for n, c in zip(names, cells)}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc}) in the row starting here: a quote opened and never closed? "
                         "close the quote or double it (\"\")", path=path, line=start) from None
    finally:
        csv.field_size_limit(limit)


def pick(obj: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The first of ``names`` present in ``obj`` (field aliases), or None."""
    for name in names:
        if name in obj:
            return obj[name]
    return None


def sniff_bytes(path: str | Path, data: bytes | mmap.mmap) -> str:
    """:func:`sniff_kind` from the first 64 KiB of ``data`` (the whole text only when they hold no record)."""
    head = data[:65536].decode("utf-8", errors="replace").lstrip("\ufeff")
    if len(data) > 65536 and next(iter_lines(head), None) is None:
        head = read_text(path, data=data)
    return sniff_kind(path, head)


def sniff_kind(path: str | Path, text: str) -> str:
    """'jsonl', 'json', 'csv', 'tsv' or 'whitespace' from the extension, then the content."""
    suffix = Path(path).suffix.lower()
    first = next((line for _, line in iter_lines(text)), "").lstrip()
    if suffix in {".jsonl", ".ndjson"}:
        return "jsonl"
    if suffix == ".json":
        return "json" if first.startswith("[") else "jsonl"
    if suffix == ".csv":
        return "csv"
    if first.startswith("{"):
        return "jsonl"
    if first.startswith("["):
        return "json"
    return "whitespace"
