"""``relgrade ann-recall``: an ANN run against the exact search of the same embeddings."""

from __future__ import annotations

import click


@click.command("ann-recall")
@click.option("--run", "run_path", required=True, help="The ANN run (TREC run or RAG JSONL).")
@click.option("--exact", "exact_path", required=True, help="The exact (brute-force) search of the same embeddings.")
@click.option("--k", type=int, default=10, show_default=True, help="Neighbours compared: the top k of each run.")
@click.option("--labels", "--qrels", "qrels_path", metavar="LABELS",
              help="Labels (optional; --qrels is the same option): metric deltas ANN - exact and the ANN run's leaks.")
@click.option("--metric", "metrics", multiple=True, help="With --labels: a metric whose change ANN - exact to report (repeatable; default: "
                                                      "evaluate's default metrics).")
@click.option("--corpus", "corpus_path", help="The corpus the runs searched: its fingerprint is recorded in the report.")
@click.option("--json", "json_out", help="Write the report as JSON here (gate it with 'relgrade gate --candidate R --min 0.95').")
@click.option("--show", type=click.IntRange(min=0), default=10, show_default=True, help="Queries listed that lose most.")
def ann_recall(run_path, exact_path, k, qrels_path, metrics, corpus_path, json_out, show):
    """Neighbour recall@k (|ANN top k ∩ exact top k| / k) per query with its 95% CI, the queries that lose most."""
    from relgrade._errors import InputError
    from relgrade.cli._output import write_report
    from relgrade.io import read_qrels, read_run
    from relgrade.metrics import ann_recall as run_ann_recall

    from relgrade.io._outputs import check_outputs

    check_outputs({"--json": json_out}, {"--run": run_path, "--exact": exact_path, "--labels": qrels_path,
                                         "--corpus": corpus_path})
    if metrics and not qrels_path:
        raise InputError("--metric needs --labels (the labels the metric deltas are computed against)")
    report = run_ann_recall(read_run(run_path), read_run(exact_path), k,
                            qrels=read_qrels(qrels_path) if qrels_path else None, metrics=list(metrics) or None,
                            corpus=corpus_path)
    click.echo(f"ANN {run_path} vs exact {exact_path}")
    click.echo(report.table(show))
    if json_out:
        write_report(json_out, report.to_dict())
        click.echo(f"wrote {json_out}")
