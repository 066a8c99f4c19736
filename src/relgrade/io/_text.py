"""Reading user files safely: every problem becomes a one-line :class:`InputError`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from relgrade._errors import InputError


def read_text(path: str | Path, *, what: str = "file") -> str:
    """Return the text of ``path``, refusing missing, empty, binary and non-UTF-8 files."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such {what}; check the path", path=p)
    if p.is_dir():
        raise InputError(f"is a directory, expected a {what}", path=p)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror}); check its permissions", path=p) from None
    if not data.strip():
        raise InputError(f"empty {what}; it needs at least one record", path=p)
    if b"\x00" in data[:65536]:
        raise InputError(f"binary data (NUL bytes), expected a UTF-8 text {what}", path=p)
    try:
        text = data.decode("utf-8")
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
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            truncated = number == len(lines) and not text.endswith("\n")
            hint = "the file looks truncated; re-export it" if truncated else "fix or remove the line"
            raise InputError(f"invalid JSON ({exc.msg}); {hint}", path=path, line=number) from None
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object per line in a {what}", path=path, line=number)
        yield number, obj


def pick(obj: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The first of ``names`` present in ``obj`` (field aliases), or None."""
    for name in names:
        if name in obj:
            return obj[name]
    return None


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
