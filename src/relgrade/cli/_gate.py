"""``relgrade gate``: the CI gate. Exit 0 pass, 1 regression or leak, 2 usage or input error.

The rule and every check live in :func:`relgrade.gate` (two reports) and
:func:`relgrade._gate_paired.gate_paired` (one paired report, ``--paired``); this command parses, calls
them and prints.
"""

from __future__ import annotations

import click

from relgrade._gate import DEFAULT_MAX_DROP


@click.command()
@click.option("--baseline", default=None, help="Report JSON of the baseline (relgrade evaluate --json or estimate --json).")
@click.option("--current", default=None, help="Report JSON of the change under test.")
@click.option("--paired", default=None, metavar="AB.json",
              help="Instead of --baseline/--current: the JSON of 'relgrade compare --run-a A --run-b B --human H "
                   "--judge J', gating candidate B on its PPI++ difference to A (with --beyond-ci: on the upper end "
                   "of the difference's 95% interval).")
@click.option("--metric", "metrics", multiple=True, help="Metric to gate on (repeatable). Default: recall@5, the guide's gate.")
@click.option("--max-drop", type=float, default=DEFAULT_MAX_DROP, show_default=True,
              help="Largest allowed absolute drop, a finite number >= 0 (0.02 = 2 points of recall@5).")
@click.option("--beyond-ci", is_flag=True, default=False,
              help="Fail only when the drop exceeds --max-drop beyond the current report's 95% interval (the PPI "
                   "interval of 'relgrade estimate --json'): baseline - max_drop > upper bound of current's CI.")
def gate(baseline, current, paired, metrics, max_drop, beyond_ci):
    """Fail (exit 1) when a metric drops by more than --max-drop, or the current run leaks a forbidden doc.

    With --beyond-ci a metric fails only when even the upper end of the current report's 95% interval
    is more than --max-drop below the baseline's value (estimates from 'relgrade estimate --json' use
    the PPI++ interval, 'relgrade evaluate --json' reports the bootstrap one). Both reports must be
    computed alike (same labels, queries, --rel-threshold and --no-answer), else exit 2.
    """
    from relgrade._errors import InputError

    if paired is not None:
        if baseline is not None or current is not None:
            raise InputError("give --paired alone, or --baseline and --current (not both ways)")
        from relgrade._gate_paired import gate_paired

        result = gate_paired(paired, metrics=list(metrics) or None, max_drop=max_drop, beyond_ci=beyond_ci)
        click.echo(result.table())
        return result.exit_code
    if baseline is None or current is None:
        raise InputError("give --baseline and --current (two reports), or --paired AB.json (one paired report)")
    from relgrade._gate import gate as run_gate

    result = run_gate(baseline, current, metrics=list(metrics) or None, max_drop=max_drop, beyond_ci=beyond_ci)
    click.echo(result.table())
    return result.exit_code
