"""``relgrade estimate``, ``relgrade hybrid`` and ``relgrade rank-systems``."""

from __future__ import annotations

from pathlib import Path

import click

from relgrade._defaults import DEFAULT_PREDICTION, PREDICTIONS
from relgrade._errors import InputError
from relgrade._intervals import MEAN_CI, PERCENTILE, PPI
from relgrade.io._outputs import check_outputs, with_sides
from relgrade.cli._options import (AUDIT_HELP, FOLDS_HELP, HUMAN_HELP, JUDGE_HELP, JUDGES_HELP, K_HELP, MAPPING_HELP,
                                   METRIC_HELP, PREDICTION_HELP)
from relgrade.cli._output import write_report
from relgrade.metrics._measures import DEFAULT_RANK_METRIC
from relgrade.metrics._settings import DEFAULT_N_BOOT, DEFAULT_NO_ANSWER, NO_ANSWER_HELP, NO_ANSWER_MODES

MAPPING_SOFT = ("--mapping's adopted grade table is not applied: the soft prediction calibrates the judges' own "
                "grades itself, cross-fitted on the human labels (--prediction hard applies the table; the "
                "calibration's verdict is recorded either way)")


def _forbidden(path: str | None):
    """The forbidden documents of a golden set (or any labels file read by relgrade.io.read_qrels)."""
    if path is None:
        return None
    from relgrade.io import read_qrels

    return read_qrels(path)


def _judged(human_path: str, judge_paths, mapping_path: str | None, threshold: int, *, ppi: bool = False):
    """``(human {qid: {doc: grade}}, [JudgeInput, ...], mapping)``; humans on the first judge's scale."""
    from relgrade.hybrid import on_common_scale, read_human_labels, read_judge_labels, read_mapping, require_random_sample

    mapping = read_mapping(mapping_path) if mapping_path else None
    from relgrade.hybrid import read_design

    human = read_human_labels(human_path)
    design = None
    if ppi:
        require_random_sample(human, human_path)
        design = read_design(human, human_path)
    judges = [read_judge_labels(path, mapping=mapping) for path in judge_paths]
    human, judges[0], note = on_common_scale(human, judges[0], threshold=threshold)
    if note:
        click.echo(f"note: {note}")
    if design is not None:
        click.echo(f"design active: {design.n} draws over {len(design.q)} labeled queries from a pool of {design.pool}, "
                   "each weighted 1/(N q) by its probability q (PPI++ active)")
    return _as_dict(human), judges, mapping, design


def _as_dict(labels) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for lab in labels:
        out.setdefault(lab.query_id, {})[lab.doc_id] = lab.grade
    return out


def _mapping_note(judge, mapping, prediction: str = "hard", *, n_judge: int | None = None, strict: bool = True):
    """Print how the judge's grades were taken and what its calibration says (for ``n_judge`` judge labels in use,
    default all of them); return its verdict (or None). ``strict``: a calibration of another model is an error
    (one judge); else that judge counts as not calibrated (several judges, one calibration file)."""
    from relgrade._verdict import describe, judge_block
    from relgrade._words import plural

    if judge.n_unjudged:
        click.echo(f"{plural(judge.n_unjudged, 'judge pair')} without a grade (null) left unlabeled")
    if mapping is not None and prediction != "hard":
        if mapping.changes_grades:  # a table the soft prediction leaves aside changes no number: nothing to say
            click.echo(f"note: {MAPPING_SOFT}")
    elif mapping is not None:
        click.echo("judge grades mapped with the calibrated mapping" if mapping.adopted
                   else "mapping not adopted by calibration: judge grades used as they are")
    try:
        verdict = None if mapping is None else mapping.verdict(judge.model)
    except InputError:
        if strict:
            raise
        verdict = None
    line = describe(judge_block(len(judge.labels) if n_judge is None else n_judge, verdict))
    if line:
        click.echo(line)
    return verdict


def ppi_inputs(metrics, ks, forbidden_path, human_path, judge_paths, mapping_path, rel_threshold, prediction):
    """What estimate and compare --human read: metrics, forbidden documents, the labels (humans on the first judge's
    scale), and the hard prediction's cross-fitted mapping when an adopted one was fitted on these human labels."""
    from relgrade.metrics import parse_metrics

    chosen = parse_metrics(metrics, ks)
    forbidden = _forbidden(forbidden_path)
    human, jins, mapping, design = _judged(human_path, judge_paths, mapping_path, rel_threshold, ppi=True)
    crossfit, reuse = _crossfit(jins, human, mapping, prediction)
    return chosen, forbidden, human, jins, mapping, crossfit, reuse, design


def ppi_verdicts(jins, mapping, prediction: str):
    """Print how each judge's grades were taken and what its calibration says (:func:`_mapping_note`); return the
    calibration verdict the report records (the first judge's that has one, or None)."""
    verdicts = [_mapping_note(jin, mapping, prediction, strict=len(jins) == 1) for jin in jins]
    return next((v for v in verdicts if v is not None), None)


def ppi_audit(jins, mapping, audit_path: str | None):
    """The judge's audit (``--audit``, else the one ``--mapping`` carries): checked against the judge it was made of
    (among several judges, the one of its model), printed, and returned for the report (None: not audited)."""
    from relgrade.hybrid._inputs import read_audit

    if audit_path is None and mapping is None:
        return None
    errors = []
    for jin in jins:
        prompt_hash = jin.prompt_hash()
        try:
            verdict = (read_audit(audit_path, model=jin.model, prompt_hash=prompt_hash)[0] if audit_path
                       else mapping.audit(jin.model, prompt_hash))
        except InputError as exc:
            errors.append(exc)
            continue
        if verdict is not None:
            click.echo(verdict.line())
        return verdict
    raise errors[0]


def ppi_notes(reuse: str | None, report) -> None:
    """The lines before estimate's and compare --human's tables: cross-fit and prediction."""
    if reuse:
        click.echo(f"note: {reuse}")
    click.echo(prediction_line(report.settings["prediction"]))


def _crossfit(jins, human, mapping, prediction: str, *, allow: bool = True):
    """The hard prediction's cross-fitted mapping (or its refusal); the soft prediction uses raw grades: none."""
    if prediction != "hard":
        return None, None
    from relgrade.hybrid import crossfit_for_ppi

    return crossfit_for_ppi(jins[0], human, mapping, allow=allow)


def prediction_line(desc) -> str:
    """One line saying which prediction was used (the JSON's ``settings.prediction`` has the details)."""
    judges = ", ".join(desc["judges"])
    if desc["kind"] == "hard":
        return f"prediction: hard ({desc['model']}: {judges})"
    return (f"prediction: soft (human-grade probabilities given {judges}, {desc['folds']}-fold cross-fit on the "
            f"human-labeled queries, blended half and half with the metric on the judges' own grades; "
            f"{desc['retrieved_pairs_no_judge_graded']} retrieved pairs no judge graded get the fitted base rate)")


@click.command()
@click.option("--run", "run_path", required=True, help="Run file: TREC run or RAG JSONL.")
@click.option("--human", "human_path", required=True, help=HUMAN_HELP)
@click.option("--judge", "judge_paths", required=True, multiple=True, help=JUDGES_HELP)
@click.option("--prediction", type=click.Choice(PREDICTIONS), default=DEFAULT_PREDICTION, show_default=True,
              help=PREDICTION_HELP)
@click.option("--folds", type=int, default=None, help=FOLDS_HELP)
@click.option("--k", "ks", type=int, multiple=True, help=K_HELP)
@click.option("--metric", "metrics", multiple=True, help=METRIC_HELP)
@click.option("--rel-threshold", type=int, default=1, show_default=True, help="Relevant when grade >= this.")
@click.option("--no-answer", type=click.Choice(NO_ANSWER_MODES), default=DEFAULT_NO_ANSWER, show_default=True,
              help=NO_ANSWER_HELP)
@click.option("--mapping", "mapping_path", default=None, help=MAPPING_HELP)
@click.option("--audit", "audit_path", default=None, metavar="AUDIT.json", help=AUDIT_HELP)
@click.option("--forbidden", "forbidden_path", default=None, metavar="GOLDEN",
              help="Golden set (or labels file) listing forbidden documents: the run's leaks go into the report, "
                   "which 'relgrade gate' needs.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - confidence level of the intervals.")
@click.option("--target-width", type=float, default=None, metavar="W",
              help="Plan the labels: how many human-labeled queries an interval W wide (before clipping to [0, 1]) "
                   "needs without and with the judge, from this pilot's variances.")
@click.option("--json", "json_out", metavar="OUT", help="Write the estimates as JSON here.")
def estimate(run_path, human_path, judge_paths, prediction, folds, ks, metrics, rel_threshold, no_answer, mapping_path,
             audit_path, forbidden_path, alpha, target_width, json_out):
    """Prediction-powered (PPI++) metric estimates: humans labeled some queries, the judge labeled all.

    The means follow --no-answer like every command. The intervals are valid only if the
    human-labeled queries are a random sample of the queries.
    """
    from relgrade.hybrid import estimate as run_estimate
    from relgrade.io import read_run

    check_outputs({"--json": json_out}, {"--run": run_path, "--human": human_path, "--judge": judge_paths,
                                         "--mapping": mapping_path, "--audit": audit_path, "--forbidden": forbidden_path})
    chosen, forbidden, human, jins, mapping, crossfit, reuse, design = ppi_inputs(
        metrics, ks, forbidden_path, human_path, judge_paths, mapping_path, rel_threshold, prediction)
    run = read_run(run_path)
    active_u = None
    if target_width is not None and design is None:  # plan an active second batch from these uniform labels too
        from relgrade.hybrid._active import judge_uncertainty

        active_u = judge_uncertainty(jins, runs=[run])
    calibration = ppi_verdicts(jins, mapping, prediction)
    audit = ppi_audit(jins, mapping, audit_path)
    report = run_estimate(run, human, jins, chosen, rel_threshold=rel_threshold, no_answer=no_answer, alpha=alpha,
                          forbidden=forbidden, crossfit=crossfit, prediction=prediction, folds=folds,
                          target_width=target_width, calibration=calibration, audit=audit, design=design,
                          active_u=active_u)
    ppi_notes(reuse, report)
    click.echo(f"run {run_path}")
    click.echo(report.table())
    notes: dict[str, list[str]] = {}  # each note once, with the metrics it concerns
    for name, e in report.estimates.items():
        if e.effective_n is not None and not report.worth_withheld:
            click.echo(f"{name}: the judge was worth {e.effective_n:.0f} human-labeled queries "
                       f"(~{e.effective_labels:.0f} human labels) where {e.n_labeled} were labeled")
        if e.plan is not None:
            click.echo(e.plan.sentence(name, e.n_labeled, alpha))
        if e.note:
            notes.setdefault(e.note, []).append(name)
    for note, names in notes.items():
        click.echo(f"{', '.join(names)}: note: {note}")
    report_tail(report, mapping, mapping_path, json_out, "relgrade gate")


def report_tail(report, mapping, mapping_path: str | None, json_out: str | None, gate: str) -> None:
    """The notes, the leaks (or why there is no leak check) and the JSON, as estimate and compare --human end."""
    for note in report.notes:
        click.echo(f"note: {note}")
    if report.leaks:
        n = len(report.leaks)
        click.echo(f"LEAKS: {n} forbidden {'document' if n == 1 else 'documents'} retrieved in the top "
                   f"{report.settings['leak_k']}:")
        for row in report.leaks[:5]:
            click.echo(f"  {row['query_id']}: {row['doc_id']} at rank {row['rank']}")
    elif report.leaks is None:
        click.echo(f"no --forbidden: the report carries no leak check, and '{gate}' fails on it unless told "
                   "--no-tenants (the runs serve no tenants)")
    if json_out:
        data = report.to_dict()
        data["settings"]["mapping"] = None if mapping is None else {"path": mapping_path, "adopted": mapping.adopted}
        write_report(json_out, data)
        click.echo(f"wrote {json_out}")


@click.command()
@click.option("--human", "human_path", default=None, help=HUMAN_HELP)
@click.option("--judge", "judge_path", default=None, help=JUDGE_HELP)
@click.option("--corpus", "corpus_path", default=None, help="Current corpus (JSONL doc_id,text or TSV): stale-label check.")
@click.option("--run", "run_paths", multiple=True, help="RAG JSONL run(s) with chunk texts, for the stale check without a corpus.")
@click.option("--mapping", "mapping_path", default=None, help=MAPPING_HELP)
@click.option("--out", required=True, metavar="HYBRID.jsonl", help="Where to write the hybrid label set (stale labels go to OUT.stale.jsonl).")
@click.option("--show-stale", type=int, default=5, show_default=True, help="How many stale labels to print.")
@click.option("--threshold", type=int, default=2, show_default=True,
              help="With a binary judge (details scale [0, 1]): human grades >= this count as relevant.")
def hybrid(human_path, judge_path, corpus_path, run_paths, mapping_path, out, show_stale, threshold):
    """Merge human and judge labels with provenance; human beats judge; stale labels set apart."""
    from relgrade.hybrid import (
        merge_labels, on_common_scale, read_human_labels, read_judge_labels, read_mapping, write_hybrid,
    )

    if not human_path and not judge_path:
        raise InputError("give --human, --judge or both")
    check_outputs(with_sides("--out", out, "hybrid"),
                  {"--human": human_path, "--judge": judge_path, "--corpus": corpus_path, "--run": run_paths,
                   "--mapping": mapping_path})
    if Path(out).suffix.lower() not in {".jsonl", ".ndjson"}:
        raise InputError("--out must end in .jsonl (one label per line with its provenance)", path=out)
    mapping = read_mapping(mapping_path) if mapping_path else None
    human = read_human_labels(human_path) if human_path else []
    jin = read_judge_labels(judge_path, mapping=mapping) if judge_path else None
    if jin is not None:
        human, jin, note = on_common_scale(human, jin, threshold=threshold)
        if note:
            click.echo(f"note: {note}")
    texts, missing_is_stale = None, False
    if corpus_path:
        from relgrade.io import read_corpus

        texts, missing_is_stale = read_corpus(corpus_path), True
    elif run_paths:
        from relgrade.io import read_run

        texts = {}
        for path in run_paths:
            texts.update(read_run(path).texts)
        if not texts:
            raise InputError("the --run files hold no chunk texts; pass --corpus or a RAG JSONL run with texts")
    verdict = None if mapping is None or jin is None else mapping.verdict(jin.model)
    merged = merge_labels(human, jin.labels if jin else (), texts=texts, missing_is_stale=missing_is_stale, source=out,
                          calibration=verdict)
    if jin is not None:
        _mapping_note(jin, mapping, n_judge=merged.counts()["judge"])
    if texts is None:
        click.echo("no --corpus or --run: labels are not checked for staleness")
    write_hybrid(merged, out)
    click.echo(merged.summary())
    for s in merged.stale[:show_stale]:
        who = s.label.annotator or s.label.model or s.label.source
        click.echo(f"  stale: {s.label.query_id} / {s.label.doc_id} ({s.label.source} {who}): {s.reason}")
    from relgrade.hybrid import calibration_path_for, stale_path_for

    sides = [f"{len(merged.stale)} stale labels to {stale_path_for(out)}"] if merged.stale else []
    sides += [f"the judge's calibration to {calibration_path_for(out)}"] if verdict is not None else []
    click.echo(f"wrote {out}" + (f" and {' and '.join(sides)}" if sides else ""))


@click.command()
@click.option("--run", "run_paths", multiple=True, required=True, help="Run file of one system (repeat, at least 2).")
@click.option("--human", "human_path", required=True, help=HUMAN_HELP)
@click.option("--judge", "judge_paths", required=True, multiple=True, help=JUDGES_HELP)
@click.option("--prediction", type=click.Choice(PREDICTIONS), default=DEFAULT_PREDICTION, show_default=True,
              help=PREDICTION_HELP)
@click.option("--folds", type=int, default=None, help=FOLDS_HELP)
@click.option("--metric", "metrics", multiple=True,
              help=f"Metric to rank by (repeatable or comma-separated). Default: {DEFAULT_RANK_METRIC}.")
@click.option("--rel-threshold", type=int, default=1, show_default=True, help="Relevant when grade >= this.")
@click.option("--no-answer", type=click.Choice(NO_ANSWER_MODES), default=DEFAULT_NO_ANSWER, show_default=True,
              help=NO_ANSWER_HELP)
@click.option("--mapping", "mapping_path", default=None, help=MAPPING_HELP)
@click.option("--audit", "audit_path", default=None, metavar="AUDIT.json", help=AUDIT_HELP)
@click.option("--n-boot", type=int, default=DEFAULT_N_BOOT, show_default=True, help=f"Bootstrap resamples for the Kendall tau CIs ({PERCENTILE.name}, >= 1); the pairwise "
              f"differences use {MEAN_CI} (human, judge) and {PPI.name} intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and the permutations.")
@click.option("--json", "json_out", metavar="OUT", help="Write rankings, taus and pairs as JSON here.")
def rank_systems(run_paths, human_path, judge_paths, prediction, folds, metrics, rel_threshold, no_answer, mapping_path,
                 audit_path, n_boot, seed, json_out):
    """Rank systems under human, judge and PPI++ labels: Kendall tau with CIs, flipped pairs, paired tests."""
    from relgrade.hybrid import rank_systems as run_rank
    from relgrade.io import read_run
    from relgrade.metrics import parse_metrics
    from relgrade.metrics._settings import check_n_boot

    if len(run_paths) < 2:
        raise InputError(f"--run: ranking systems needs at least 2 runs, got {len(run_paths)}")
    check_n_boot(n_boot)
    check_outputs({"--json": json_out}, {"--run": run_paths, "--human": human_path, "--judge": judge_paths,
                                         "--mapping": mapping_path, "--audit": audit_path})
    chosen = parse_metrics(metrics or [DEFAULT_RANK_METRIC])
    human, jins, mapping, design = _judged(human_path, judge_paths, mapping_path, rel_threshold, ppi=True)
    _crossfit(jins, human, mapping, prediction, allow=False)  # the hard PPI ranking cannot cross-fit a mapping
    runs = {}
    stems = [Path(p).stem for p in run_paths]
    for path, stem in zip(run_paths, stems):
        name = stem if stems.count(stem) == 1 else path
        if name in runs:
            raise InputError(f"--run {path} is given twice", path=path)
        runs[name] = read_run(path, name=name)
    verdict = ppi_verdicts(jins, mapping, prediction)
    audit = ppi_audit(jins, mapping, audit_path)
    results = [run_rank(runs, human, jins, m, rel_threshold=rel_threshold, no_answer=no_answer, n_boot=n_boot,
                        seed=seed, prediction=prediction, folds=folds, design=design) for m in chosen]
    if results:
        click.echo(prediction_line(results[0].settings["prediction"]))
    for r in results:
        click.echo(r.table())
    if json_out:
        from relgrade._verdict import judge_block

        write_report(json_out, {"metrics": {r.metric: r.to_dict() for r in results},
                                "judge": judge_block(sum(len(j.labels) for j in jins), verdict, audit)})
        click.echo(f"wrote {json_out}")
