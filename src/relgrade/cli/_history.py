"""``relgrade history``: reports of successive builds over time, as a table and a self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("reports", nargs=-1, required=True)
@click.option("--html", "html_out", help="Write the trend page (self-contained HTML) here.")
@click.option("--metric", "metrics", multiple=True, help="Metric to follow (repeatable). Default: every metric all reports have.")
@click.option("--baseline", help="Draw the gate's threshold: this report's value minus --max-drop.")
@click.option("--max-drop", type=float, default=None, help="With --baseline (default the gate's 0.02).")
@click.option("--min", "minimum", type=float, default=None, help="Draw the gate's threshold at this value (gate --min).")
@click.option("--json", "json_out", help="Write the series as JSON here.")
def history(reports, html_out, metrics, baseline, max_drop, minimum, json_out):
    """Per metric the value with its 95% interval over time, the gate's threshold, leaks and failed queries.

    Each report's source (PPI++, human, judge or hybrid labels, exact search) and the judge's calibration verdict
    behind it are shown. With --baseline or --min, the newest report is gated like 'relgrade gate': exit 1 when it
    is below the threshold on a metric or lists a leak.
    """
    from relgrade._errors import InputError
    from relgrade.cli._output import write_json
    from relgrade.history import history as run_history
    from relgrade.history import render_page

    from relgrade.io._outputs import check_outputs

    check_outputs({"--html": html_out, "--json": json_out}, {"REPORTS": reports, "--baseline": baseline})
    result = run_history(list(reports), metrics=list(metrics) or None, baseline=baseline, max_drop=max_drop,
                         minimum=minimum)
    click.echo(result.table())
    for note in result.notes:
        click.echo(f"note: {note}")
    if html_out:
        try:
            Path(html_out).write_text(render_page(result), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror}); choose another --html path", path=html_out) from None
        click.echo(f"wrote {html_out}")
    if json_out:
        write_json(json_out, result.to_dict())
        click.echo(f"wrote {json_out}")
    return result.exit_code
