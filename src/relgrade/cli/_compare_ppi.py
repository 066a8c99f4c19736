"""``relgrade compare --human H --judge J``: the PPI++ difference of two runs (A/B with judge labels).

Reads the labels as ``relgrade estimate`` does (one reader, the same scale and mapping rules), calls
:func:`relgrade.hybrid._ab.compare_runs` and prints; ``relgrade gate --paired`` reads the JSON.
"""

from __future__ import annotations

import click


def compare_ppi(run_a, run_b, human_path, judge_path, mapping_path, forbidden_path, ks, metrics, rel_threshold,
                no_answer, alpha, json_out) -> None:
    from relgrade.hybrid._ab import compare_runs
    from relgrade.hybrid._cli import _mapping_note, ppi_inputs, report_tail
    from relgrade.io import read_run

    chosen, forbidden, human, judge, jin, mapping, crossfit, reuse = ppi_inputs(
        metrics, ks, forbidden_path, human_path, judge_path, mapping_path, rel_threshold)
    runs = [read_run(path) for path in (run_a, run_b)]
    report = compare_runs(*runs, human, judge, chosen, rel_threshold=rel_threshold, no_answer=no_answer, alpha=alpha,
                          crossfit=crossfit, forbidden=forbidden)
    _mapping_note(jin, mapping, reuse)
    click.echo(f"A = {run_a}\nB = {run_b}")
    click.echo(report.table())
    for name, d in report.differences.items():
        if d.note:
            click.echo(f"{name}: note: {d.note}")
    report_tail(report, mapping, mapping_path, json_out, "relgrade gate --paired")
