"""``relgrade demo``: the whole pipeline offline on bundled data."""

from __future__ import annotations

import click


@click.command()
@click.option("--out", default="relgrade-demo", show_default=True, help="Directory for the report, summary and every intermediate file.")
@click.option("--model", default=None, help="Judge model (any litellm model). Default: the embedded local judge local/gemma3-270m.")
@click.option("--depth", type=click.IntRange(min=1), default=5, show_default=True, help="Judge the top K of each run.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Judge calls in flight (default 1 for local models, 16 otherwise).")
def demo(out, model, depth, concurrency):
    """Retrieve, judge, calibrate, build hybrid labels with PPI intervals, evaluate, gate, and write a report."""
    from relgrade.demo._pipeline import run_demo

    result = run_demo(out, model=model, depth=depth, concurrency=concurrency, say=click.echo)
    d = result.data
    cal = d["calibration"]
    click.echo("")
    click.echo(f"judge {d['model']}: {cal['verdict']}")
    for name, ev in d["runs"].items():
        r5 = ev["recall@5"]
        click.echo(f"{name:<8} recall@5 {r5['value']:.3f} [{r5['ci95'][0]:.3f}, {r5['ci95'][1]:.3f}]  "
                   f"ndcg@10 {ev['ndcg@10']['value']:.3f}  leaks {ev['leaks']}")
    click.echo(f"gate {d['gate']['current']} vs {d['gate']['baseline']}: {d['gate']['result']}")
    click.echo(f"report  {result.report}")
    click.echo(f"summary {result.summary}")
    return 0
