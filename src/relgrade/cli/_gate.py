"""``relgrade gate``: the CI gate. Exit 0 pass, 1 regression or leak, 2 usage or input error.

The rule and every check live in :func:`relgrade.gate`; this command parses, calls it and prints.
"""

from __future__ import annotations

import click

from relgrade._gate import DEFAULT_MAX_DROP


@click.command()
@click.option("--baseline", help="Report JSON of the baseline (relgrade evaluate --json or estimate --json).")
@click.option("--current", required=True, help="Report JSON of the change under test.")
@click.option("--metric", "metrics", multiple=True, help="Metric to gate on (repeatable). Default: recall@5, the guide's gate.")
@click.option("--max-drop", type=float, default=DEFAULT_MAX_DROP, show_default=True,
              help="Largest allowed absolute drop, a finite number >= 0 (0.02 = 2 points of recall@5).")
@click.option("--beyond-ci", is_flag=True, default=False,
              help="Fail only when the drop exceeds --max-drop beyond the current report's 95% interval (the PPI "
                   "interval of 'relgrade estimate --json'): baseline - max_drop > upper bound of current's CI.")
@click.option("--min", "minimum", type=float, default=None,
              help="Instead of --baseline: fail when the metric is below this value, e.g. 0.95 for an ann-recall "
                   "report (recall vs exact).")
@click.option("--allow-corpus-change", is_flag=True, default=False,
              help="Gate two reports that record different corpus fingerprints (refused otherwise); recorded in the "
                   "gate's result.")
@click.option("--json", "json_out", help="Write the gate's result (rows, leaks, reasons, corpus record) as JSON here.")
def gate(baseline, current, metrics, max_drop, beyond_ci, minimum, allow_corpus_change, json_out):
    """Fail (exit 1) when a metric drops by more than --max-drop, or the current run leaks a forbidden doc.

    With --beyond-ci a metric fails only when even the upper end of the current report's 95% interval
    is more than --max-drop below the baseline's value (estimates from 'relgrade estimate --json' use
    the PPI++ interval, 'relgrade evaluate --json' reports the bootstrap one). Both reports must be
    computed alike (same labels, queries, --rel-threshold and --no-answer), else exit 2; reports over
    different corpus fingerprints too, unless --allow-corpus-change. Reports of repeated runs (evaluate
    --run R1 --run R2 ...) widen --max-drop by the repeat noise. --min gates one report on a floor instead.
    """
    from relgrade._gate import gate as run_gate

    if minimum is not None or baseline is None:
        result = _floor(baseline, current, metrics, minimum, beyond_ci)
    else:
        result = run_gate(baseline, current, metrics=list(metrics) or None, max_drop=max_drop, beyond_ci=beyond_ci,
                          allow_corpus_change=allow_corpus_change)
    click.echo(result.table())
    if json_out:
        from relgrade.cli._evaluate import _write_json

        _write_json(json_out, result.to_dict())
    return result.exit_code


def _floor(baseline, current, metrics, minimum, beyond_ci):
    from relgrade._errors import InputError
    from relgrade._gate_min import gate_min

    if baseline is not None or minimum is None:
        raise InputError("pass --baseline B.json (fail on a drop) or --min VALUE (fail below a floor), not both or neither")
    return gate_min(current, minimum=minimum, metrics=list(metrics) or None, beyond_ci=beyond_ci)
