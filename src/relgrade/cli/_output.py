"""What commands print and write: the JSON writer, the evaluation notes, the judge's verdict line, and the stdout every
command prints to (:func:`closed_stdout_ends_quietly`)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import click

from relgrade._errors import InputError
from relgrade._words import plural as _count


class QuietStdout(io.TextIOBase):
    """``sys.stdout`` while a command runs. When the reader goes away (``relgrade estimate ... | head -3``: a closed
    pipe), the rest of the output is dropped instead of raising ``BrokenPipeError`` in the middle of the command, so
    the command runs to its end and writes every file it was asked for (``--json``, ``--out``, ``--report``...),
    whatever the order of its printing and writing."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.gone = False  # the reader closed the pipe

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click asks with b"" whether this is a binary stream: it is not
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not self.gone:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return not self.gone and self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")

    @property
    def errors(self):
        return getattr(self.stream, "errors", "strict")

    def _reader_gone(self) -> None:
        """Drop the rest; point the process's stdout at /dev/null so the interpreter's last flush is silent too."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            fd = self.stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, fd)
            finally:
                os.close(devnull)


@contextlib.contextmanager
def closed_stdout_ends_quietly():
    """Run a command with :class:`QuietStdout` as ``sys.stdout`` (the one mechanism of every command: ``main`` wraps
    them all); the command's own exit code stands, no traceback, its files written."""
    real = sys.stdout
    if real is None or isinstance(real, QuietStdout):
        yield real
        return
    quiet = QuietStdout(real)
    sys.stdout = quiet
    try:
        yield quiet
    finally:
        if sys.stdout is quiet:
            sys.stdout = real


def write_text(path: str, text: str, option: str = "--json") -> None:
    """Write a command's output; a folder that is missing or read-only is one line naming the path and the option."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror}); choose another {option} path", path=path) from None


def write_json(path: str, data, option: str = "--json") -> None:
    """Write a report as JSON; NaN never reaches it (the library writes null where a value is not a number)."""
    from relgrade.metrics._json import dumps_report  # per-query tables written column-wise (100k queries: fast)

    write_text(path, dumps_report(data, allow_nan=False), option)


def write_report(path: str, data, option: str = "--json") -> None:
    """Write a report (``evaluate``, ``compare``, ``estimate``, ``rank-systems``, ``ann-recall --json``) as JSON with
    when and at which commit it was made (:func:`relgrade.history.recorded`), which ``relgrade history`` orders by:
    the one writer of every report, so every kind records the same."""
    from relgrade.history import recorded

    write_json(path, {**data, "recorded": recorded()}, option)


def say_judge(block) -> None:
    """Print what the judge's calibration says, when the labels hold judge grades (relgrade._verdict)."""
    from relgrade._verdict import describe

    line = describe(block)
    if line:
        click.echo(line)


def print_notes(report, show_failures: int) -> None:
    if report.missing_queries:
        click.echo(f"{_count(len(report.missing_queries), 'query', 'queries')} missing from the run scored 0: "
                   f"{', '.join(report.missing_queries[:5])}" + (" ..." if len(report.missing_queries) > 5 else ""))
    if report.ignored_queries:
        click.echo(f"{_count(len(report.ignored_queries), 'run query', 'run queries')} not in the qrels ignored")
    if report.no_answer:
        where = ("counted as 0 in the means (--no-answer zero)" if report.settings.get("no_answer") == "zero"
                 else "reported apart, not in the means (--no-answer exclude)")
        click.echo(f"{_count(len(report.no_answer), 'no-answer query', 'no-answer queries')} (no relevant doc) {where}:")
        for row in report.no_answer[:show_failures]:
            score = "" if row["top_score"] is None else f" (score {row['top_score']:.3g})"
            top = "nothing retrieved" if row["top_doc"] is None else f"top {row['top_doc']}{score}"
            click.echo(f"  {row['query_id']}: {top}  {row['query'] or ''}".rstrip())
    if report.failures:
        k = report.settings["failure_k"]
        click.echo(f"{_count(len(report.failures), 'failed query', 'failed queries')} (no relevant doc in the top {k}):")
        for row in report.failures[:show_failures]:
            click.echo(f"  {row['query_id']}: {row['query'] or ''}".rstrip())
            click.echo(f"    expected {row['expected'][:5]}  got {row['got']}")
    if report.leaks:
        n = len(report.leaks)
        click.echo(f"LEAKS: {n} forbidden {'document' if n == 1 else 'documents'} retrieved in the top "
                   f"{report.settings['leak_k']}:")
        for row in report.leaks[:show_failures]:
            click.echo(f"  {row['query_id']}: {row['doc_id']} at rank {row['rank']}")
