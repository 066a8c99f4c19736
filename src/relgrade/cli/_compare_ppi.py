"""``relgrade compare --human H --judge J``: the PPI++ difference of two runs (A/B with a judge labels).

Reads the labels as ``relgrade estimate`` does (one reader, the same scale and mapping rules), calls
:func:`relgrade.hybrid._ab.compare_runs` and prints; ``relgrade gate --paired`` reads the JSON.
"""

from __future__ import annotations

import click


def compare_ppi(run_a, run_b, human_path, judge_path, mapping_path, forbidden_path, ks, metrics, rel_threshold,
                no_answer, alpha, json_out) -> None:
    from relgrade.hybrid import crossfit_for_ppi
    from relgrade.hybrid._ab import compare_runs
    from relgrade.hybrid._cli import _forbidden, _labels, _mapping_note, _write_json
    from relgrade.io import read_run
    from relgrade.metrics import parse_metrics

    chosen = parse_metrics(metrics, ks)
    forbidden = _forbidden(forbidden_path)
    human, judge, jin, mapping = _labels(human_path, judge_path, mapping_path, rel_threshold, ppi=True)
    crossfit, reuse = crossfit_for_ppi(jin, human, mapping)
    runs = [read_run(path) for path in (run_a, run_b)]
    report = compare_runs(*runs, human, judge, chosen, rel_threshold=rel_threshold, no_answer=no_answer, alpha=alpha,
                          crossfit=crossfit, forbidden=forbidden)
    _mapping_note(jin, mapping)
    if reuse:
        click.echo(f"note: {reuse}")
    click.echo(f"A = {run_a}\nB = {run_b}")
    click.echo(report.table())
    for name, d in report.differences.items():
        if d.note:
            click.echo(f"{name}: note: {d.note}")
    for note in report.notes:
        click.echo(f"note: {note}")
    if report.leaks:
        click.echo(f"LEAKS: {len(report.leaks)} forbidden document(s) in B's top {report.settings['leak_k']}")
    elif report.leaks is None:
        click.echo("no --forbidden: the report carries no leak check, and 'relgrade gate --paired' fails on it")
    if json_out:
        data = report.to_dict()
        data["settings"]["mapping"] = None if mapping is None else {"path": mapping_path, "adopted": mapping.adopted}
        _write_json(json_out, data)
        click.echo(f"wrote {json_out}")
