"""Human labeling: a local page where annotators grade (query, chunk) pairs 0-3, blind to the judge.

``relgrade label ITEMS`` serves it; labels go to SQLite the moment they are given and export to
the CSV/JSONL human-label files :func:`relgrade.io.read_qrels` (and so ``relgrade calibrate``) reads.
"""

from typing import Any

from relgrade.label._items import Item, read_items
from relgrade.label._rubric import RUBRIC, Level
from relgrade.label._server import bind, new_token, serve, url_for
from relgrade.label._store import EXPORT_COLUMNS, Label, LabelStore

__all__ = [
    "EXPORT_COLUMNS",
    "Item",
    "Label",
    "LabelStore",
    "Level",
    "RUBRIC",
    "bind",
    "create_app",
    "new_token",
    "read_items",
    "serve",
    "url_for",
]


def __getattr__(name: str) -> Any:
    # create_app imports Starlette: load it on first use so 'relgrade --help' stays instant.
    if name == "create_app":
        from relgrade.label._app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
