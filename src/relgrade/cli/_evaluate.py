"""``relgrade evaluate`` and ``relgrade compare``."""

from __future__ import annotations

import click

from relgrade._defaults import DEFAULT_PREDICTION, PREDICTIONS
from relgrade._intervals import MEAN_CI_HELP
from relgrade._words import plural as _count
from relgrade.cli._options import (AUDIT_HELP, CORPUS_HELP, FOLDS_HELP, MAPPING_HELP, PREDICTION_HELP, metric_options,
                                   with_judge)
from relgrade.cli._output import print_notes, say_judge, write_report

def _load(run_path: str, qrels_path: str):
    from relgrade.io import read_qrels, read_run

    return read_qrels(qrels_path), read_run(run_path)


@click.command(help="Score a run against qrels or a golden set: recall@k, precision@k, MRR, nDCG@k with 95% CIs.\n\n"
               f"{MEAN_CI_HELP}. On a hybrid label set (relgrade hybrid) it also prints where the top-k labels "
               "came from and the judge's calibration verdict recorded with them.")
@click.option("--run", "run_paths", required=True, multiple=True,
              help="Run file: TREC run or RAG JSONL. Give it several times for repeats of one configuration (an ANN "
                   "index rebuilt, another seed): mean, between-repeat spread, top-k stability.")
@click.option("--labels", "--qrels", "qrels_path", required=True, metavar="LABELS",
              help="Labels: TREC qrels, CSV/JSONL qrels, a golden set JSONL, or a hybrid label set (relgrade hybrid). "
                   "--qrels is the same option.")
@metric_options
@click.option("--json", "json_out", help="Write the full report (aggregate, per_query, failures, leaks) as JSON here.")
@click.option("--show-failures", type=int, default=5, show_default=True, help="How many failed queries to print.")
@click.option("--corpus", "corpus_path", help=CORPUS_HELP)
def evaluate(run_paths, qrels_path, ks, metrics, rel_threshold, no_answer, n_boot, seed, json_out, show_failures,
             corpus_path):
    from relgrade.io._outputs import check_outputs, with_sides

    check_outputs({"--json": json_out}, {"--run": run_paths, **with_sides("--labels", qrels_path, "hybrid"),
                                         "--corpus": corpus_path})
    from relgrade.metrics._settings import check_n_boot

    check_n_boot(n_boot)  # on every path, repeats included: a limit is never accepted and ignored
    if len(run_paths) > 1:
        from relgrade.cli._repeats import evaluate_repeats_cli

        return evaluate_repeats_cli(run_paths, qrels_path, ks, metrics, rel_threshold, no_answer, json_out,
                                    show_failures, corpus_path)
    run_path = run_paths[0]
    from relgrade.metrics import evaluate as run_evaluate

    from relgrade.metrics import parse_metrics
    from relgrade.metrics._settings import check_n_boot

    chosen = parse_metrics(metrics, ks)
    check_n_boot(n_boot)
    qrels, run = _load(run_path, qrels_path)
    hybrid = _hybrid_labels(qrels_path, run)
    if hybrid is not None:
        qrels = hybrid.to_qrels()
    report = run_evaluate(qrels, run, chosen, rel_threshold=rel_threshold,
                          no_answer=no_answer, n_boot=n_boot, seed=seed, corpus=corpus_path)
    click.echo(f"run {run_path} vs {qrels_path}: {_count(report.n_queries, 'query', 'queries')}")
    click.echo(report.table())
    data = report.to_dict()
    if hybrid is not None:
        data.update(_provenance(hybrid, qrels, run, report))
    print_notes(report, show_failures)
    from relgrade.cli._repeats import loop_notes

    data.update(loop_notes(qrels_path, corpus_path))
    if json_out:
        write_report(json_out, data)
        click.echo(f"wrote {json_out}")


def _hybrid_labels(qrels_path: str, run):
    """A hybrid label set (labels with provenance, see relgrade.hybrid), re-checked against the run's texts."""
    from relgrade.hybrid import is_hybrid

    if not is_hybrid(qrels_path):
        return None
    from relgrade.hybrid import read_hybrid, recheck

    hybrid = read_hybrid(qrels_path)
    return recheck(hybrid, run.texts) if run.texts else hybrid


def _provenance(hybrid, qrels, run, report) -> dict:
    """Print where the top-k labels came from (judged@k) and return it for the JSON report."""
    from relgrade.hybrid import coverage, coverage_table

    cov = coverage(qrels, run, hybrid.sources(), report.settings["metrics"], topics=list(report.per_query))
    click.echo(f"labels: {hybrid.summary()}")
    say_judge(hybrid.judge())
    click.echo(coverage_table(cov))
    for s in hybrid.stale[:5]:
        click.echo(f"  stale: {s.label.query_id} / {s.label.doc_id} ({s.label.source}): {s.reason}")
    return {
        "coverage": {name: c.to_dict() for name, c in cov.items()},
        "coverage_per_query": {name: {q: dict(v) for q, v in c.per_query.items()} for name, c in cov.items()},
        "labels": hybrid.counts(),
        "stale": [s.to_dict() for s in hybrid.stale],
        "judge": hybrid.judge(),
    }


@click.command(help="Compare two runs per metric: difference, 95% CI and paired randomisation p-value (--labels), or "
               "the PPI++ difference from human labels on some queries and judge labels on all (--human and --judge)."
               f"\n\n{MEAN_CI_HELP}; here of the per-query differences, on [-1, 1].")
@click.option("--run-a", "run_a", required=True, multiple=True, help="A: the baseline run (several: repeats of the baseline).")
@click.option("--run-b", "run_b", required=True, multiple=True, help="B: the candidate run (several: repeats of the candidate).")
@click.option("--labels", "--qrels", "qrels_path", default=None, metavar="LABELS",
              help="Labels both runs are scored against (--qrels is the same option).")
@click.option("--human", "human_path", default=None,
              help="Instead of --labels: human labels on a random sample of queries, with --judge on all of them: "
                   "the PPI++ difference B - A beside the human-only one ('relgrade gate --paired' reads its JSON).")
@click.option("--judge", "judge_paths", multiple=True, help="Judge labels (with --human): the details JSONL of "
              "'relgrade judge', or plain qrels; repeat for several judges.")
@click.option("--prediction", type=click.Choice(PREDICTIONS), default=DEFAULT_PREDICTION, show_default=True,
              help=with_judge(PREDICTION_HELP))
@click.option("--folds", type=int, default=None, help=with_judge(FOLDS_HELP))
@click.option("--mapping", "mapping_path", default=None, help=with_judge(MAPPING_HELP))
@click.option("--audit", "audit_path", default=None, metavar="AUDIT.json", help=with_judge(AUDIT_HELP))
@click.option("--forbidden", "forbidden_path", default=None, metavar="GOLDEN",
              help="With --judge: golden set listing forbidden documents; run B's leaks go into the report.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="With --judge: 1 - confidence level of the intervals.")
@metric_options
@click.option("--json", "json_out", help="Write the comparison as JSON here.")
@click.option("--corpus", "corpus_path", help=CORPUS_HELP)
def compare(run_a, run_b, qrels_path, human_path, judge_paths, prediction, folds, mapping_path, audit_path, forbidden_path,
            alpha, ks, metrics, rel_threshold, no_answer, n_boot, seed, json_out, corpus_path):
    from relgrade._errors import InputError
    from relgrade.io._outputs import check_outputs, with_sides

    check_outputs({"--json": json_out}, {"--run-a": run_a, "--run-b": run_b, **with_sides("--labels", qrels_path, "hybrid"),
                                         "--human": human_path,
                                         "--judge": judge_paths, "--mapping": mapping_path,
                                         "--audit": audit_path, "--forbidden": forbidden_path, "--corpus": corpus_path})
    from relgrade.metrics._settings import check_n_boot

    check_n_boot(n_boot)  # on every path: a limit is never accepted and ignored
    if human_path or judge_paths:
        if qrels_path:
            raise InputError("give --labels, or --human with --judge (the PPI++ comparison), not both")
        if not (human_path and judge_paths):
            raise InputError(f"{'--human' if human_path else '--judge'} needs {'--judge' if human_path else '--human'}: "
                             "the PPI++ comparison reads human labels on some queries and judge labels on all")
        if len(run_a) > 1 or len(run_b) > 1 or corpus_path:
            raise InputError("the PPI++ comparison (--human, --judge) takes one --run-a and one --run-b, no --corpus")
        if click.get_current_context().get_parameter_source("n_boot") == click.core.ParameterSource.COMMANDLINE:
            click.echo("note: --n-boot does not apply to the PPI++ comparison (its intervals are PPI++ ones, not "
                       "bootstrapped)")
        from relgrade.cli._compare_ppi import compare_ppi

        compare_ppi(run_a[0], run_b[0], human_path, judge_paths, prediction, folds, mapping_path, forbidden_path, ks,
                    metrics, rel_threshold, no_answer, alpha, seed, json_out, audit_path)
        return
    if qrels_path is None:
        raise InputError("give --labels (labels for both runs), or --human with --judge")
    if len(run_a) > 1 or len(run_b) > 1:
        from relgrade.cli._repeats import compare_repeats_cli

        return compare_repeats_cli(run_a, run_b, qrels_path, ks, metrics, rel_threshold, no_answer, n_boot, seed,
                                   json_out, corpus_path)
    run_a, run_b = run_a[0], run_b[0]
    from relgrade.io import read_qrels, read_run
    from relgrade.metrics import compare as run_compare
    from relgrade.metrics import evaluate as run_evaluate

    from relgrade.metrics import parse_metrics
    from relgrade.metrics._settings import check_n_boot

    chosen = parse_metrics(metrics, ks)
    check_n_boot(n_boot)
    qrels = read_qrels(qrels_path)
    from relgrade.hybrid import is_hybrid, read_hybrid

    judge = read_hybrid(qrels_path).judge() if is_hybrid(qrels_path) else None
    reports = [
        run_evaluate(qrels, read_run(path), chosen, rel_threshold=rel_threshold,
                     no_answer=no_answer, n_boot=n_boot, seed=seed, corpus=corpus_path)
        for path in (run_a, run_b)
    ]
    result = run_compare(*reports, n_boot=n_boot, seed=seed)
    if corpus_path:
        result.settings["corpus"] = reports[0].settings["corpus"]
    click.echo(f"A (baseline) = {run_a}\nB (candidate) = {run_b}")
    say_judge(judge)
    click.echo(result.table())
    if json_out:
        write_report(json_out, {**result.to_dict(), "judge": judge})
        click.echo(f"wrote {json_out}")
