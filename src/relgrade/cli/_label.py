"""``relgrade label``: serve the labeling page, or export the labels given so far."""

from __future__ import annotations

from pathlib import Path

import click

from relgrade._errors import InputError
from relgrade._words import plural


@click.command("label")
@click.argument("items", type=click.Path(path_type=Path))  # a folder or a bad file: one-line error from read_items
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SQLite file of labels (default: ITEMS.labels.sqlite). Created if missing; shared by annotators.")
@click.option("--annotator", default="", envvar="RELGRADE_ANNOTATOR",
              help="Your name; labels are stored under it. Without it the page asks. With --export: only this annotator.")
@click.option("--port", type=int, default=0, show_default=True, help="Port on 127.0.0.1; 0 picks a free one.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the URL.")
@click.option("--show-judge", is_flag=True, help="Show the judge's grade next to each pair (from the items, else from the "
              "ITEMS.judge file 'relgrade sample' writes beside them; off: annotators stay blind to it).")
@click.option("--export", "export_to", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the graded labels (skips left out) to this .csv/.jsonl for 'relgrade calibrate', then exit.")
def label(items: Path, store: Path | None, annotator: str, port: int, no_browser: bool, show_judge: bool, export_to: Path | None) -> int:
    """Grade (query, chunk) pairs 0-3 in a local browser page; every label is saved at once.

    ITEMS is the file 'relgrade sample' wrote (CSV or JSONL with query_id, query, doc_id, text).
    The first line printed is the page's URL, with a secret token every request must carry.
    Keys: 0-3 grade, s skip, u undo, n note. Restarting resumes at the first pair you have not labeled.
    """
    from relgrade.label._store import LabelStore

    from relgrade.io._outputs import check_outputs, with_sides

    if store is not None:
        from relgrade.judge.store._spec import is_database

        if is_database(store):  # never a file named after a database URL (issue 34)
            raise InputError("--store: the labeling page keeps its labels in a SQLite file; give a file path (a "
                             "database URL is for relgrade judge --store)")
    store_path = store or items.with_name(items.name + ".labels.sqlite")
    annotator = " ".join(annotator.split())
    if export_to is not None:
        check_outputs({"--export": export_to}, with_sides("ITEMS", items, "items"), {"--store": store_path})
        if not store_path.exists():
            raise InputError("no label store here yet; label first, or pass --store", path=store_path)
        with LabelStore(store_path) as db:
            n = db.export(export_to, annotator=annotator or None)
            who = annotator or f"{len(db.annotators())} annotator(s)"
        click.echo(f"wrote {plural(n, 'label')} by {who} to {export_to} (skips left out)")
        return 0

    from relgrade.label._app import create_app
    from relgrade.label._items import read_items
    from relgrade.label._server import bind, new_token, serve, url_for

    check_outputs(with_sides("--store", store_path, "sqlite"), with_sides("ITEMS", items, "items"))
    pairs = read_items(items)
    if show_judge:
        from relgrade.label._items import with_judge_grades

        pairs = with_judge_grades(pairs, items)
    db = LabelStore(store_path)
    try:
        token = new_token()
        app = create_app(pairs, db, token=token, annotator=annotator, show_judge=show_judge)
        sock = bind(port)
        url = url_for(sock, token)
        click.echo(url)
        click.echo(f"relgrade: labeling {plural(len(pairs), 'pair')} from {items}; labels are saved to {store_path}",
                   err=True)
        click.echo("relgrade: open the URL above (keep it private: it holds the token); Ctrl-C to stop", err=True)

        def opened() -> None:
            if not no_browser:
                import webbrowser

                webbrowser.open(url)

        try:
            serve(app, sock, on_started=opened)
        except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown
            pass
        total = len(db.labels())
        click.echo(f"relgrade: stopped; {plural(total, 'label')} in {store_path}", err=True)
    finally:
        db.close()
    return 0
