"""Outputs never overwrite inputs: the one check every command runs on its output paths before it reads its inputs
or pays for any call.

Every file a command writes is an output, the ones it derives from an output's name included: the details file
of ``judge --out X`` (``X.details.jsonl``), the stale labels and the judge's calibration of ``hybrid --out X``
(``X.stale.jsonl``, ``X.calibration.json``), the judge's grades of ``sample --out items.csv``
(``items.judge.csv``) and the ``-wal`` / ``-shm`` / ``-journal`` companions of a SQLite file. Every file a
command reads is an input, the ones it finds beside an input included (a hybrid label set's stale labels and
calibration, an items file's judge grades). :data:`SIDE_FILES` names each derived file once; the writers and
readers take their paths from :func:`side_path`, and each command declares its outputs and inputs with
:func:`with_sides`.

Two paths name the same file when they resolve to the same real path (symbolic links and ``..`` followed,
relative paths taken from the working directory) or, when both exist, are the same file on disk (a hard link,
a case-insensitive file system). A store is read and written: no output may be it (or one of its companions)
and no input may be one of its companions. A database URL is not a file and is never compared. Two outputs of
one command that are the same file are refused too (the second write would replace the first).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from relgrade._errors import InputError

SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def _judge_grades(path: str | Path) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}.judge{p.suffix}"))


SIDE_FILES: dict[str, tuple[tuple[str, Callable[[str | Path], str]], ...]] = {
    "judge": (("its details file", lambda p: f"{p}.details.jsonl"),),
    "hybrid": (("its stale labels", lambda p: f"{p}.stale.jsonl"),
               ("its judge calibration", lambda p: f"{p}.calibration.json")),
    "items": (("its judge grades", _judge_grades),),
    "sqlite": tuple((f"its {c} file", lambda p, c=c: f"{p}{c}") for c in SQLITE_COMPANIONS),
}
"""The files a writer puts beside its output (and a reader looks for beside its input), by kind:
``(what, path of the side file given the main one)``."""


def side_path(path: str | Path, kind: str, what: str) -> Path:
    """The side file ``what`` (e.g. ``"its details file"``) of ``path`` for a file of ``kind`` (:data:`SIDE_FILES`)."""
    for name, make in SIDE_FILES[kind]:
        if name == what:
            return Path(make(path))
    raise KeyError(f"{kind} has no side file {what!r}")


def with_sides(option: str, value: Any, kind: str) -> dict[str, list[str]]:
    """``{option: paths, "option (its ...)": side paths, ...}`` for one option's path(s) of ``kind``: what a
    command declares to :func:`check_outputs` for a file it writes (or reads) together with its side files."""
    paths = _paths(value)
    out: dict[str, list[str]] = {option: paths}
    for what, make in SIDE_FILES[kind]:
        out[f"{option} ({what})"] = [make(p) for p in paths]
    return out


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


def _named(mapping: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(option, p) for option, value in dict(mapping).items() for p in _paths(value)]


def check_outputs(outputs: Mapping[str, Any], inputs: Mapping[str, Any] = (),
                  stores: Mapping[str, Any] = ()) -> None:
    """Raise :class:`InputError` when an output path is one of the ``inputs``, a ``stores`` file (or its SQLite
    companions), or another output; or when an input is a store's companion (the store writes it). Keys are how
    the user named them (``"--out"``, ``"--run"``, ``"--out (its details file)"``: declare derived files with
    :func:`with_sides`); values a path, several paths, or None."""
    stores_given = _named(stores)
    companions = [(f"{option} ({what})", make(p)) for option, p in stores_given for what, make in SIDE_FILES["sqlite"]]
    sources = _named(inputs) + stores_given + companions
    seen: list[tuple[str, str]] = []
    for option, out in _named(outputs):
        for what, given in sources:
            if same_file(out, given):
                raise InputError(f"{option} {out} is the same file as {what} {given}, which writing it would "
                                 f"destroy; write {option.split(' (')[0]} elsewhere")
        for other, earlier in seen:
            if same_file(out, earlier):
                raise InputError(f"{option} {out} is the same file as {other} {earlier}; give each output its "
                                 "own path")
        seen.append((option, out))
    for what, written in companions:
        for option, given in _named(inputs):
            if same_file(written, given):
                raise InputError(f"{option} {given} is the same file as {what} {written}, which the store writes; "
                                 f"move {option.split(' (')[0]} elsewhere")


__all__ = ["SIDE_FILES", "SQLITE_COMPANIONS", "check_outputs", "same_file", "side_path", "with_sides"]
