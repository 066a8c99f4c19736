"""Human labels in SQLite, committed the moment they are given.

One row per (query_id, doc_id, annotator): giving a pair a new grade replaces the old row, so
an annotator's most recent action is the row with the highest ``id``. The database runs in WAL
mode with ``synchronous=FULL``: a label acknowledged to the page is on disk, and several
``relgrade label`` processes (one per annotator) may share one store.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from relgrade._errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    query_id  TEXT NOT NULL,
    doc_id    TEXT NOT NULL,
    annotator TEXT NOT NULL,
    grade     INTEGER CHECK (grade IS NULL OR grade BETWEEN 0 AND 3),
    skipped   INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)),
    note      TEXT NOT NULL DEFAULT '',
    time      TEXT NOT NULL,
    text_sha256 TEXT,
    UNIQUE (query_id, doc_id, annotator),
    CHECK ((skipped = 1 AND grade IS NULL) OR (skipped = 0 AND grade IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS labels_by_annotator ON labels (annotator, id);
"""

EXPORT_COLUMNS = ("query_id", "doc_id", "grade", "source", "annotator", "time", "text_sha256", "note")


@dataclass(frozen=True)
class Label:
    """One annotator's verdict on one pair: a grade 0-3, or a skip (``grade`` None)."""

    query_id: str
    doc_id: str
    annotator: str
    grade: int | None
    skipped: bool
    note: str
    time: str  # ISO-8601, UTC
    text_sha256: str | None = None  # SHA-256 of the chunk text the annotator saw (None: made before it was kept)

    def to_dict(self) -> dict:
        return asdict(self)


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds, e.g. ``2024-05-01T12:00:00.123+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class LabelStore:
    """A SQLite file of :class:`Label` rows. Safe to share between threads of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError("is a directory; pass a file path to --store", path=self.path)
        if not self.path.parent.exists():
            raise InputError("its folder does not exist; create it or pass another --store", path=self.path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the label store ({exc}); check its permissions or pass another --store", path=self.path) from None
        try:
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self._db.executescript(_SCHEMA)
            cols = {row[1] for row in self._db.execute("PRAGMA table_info(labels)")}
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise InputError(
                f"not a relgrade label store ({exc}); pass another --store or move the file away",
                path=self.path,
            ) from None
        if not {"query_id", "doc_id", "annotator", "grade", "skipped", "note", "time"} <= cols:
            self._db.close()
            raise InputError("has a 'labels' table of another shape; pass another --store", path=self.path)
        if "text_sha256" not in cols:  # a store made before the text hash was kept: its labels stay unchecked
            try:
                self._db.execute("ALTER TABLE labels ADD COLUMN text_sha256 TEXT")
            except sqlite3.DatabaseError as exc:
                self._db.close()
                raise InputError(f"cannot upgrade the label store ({exc}); check its permissions", path=self.path) from None

    # -- writes (each one is its own committed transaction) --------------------------------------
    def put(
        self, query_id: str, doc_id: str, annotator: str, grade: int | None, *, note: str = "", time: str | None = None,
        text_sha256: str | None = None,
    ) -> Label:
        """Record ``grade`` (0-3), or a skip when ``grade`` is None, replacing this annotator's earlier label.

        ``text_sha256``: SHA-256 of the chunk text the annotator saw (:attr:`relgrade.label.Item.text_sha256`);
        ``relgrade hybrid`` compares it with the current text and reports the label stale when it changed.
        """
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3):
            raise ValueError(f"grade must be 0, 1, 2, 3 or None (skip); got {grade!r}")
        if not annotator:
            raise ValueError("annotator must be a non-empty name")
        label = Label(str(query_id), str(doc_id), str(annotator), grade, grade is None, note or "", time or utc_now(),
                      text_sha256)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO labels (query_id, doc_id, annotator, grade, skipped, note, time, text_sha256) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (label.query_id, label.doc_id, label.annotator, label.grade, int(label.skipped), label.note, label.time,
                 label.text_sha256),
            )
        return label

    def undo(self, annotator: str) -> Label | None:
        """Delete ``annotator``'s most recent label and return it (None when there is none)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    f"SELECT id, {_COLS} FROM labels WHERE annotator = ? ORDER BY id DESC LIMIT 1", (annotator,)
                ).fetchone()
                if row is not None:
                    self._db.execute("DELETE FROM labels WHERE id = ?", (row[0],))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return None if row is None else _label(row[1:])

    # -- reads ------------------------------------------------------------------------------------
    def labels(self, annotator: str | None = None) -> list[Label]:
        """Every label (or one annotator's), oldest first."""
        sql = f"SELECT {_COLS} FROM labels"
        args: tuple = ()
        if annotator is not None:
            sql, args = sql + " WHERE annotator = ?", (annotator,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        return [_label(r) for r in rows]

    def annotators(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT annotator FROM labels ORDER BY annotator")]

    def export(self, path: str | Path, *, annotator: str | None = None) -> int:
        """Write graded labels (skips left out) as CSV or JSONL with :func:`relgrade.io.write_labels`.

        Columns :data:`EXPORT_COLUMNS`: ``query_id, doc_id, grade, source, annotator, time, text_sha256, note``
        (``text_sha256`` empty for labels made before the store kept it: they are unchecked for staleness).
        CSV cells a spreadsheet would run as formulas are neutralised and read back unchanged by
        :func:`relgrade.io.read_labels`. Returns the number of rows.
        """
        from relgrade.io import write_labels

        out = Path(path)
        suffix = out.suffix.lower()
        if out.exists() and out.resolve() == self.path.resolve():
            raise InputError("is the label store itself; export to another file", path=out)
        if suffix not in {".csv", ".jsonl", ".ndjson"}:
            raise InputError("export to a .csv or .jsonl file (human labels with an annotator column)", path=out)
        rows = [{**lab.to_dict(), "source": "human"} for lab in self.labels(annotator) if not lab.skipped]
        write_labels(rows, out, columns=EXPORT_COLUMNS)
        return len(rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "LabelStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_COLS = "query_id, doc_id, annotator, grade, skipped, note, time, text_sha256"


def _label(row: tuple) -> Label:
    q, d, a, g, s, n, t, h = row
    return Label(q, d, a, g, bool(s), n, t, h)
