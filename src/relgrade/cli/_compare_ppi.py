"""``relgrade compare --human H --judge J``: the PPI++ difference of two runs (A/B with judge labels).

Reads the labels as ``relgrade estimate`` does (one reader, the same scale and mapping rules), calls
:func:`relgrade.hybrid._ab.compare_runs` and prints; ``relgrade gate --paired`` reads the JSON.
"""

from __future__ import annotations

import click


def compare_ppi(run_a, run_b, human_path, judge_paths, prediction, folds, mapping_path, forbidden_path, ks, metrics,
                rel_threshold, no_answer, alpha, seed, json_out, audit_path=None) -> None:
    from relgrade.hybrid._ab import compare_runs
    from relgrade.cli._hybrid import ppi_audit, ppi_inputs, ppi_notes, ppi_verdicts, report_tail
    from relgrade.io import read_run

    chosen, forbidden, human, jins, mapping, crossfit, reuse, design = ppi_inputs(
        metrics, ks, forbidden_path, human_path, judge_paths, mapping_path, rel_threshold, prediction)
    runs = [read_run(path) for path in (run_a, run_b)]
    calibration = ppi_verdicts(jins, mapping, prediction)
    audit = ppi_audit(jins, mapping, audit_path)
    report = compare_runs(*runs, human, jins, chosen, rel_threshold=rel_threshold, no_answer=no_answer, alpha=alpha,
                          crossfit=crossfit, forbidden=forbidden, prediction=prediction, folds=folds, seed=seed,
                          calibration=calibration, audit=audit, design=design)
    ppi_notes(reuse, report)
    click.echo(f"A (baseline) = {run_a}\nB (candidate) = {run_b}")
    click.echo(report.table())
    for name, d in report.differences.items():
        if d.note:
            click.echo(f"{name}: note: {d.note}")
    report_tail(report, mapping, mapping_path, json_out, "relgrade gate --paired")
