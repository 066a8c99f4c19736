"""``relgrade evaluate`` / ``compare`` with several runs of one configuration (repeats), and the corpus check an
evaluate report gets from the guide's loop (when and at which commit it was made: ``cli._output.write_report``)."""

from __future__ import annotations

import click


def loop_notes(labels_path: str, corpus_path: str | None) -> dict:
    """With a corpus, ``{"corpus_check": ...}`` (its problems printed); the time and commit are recorded by the one
    report writer (:func:`relgrade.cli._output.write_report`)."""
    notes: dict = {}
    if corpus_path:
        from relgrade.io._golden import is_golden
        from relgrade.io._text import read_text, sniff_kind
        from relgrade.io import GoldenSet
        from relgrade.versioning import check_golden

        text = read_text(labels_path, what="labels file")
        if is_golden(labels_path, text, sniff_kind(labels_path, text)):
            check = check_golden(labels_path, corpus_path)
        else:
            check = check_golden(GoldenSet((), source=labels_path), corpus_path, labels=[labels_path])
        if not check.ok:
            click.echo(f"the labels no longer fit the corpus (relgrade check --golden {labels_path} --corpus "
                       f"{corpus_path} lists them all):")
            for line in check.lines(5)[:-1]:
                click.echo(f"  {line}")
        notes["corpus_check"] = check.to_dict()
    return notes


def _reports(paths, qrels, chosen, rel_threshold, no_answer, corpus_path):
    from relgrade.io import read_run
    from relgrade.metrics import evaluate, evaluate_repeats

    runs = [read_run(p) for p in paths]
    kwargs = dict(rel_threshold=rel_threshold, no_answer=no_answer, corpus=corpus_path)
    return evaluate_repeats(qrels, runs, chosen, **kwargs) if len(runs) > 1 else evaluate(qrels, runs[0], chosen, **kwargs)


def _qrels(qrels_path: str):
    from relgrade.io import read_qrels

    return read_qrels(qrels_path)


def evaluate_repeats_cli(run_paths, qrels_path, ks, metrics, rel_threshold, no_answer, json_out, show_failures,
                         corpus_path):
    from relgrade.cli._output import print_notes, write_report
    from relgrade.metrics import parse_metrics

    report = _reports(run_paths, _qrels(qrels_path), parse_metrics(metrics, ks), rel_threshold, no_answer, corpus_path)
    click.echo(f"{len(run_paths)} repeats vs {qrels_path}: {report.n_queries} queries")
    click.echo(report.table())
    st = report.repeats["stability"]
    for row in st["least_stable"][:show_failures]:
        click.echo(f"  {row['query_id']}: top-{st['k']} Jaccard {row['jaccard']:.3f}")
    print_notes(report, show_failures)
    data = {**report.to_dict(), **loop_notes(qrels_path, corpus_path)}
    if json_out:
        write_report(json_out, data)
        click.echo(f"wrote {json_out}")


def compare_repeats_cli(run_a, run_b, qrels_path, ks, metrics, rel_threshold, no_answer, n_boot, seed, json_out,
                        corpus_path):
    from relgrade.cli._output import write_report
    from relgrade.metrics import compare, parse_metrics

    qrels, chosen = _qrels(qrels_path), parse_metrics(metrics, ks)
    a, b = (_reports(p, qrels, chosen, rel_threshold, no_answer, corpus_path) for p in (run_a, run_b))
    result = compare(a, b, n_boot=n_boot, seed=seed)
    click.echo(f"A (baseline) = {', '.join(run_a)}\nB (candidate) = {', '.join(run_b)}")
    click.echo("per query, the mean over each side's repeats; paired over queries:")
    click.echo(result.table())
    for side, rep in (("A", a), ("B", b)):
        if hasattr(rep, "repeats"):
            st = rep.repeats["stability"]
            spread = "; ".join(f"{m} sd {s['sd']:.4f}" for m, s in rep.repeats["metrics"].items())
            click.echo(f"{side}: {rep.repeats['n']} repeats, between-repeat {spread}; top-{st['k']} Jaccard "
                       f"{st['mean_jaccard']:.4f}")
    if json_out:
        data = result.to_dict()
        data["repeats"] = {s: rep.repeats for s, rep in (("a", a), ("b", b)) if hasattr(rep, "repeats")}
        write_report(json_out, data)
        click.echo(f"wrote {json_out}")
