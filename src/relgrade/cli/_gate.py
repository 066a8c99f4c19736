"""``relgrade gate``: the CI gate. Exit 0 pass, 1 regression or leak, 2 usage or input error."""

from __future__ import annotations

import json
from pathlib import Path

import click

from relgrade._errors import InputError


def read_report(path: str) -> dict:
    """A JSON written by ``relgrade evaluate --json`` (or any ``{"aggregate": {...}}`` object)."""
    from relgrade.io._text import read_text

    text = read_text(path, what="report file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg}); pass a file written by 'relgrade evaluate --json'", path=path, line=exc.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read; pass a file written by 'relgrade evaluate --json'", path=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("aggregate"), dict):
        raise InputError("no 'aggregate' object; pass a file written by 'relgrade evaluate --json'", path=path)
    return data


def metric_value(data: dict, name: str, path: str) -> float:
    from relgrade.metrics import parse_metric

    key = parse_metric(name).name
    agg = data["aggregate"]
    if key not in agg:
        raise InputError(f"metric {key!r} is not in this report (it has {', '.join(sorted(agg)) or 'none'}); "
                         "re-run evaluate with --metric or gate on another --metric", path=path)
    value = agg[key]
    if isinstance(value, dict) and isinstance(value.get("ppi"), dict):  # relgrade estimate --json
        value = value["ppi"]
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"metric {key!r} has no numeric value", path=path)
    return float(value)


def metric_upper(data: dict, name: str, path: str) -> float:
    """Upper bound of the metric's 95% interval: the PPI one for ``relgrade estimate --json``, else ``ci95``."""
    from relgrade.metrics import parse_metric

    key = parse_metric(name).name
    value = data["aggregate"][key]
    if isinstance(value, dict) and isinstance(value.get("ppi"), dict):
        value = value["ppi"]
    ci = value.get("ci95") if isinstance(value, dict) else None
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci)):
        raise InputError(f"metric {key!r} has no 95% interval, which --beyond-ci needs; write the report with "
                         "'relgrade estimate --json' or 'relgrade evaluate --json' (n >= 2 queries)", path=path)
    return float(ci[1])


@click.command()
@click.option("--baseline", required=True, help="Report JSON of the baseline (relgrade evaluate --json or estimate --json).")
@click.option("--current", required=True, help="Report JSON of the change under test.")
@click.option("--metric", "metrics", multiple=True, help="Metric to gate on (repeatable). Default: recall@5, the guide's gate.")
@click.option("--max-drop", type=float, default=0.02, show_default=True,
              help="Largest allowed absolute drop (0.02 = 2 points of recall@5).")
@click.option("--beyond-ci", is_flag=True, default=False,
              help="Fail only when the drop exceeds --max-drop beyond the current report's 95% interval (the PPI "
                   "interval of 'relgrade estimate --json'): baseline - max_drop > upper bound of current's CI.")
def gate(baseline, current, metrics, max_drop, beyond_ci):
    """Fail (exit 1) when a metric drops by more than --max-drop, or the current run leaks a forbidden doc.

    With --beyond-ci a metric fails only when even the upper end of the current report's 95% interval
    is more than --max-drop below the baseline's value (estimates from 'relgrade estimate --json' use
    the PPI++ interval, 'relgrade evaluate --json' reports the bootstrap one).
    """
    if max_drop < 0:
        raise InputError(f"--max-drop must be >= 0, got {max_drop}")
    base, cur = read_report(baseline), read_report(current)
    names = list(metrics) or ["recall@5"]
    failed = False
    rule = f"max drop {max_drop:g}" + (" beyond the current 95% CI" if beyond_ci else "")
    click.echo(f"{'metric':<16}{'baseline':>10}{'current':>10}{'change':>10}   verdict ({rule})")
    for name in names:
        b = metric_value(base, name, baseline)
        c = metric_value(cur, name, current)
        drop = b - (metric_upper(cur, name, current) if beyond_ci else c)
        bad = drop > max_drop + 1e-12
        failed |= bad
        click.echo(f"{name:<16}{b:>10.4f}{c:>10.4f}{c - b:>+10.4f}   {'FAIL: regression' if bad else 'ok'}")
    leaks = cur.get("leaks") or []
    if leaks:
        failed = True
        click.echo(f"FAIL: {len(leaks)} leaks (forbidden documents in the top k) in {current}:")
        for row in leaks[:10]:
            click.echo(f"  {row.get('query_id')}: {row.get('doc_id')} at rank {row.get('rank')}")
    click.echo("gate: FAIL" if failed else "gate: pass")
    return 1 if failed else 0
