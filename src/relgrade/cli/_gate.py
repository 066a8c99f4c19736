"""``relgrade gate``: the CI gate. Exit 0 pass, 1 regression or leak, 2 usage or input error.

The rule and every check live in :func:`relgrade.gate` (two reports), :mod:`relgrade.gating._min` (one report
and a floor, ``--min``) and :func:`relgrade.gating._paired.gate_paired` (one paired report, ``--paired``); this
command parses, calls them and prints.
"""

from __future__ import annotations

import click

from relgrade.gating._gate import DEFAULT_MAX_DROP
from relgrade._intervals import MEAN_CI, PPI


@click.command(help="Fail (exit 1) when a metric drops by more than --max-drop, or the candidate run leaks a "
               "forbidden doc.\n\nWith --beyond-ci a metric fails only when even the upper end of the candidate "
               "report's 95% "
               f"interval is more than --max-drop below the baseline's value ('relgrade estimate --json' reports carry "
               f"the {PPI.name} interval, 'relgrade evaluate --json' reports the {MEAN_CI} one). Both reports must be "
               "computed alike (same labels, queries, --rel-threshold and --no-answer), else exit 2; reports over "
               "different corpus fingerprints too, unless --allow-corpus-change. Reports of repeated runs (evaluate "
               "--run R1 --run R2 ...) widen --max-drop by the repeat noise. --min gates one report on a floor "
               "instead. A report that rests on judge labels prints the judge's calibration verdict (or 'judge not "
               "calibrated'); a verdict that says not to use them fails the gate unless --accept-judge. The judge's audit "
               "('relgrade audit', recorded with --audit) is printed too: a bias warns and never fails the gate.")
@click.option("--baseline", help="Report JSON of the baseline (relgrade evaluate --json or estimate --json).")
@click.option("--candidate", "--current", "current", default=None,
              help="Report JSON of the candidate, the change under test (--current is the same option).")
@click.option("--paired", default=None, metavar="AB.json",
              help="Instead of --baseline/--candidate: the JSON of 'relgrade compare --run-a A --run-b B --human H "
                   "--judge J', gating candidate B on its PPI++ difference to baseline A (with --beyond-ci: on the upper end "
                   "of the difference's 95% interval).")
@click.option("--metric", "metrics", multiple=True, help="Metric to gate on (repeatable). Default: recall@5, the guide's gate.")
@click.option("--max-drop", type=float, default=DEFAULT_MAX_DROP, show_default=True,
              help="Largest allowed absolute drop, a finite number >= 0 (0.02 = 2 points of recall@5).")
@click.option("--beyond-ci", is_flag=True, default=False,
              help=f"Fail only when the drop exceeds --max-drop beyond the candidate report's 95% interval (the "
                   f"{PPI.name} interval of 'relgrade estimate --json'): baseline - max_drop > upper bound of the "
                   "candidate's CI.")
@click.option("--min", "minimum", type=float, default=None,
              help="Instead of --baseline: fail when the metric is below this value, e.g. 0.95 for an ann-recall "
                   "report (recall vs exact).")
@click.option("--allow-corpus-change", is_flag=True, default=False,
              help="Gate two reports that record different corpus fingerprints (refused otherwise); recorded in the "
                   "gate's result.")
@click.option("--no-tenants", is_flag=True, default=False,
              help="The runs serve no tenants (no document is forbidden to anyone): a report without leak information "
                   "('relgrade estimate' without --forbidden) passes the leak check instead of failing it. Recorded in "
                   "the JSON; leaks a report does list still fail.")
@click.option("--accept-judge", is_flag=True, default=False,
              help="Gate even when a report rests on judge labels whose calibration says not to use them (by default "
                   "that fails, exit 1). Recorded in the JSON.")
@click.option("--json", "json_out", help="Write the gate's result (rows, leaks, reasons, corpus record, the judge's "
              "calibration behind each report, --accept-judge, --no-tenants) as JSON here.")
def gate(baseline, current, paired, metrics, max_drop, beyond_ci, minimum, allow_corpus_change, no_tenants, accept_judge,
         json_out):
    from relgrade._errors import InputError
    from relgrade.io._outputs import check_outputs

    check_outputs({"--json": json_out}, {"--baseline": baseline, "--candidate": current, "--paired": paired})
    if paired is not None:
        if baseline is not None or current is not None or minimum is not None:
            raise InputError("give --paired alone, or --candidate with --baseline or --min (not both ways)")
        from relgrade.gating._paired import gate_paired

        result = gate_paired(paired, metrics=list(metrics) or None, max_drop=max_drop, beyond_ci=beyond_ci,
                             accept_judge=accept_judge, no_tenants=no_tenants)
    elif current is None:
        raise InputError("give --candidate (with --baseline or --min), or --paired AB.json (one paired report)")
    elif minimum is not None or baseline is None:
        result = _floor(baseline, current, metrics, minimum, beyond_ci, no_tenants, accept_judge)
    else:
        from relgrade.gating._gate import gate as run_gate

        result = run_gate(baseline, current, metrics=list(metrics) or None, max_drop=max_drop, beyond_ci=beyond_ci,
                          allow_corpus_change=allow_corpus_change, accept_judge=accept_judge, no_tenants=no_tenants)
    click.echo(result.table())
    if json_out:
        from relgrade.cli._output import write_json

        write_json(json_out, result.to_dict())
        click.echo(f"wrote {json_out}")
    return result.exit_code


def _floor(baseline, current, metrics, minimum, beyond_ci, no_tenants, accept_judge):
    from relgrade._errors import InputError
    from relgrade.gating._min import gate_min

    if baseline is not None or minimum is None:
        raise InputError("pass --baseline B.json (fail on a drop) or --min VALUE (fail below a floor), not both or neither")
    return gate_min(current, minimum=minimum, metrics=list(metrics) or None, beyond_ci=beyond_ci,
                    no_tenants=no_tenants, accept_judge=accept_judge)
