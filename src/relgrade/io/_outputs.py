"""Outputs never overwrite inputs: the one check every command runs on its output paths before it reads its inputs
or pays for any call.

Two paths name the same file when they resolve to the same real path (symbolic links and ``..`` followed,
relative paths taken from the working directory) or, when both exist, are the same file on disk (a hard link,
a case-insensitive file system). A store is an input with its SQLite companions (``-wal``, ``-shm``,
``-journal``); a database URL is not a file and is never compared. Two outputs of one command that are the same
file are refused too (the second write would replace the first).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from relgrade._errors import InputError

SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def _paths(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (str, Path)):
        text = str(value)
        return [] if "://" in text else [text]
    if isinstance(value, Iterable):
        return [p for v in value for p in _paths(v)]
    return []


def same_file(a: str | Path, b: str | Path) -> bool:
    """True when ``a`` and ``b`` are one file (see the module doc)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outputs: Mapping[str, Any], inputs: Mapping[str, Any] = (),
                  stores: Mapping[str, Any] = ()) -> None:
    """Raise :class:`InputError` when an output path is one of the ``inputs``, a ``stores`` file (or its SQLite
    companions), or another output. Keys are how the user named them (``"--out"``, ``"--run"``); values a path,
    several paths, or None."""
    sources: list[tuple[str, str, str]] = []  # (option, path as given, path compared)
    for option, value in dict(inputs).items():
        sources += [(option, p, p) for p in _paths(value)]
    for option, value in dict(stores).items():
        for p in _paths(value):
            sources += [(option, p, p)] + [(f"{option} (its {c} file)", p, p + c) for c in SQLITE_COMPANIONS]
    seen: list[tuple[str, str]] = []
    for option, value in dict(outputs).items():
        for out in _paths(value):
            for what, given, path in sources:
                if same_file(out, path):
                    raise InputError(f"{option} {out} is the same file as {what} {given}, which writing it would "
                                     f"destroy; write {option} elsewhere")
            for other, earlier in seen:
                if same_file(out, earlier):
                    raise InputError(f"{option} {out} is the same file as {other} {earlier}; give each output its "
                                     "own path")
            seen.append((option, out))


__all__ = ["SQLITE_COMPANIONS", "check_outputs", "same_file"]
