"""``relgrade calibrate`` and ``relgrade sample``: thin commands over :mod:`relgrade.calibration`."""

from __future__ import annotations

import math
from pathlib import Path

import click

from relgrade._defaults import DEFAULT_N_BOOT
from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.cli._options import CHUNKS_HELP, QUERIES_HELP
from relgrade.cli._output import write_text


def _fmt(a) -> str:
    if a is None or not math.isfinite(a.value):
        return "undefined"
    ci = f"  [{a.ci95[0]:.3f}, {a.ci95[1]:.3f}]" if a.ci95 else "  [no CI]"
    return f"{a.value:.3f}{ci}"


def _names(paths: tuple[str, ...]) -> list[str]:
    names: list[str] = []
    for p in paths:
        base = Path(p).stem or "judge"
        name, i = base, 2
        while name in names:
            name, i = f"{base}-{i}", i + 1
        names.append(name)
    return names


def _audit(path: str, loaded):
    """``(AuditVerdict, the audit's dict)`` of ``--audit``, checked against the judge it was made of (one of the
    judges, by model)."""
    from relgrade.calibration._report import render_audit
    from relgrade.hybrid._inputs import read_audit

    errors = []
    for jl in loaded:
        try:
            verdict, data = read_audit(path, model=jl.model)
        except InputError as exc:
            errors.append(exc)
            continue
        try:
            render_audit(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed audit ({type(exc).__name__}: {exc}); re-run 'relgrade audit --json'",
                             path=path) from None
        return verdict, data
    raise errors[0]


@click.command("calibrate")
@click.option("--judge", "judges", multiple=True, required=True, metavar="PATH",
              help="Judge labels: qrels (TREC/CSV/JSONL) or the judge's details JSONL. Repeat for several judges.")
@click.option("--human", required=True, metavar="PATH",
              help="Human labels: TREC qrels, CSV/JSONL (optional 'annotator' column) or a filled 'relgrade sample' file.")
@click.option("--json", "json_out", metavar="OUT", help="Write the full result as JSON.")
@click.option("--report", "report_out", metavar="OUT.html", help="Write a self-contained HTML report.")
@click.option("--scale", default="0-3", show_default=True, help="Declared grade scale, e.g. 0-3 or 0,1,2.")
@click.option("--threshold", default=2, show_default=True, type=int, help="Binary relevance: grade >= threshold.")
@click.option("--n-boot", default=DEFAULT_N_BOOT, show_default=True, type=int, help="Bootstrap resamples of queries (>= 1).")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap and cross-validation seed.")
@click.option("--mapping/--no-mapping", default=True, show_default=True,
              help="Fit a monotone judge-to-human mapping (adopted only if held-out kappa improves beyond noise).")
@click.option("--audit", "audit_path", default=None, metavar="AUDIT.json",
              help="The judge's audit ('relgrade audit --json'): a section of the HTML report, and recorded in the "
                   "JSON, so that '--mapping CAL.json' carries it to estimate, compare and rank-systems.")
def calibrate(judges, human, json_out, report_out, scale, threshold, n_boot, seed, mapping, audit_path):
    """Agreement of judge labels with human labels (kappas, alpha, AUC...), each with a 95% query-bootstrap CI."""
    from relgrade.calibration import (
        agreement, combine_judges, disagreements, fit_mapping, read_human, read_judge, render_combination,
        render_page,
    )
    from relgrade.calibration._inputs import dumps
    import dataclasses

    from relgrade.metrics._settings import check_n_boot

    check_n_boot(n_boot)
    from relgrade.io._outputs import check_outputs

    check_outputs({"--json": json_out, "--report": report_out}, {"--judge": judges, "--human": human,
                                                                   "--audit": audit_path})
    from relgrade.calibration._inputs import judge_terms, parse_scale, span

    scale_t = parse_scale(scale)
    if json_out and Path(json_out).is_dir():
        raise InputError("--json must be a file path, not a directory", path=json_out)
    humans = read_human(human, scale=scale_t)
    if humans.n_empty:
        click.echo(f"skipped {plural(humans.n_empty, 'row')} with an empty grade in {human} (not labeled yet)")
    loaded = [read_judge(p, scale=scale_t, name=n) for p, n in zip(judges, _names(judges))]
    audit = _audit(audit_path, loaded) if audit_path else None
    weights, weight_note = humans.weighting()
    reports, audits = [], []
    for jl in loaded:
        if jl.n_unjudged:
            click.echo(f"{jl.name}: {plural(jl.n_unjudged, 'unjudged pair')} (grade null) excluded")
        j_scale, h_labels, h_annotations, j_threshold, note = judge_terms(jl, humans, scale_t, threshold)
        try:
            rep = agreement(jl.labels, h_labels, scale=j_scale, binary_threshold=j_threshold, expected=jl.expected,
                            annotations=h_annotations or None, n_boot=n_boot, seed=seed, name=jl.name,
                            model=jl.model, n_unjudged=jl.n_unjudged, weights=weights)
        except InputError as exc:
            raise InputError(f"{jl.source}: {exc}") from None
        for extra in (weight_note, note):
            if extra:
                rep = dataclasses.replace(rep, notes=(extra, *rep.notes))
        if mapping:
            fitted = fit_mapping(jl.labels, h_labels, expected=jl.expected, scale=j_scale, n_boot=n_boot, seed=seed)
            rep = dataclasses.replace(rep, mapping=fitted)
        reports.append(rep)
        info = {**humans.info, **jl.info}
        audits.append(disagreements(jl.labels, humans.labels, info=info))
    combo = None
    scales = {jl.scale or scale_t for jl in loaded}
    if len(loaded) > 1 and len(scales) > 1:
        click.echo(f"\nnote: the judges grade on different scales ({', '.join(span(x) for x in sorted(scales))}): "
                   "each is compared with the humans on its own scale; no combination of them is tried")
    elif len(loaded) > 1:
        combo = combine_judges({jl.name: jl.labels for jl in loaded}, humans.labels, scale=scale_t, n_boot=n_boot,
                               seed=seed)

    for rep in reports:
        click.echo(f"\n== {rep.judge}" + (f" ({rep.model})" if rep.model else "")
                   + f": {plural(rep.n_pairs, 'pair')}, {plural(rep.n_queries, 'query', 'queries')}")
        click.echo(f"verdict: {rep.verdict.text}")
        rows = [("kappa", rep.kappa), ("kappa_linear", rep.kappa_linear), ("kappa_quadratic", rep.kappa_quadratic),
                (f"binary_kappa (>= {rep.binary_threshold})", rep.binary_kappa),
                ("krippendorff_alpha", rep.krippendorff_alpha), ("accuracy", rep.accuracy),
                ("leniency (judge - human)", rep.leniency), *rep.continuous.items()]
        for label, value in rows:
            click.echo(f"  {label:<28} {_fmt(value)}")
        ha = rep.human_agreement
        if ha is not None:
            click.echo(f"  human-human kappa ({ha.n_annotators} annotators, {ha.n_pairs} pairs) {_fmt(ha.pairwise_kappa)}")
            if ha.judge_kappa is not None:
                click.echo(f"  judge vs annotators kappa      {_fmt(ha.judge_kappa)}")
        if rep.mapping is not None:
            click.echo(f"  mapping: {rep.mapping.message}")
        for note in rep.notes:
            click.echo(f"  note: {note}")
    if combo is not None:
        click.echo(f"\n== several judges ({combo.n_pairs} pairs graded by all): {combo.recommendation}")
        for c in combo.combinations:
            click.echo(f"  {c.name:<28} {_fmt(c.kappa)}  {c.message}")

    if audit is not None:
        click.echo(f"\n{audit[0].line()}")
    if json_out:
        data = reports[0].to_dict()
        if len(reports) > 1:
            data["judges"] = [r.to_dict() for r in reports]
            data["combination"] = combo.to_dict() if combo is not None else None
        data["n_disagreements"] = len(audits[0])
        if audit is not None:
            data["audit"] = audit[0].to_dict()
        write_text(json_out, dumps(data) + "\n", "--json")
        click.echo(f"\nwrote {json_out}")
    if report_out:
        page = render_page(reports, disagreements=audits, audit=None if audit is None else audit[1],
                           combination_html=render_combination(combo) if combo is not None else "")
        write_text(report_out, page, "--report")
        click.echo(f"wrote {report_out}")
    return 0


@click.command("sample")
@click.option("--judge", "judges", required=True, multiple=True, metavar="PATH",
              help="Judge labels: details JSONL (uses distributions) or qrels. Repeatable with --design active (the "
                   "judges' disagreement counts as uncertainty).")
@click.option("--design", default=None, metavar="queries|strata|active",
              help="queries (the default): whole random queries with every pooled pair, what relgrade estimate "
                   "needs. strata: pairs by judge grade (x entropy tercile), with inclusion weights for calibrate. "
                   "active: whole queries drawn with probabilities from the judges' uncertainty about each query's "
                   "nDCG@10, never below --floor/N; estimate, compare and rank-systems weight them back.")
@click.option("--floor", type=float, default=None,
              help="--design active: the uniform share of each query's probability (default 0.3; raised when needed "
                   "so that a judge whose uncertainty says nothing costs at most about 1% of width): none falls "
                   "below floor/N.")
@click.option("--pilot", metavar="PATH",
              help="--design active: a labeled uniform first batch (a filled --design queries file of the same "
                   "--judge); its queries are kept, graded, and all draws weighted by the mixture of both batches.")
@click.option("--n", "n", type=int, default=None,
              help="How many to draw: QUERIES with --design queries, PAIRS with --design strata, DRAWS of whole "
                   "queries (with replacement) with --design active.")
@click.option("--target-halfwidth", type=float, default=None,
              help="Draw enough for a kappa CI of about this half-width (e.g. 0.05); the queries design converts "
                   "the pairs needed into queries at the observed pairs per query.")
@click.option("--assumed-kappa", type=float, default=0.5, show_default=True,
              help="Kappa assumed when sizing by --target-halfwidth.")
@click.option("--run", "run_paths", multiple=True, metavar="PATH",
              help="Run (RAG JSONL supplies query and chunk texts); with --depth its top K join the pool. Repeatable.")
@click.option("--depth", type=int, default=None,
              help="With --run and --design queries: the run's top K of each query are pooled pairs too.")
@click.option("--corpus", metavar="PATH", help=CHUNKS_HELP)
@click.option("--queries", "queries_path", metavar="PATH", help=QUERIES_HELP)
@click.option("--exclude", metavar="PATH",
              help="Labels already collected (qrels/CSV/JSONL): the queries design skips their queries, "
                   "strata their pairs.")
@click.option("--scale", default="0-3", show_default=True, help="Declared grade scale, e.g. 0-3.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the random draw.")
@click.option("--out", required=True, metavar="items.csv|items.jsonl", help="Where to write the pairs to label.")
def sample(judges, design, floor, pilot, n, target_halfwidth, assumed_kappa, run_paths, depth, corpus, queries_path,
           exclude, scale, seed, out):
    """Choose the pairs humans should label next, as a probability sample (--design queries, strata or active).

    Pool of a query (design queries): every pair of the judge file for it (graded or unjudged), plus the top
    --depth of each --run. OUT is for the annotators, blind to the judge: query_id, query, doc_id, text,
    text_sha256, grade (empty), design, weight (1 / inclusion probability; --design active: 1 / (n q), q the
    query's per-draw probability, with draws and pool columns). The judge's grade and stratum of each pair go
    beside it, to OUT.judge (items.judge.csv for items.csv), for later: calibrate joins the
    filled OUT with the judge's details by (query_id, doc_id).
    """
    from relgrade.calibration import (
        DEFAULT_DESIGN, check_design, check_writable, pairs_per_query, queries_needed, query_pool, read_human,
        read_judge, sample_pairs, sample_size, with_texts, write_sample,
    )

    design = check_design(DEFAULT_DESIGN if design is None else design)
    judge = judges[0]
    if design != "active":
        for option, value in (("--floor", floor), ("--pilot", pilot), ("a second --judge", judges[1:] or None)):
            if value is not None:
                raise InputError(f"{option} applies to --design active only")
    elif target_halfwidth is not None or exclude:
        raise InputError(f"{'--target-halfwidth' if target_halfwidth is not None else '--exclude'} does not apply to "
                         "--design active: give --n (plan it with relgrade estimate --target-width) and a labeled "
                         "uniform batch as --pilot")
    if (n is None) == (target_halfwidth is None):
        raise InputError("give exactly one of --n or --target-halfwidth (e.g. --target-halfwidth 0.05)")
    if depth is not None and (design != "queries" or not run_paths):
        raise InputError("--depth pools a run's top K for --design queries; give it with --run and --design queries")
    from relgrade.io._outputs import check_outputs, with_sides

    check_outputs(with_sides("--out", out, "items"), {"--judge": judges, "--run": run_paths, "--corpus": corpus,
                                                      "--queries": queries_path, "--exclude": exclude,
                                                      "--pilot": pilot})
    check_writable(out)
    from relgrade.calibration._inputs import parse_scale

    scale_t = parse_scale(scale)
    jl = read_judge(judge, scale=scale_t)
    queries: dict[str, str] = {}
    texts: dict[str, str] = {}
    runs = []
    if run_paths:
        from relgrade.io import read_run

        runs = [read_run(p) for p in run_paths]
        for run in runs:
            queries.update(run.queries)
            texts.update(run.texts)
    if corpus:
        from relgrade.io import read_corpus

        texts.update(read_corpus(corpus))
    if queries_path:
        from relgrade.io import read_queries

        queries.update(read_queries(queries_path))
    done = read_human(exclude, scale=scale_t).labels if exclude else None
    if design == "active":
        return _sample_active(judges, jl, scale_t, runs, depth, floor, pilot, n, seed, out, queries, texts)
    pool = None
    if design == "queries":
        pool = query_pool(jl.labels, unjudged=jl.unjudged, runs=runs if depth else (), depth=depth)
    if n is None:
        pairs = sample_size(jl.labels, target_halfwidth, assumed_kappa=assumed_kappa)
        if pool is None:
            n = pairs
            click.echo(f"target half-width ±{target_halfwidth}: about {pairs} pairs (assuming kappa {assumed_kappa})")
        else:
            n = queries_needed(pairs, pool)
            click.echo(f"target half-width ±{target_halfwidth}: about {pairs} pairs (assuming kappa {assumed_kappa}), "
                       f"i.e. {n} queries at the observed {pairs_per_query(pool):.1f} pooled pairs per query")
    drawn = sample_pairs(jl.labels, n=n, design=design, pool=pool,
                         distribution=jl.distribution if design == "strata" else None, exclude=done, seed=seed)
    drawn = with_texts(drawn, queries=queries, texts=texts, info=jl.info)
    write_sample(drawn, out, model=jl.model)
    _summary(drawn, judge=judge, out=out, seed=seed, depth=depth, exclude=exclude)
    return 0


def _sample_active(judges, jl, scale_t, runs, depth, floor, pilot, n, seed, out, queries, texts) -> int:
    """``sample --design active`` (:mod:`relgrade.calibration._active`)."""
    from relgrade.calibration import query_pool, query_uncertainty, read_human, read_judge, sample_active, write_sample
    from relgrade.calibration import with_texts
    from relgrade.label._items import judge_file_for
    from relgrade.stats._weighted import DEFAULT_FLOOR

    jls = [jl] + [read_judge(p, scale=scale_t) for p in judges[1:]]
    merged: dict[str, dict[str, int]] = {}
    for j in reversed(jls):  # the first judge's grade wins in the file beside
        for q, docs in j.labels.items():
            merged.setdefault(q, {}).update(docs)
    pool = query_pool(merged, unjudged=[p for j in jls for p in j.unjudged], runs=runs if depth else (), depth=depth)
    uncertainty = query_uncertainty(jls, pool, runs=runs)
    first = None
    if pilot:
        done = read_human(pilot, scale=scale_t)
        if done.design != "queries":
            raise InputError("the pilot must be a uniform sample (a filled relgrade sample --design queries file)",
                             path=pilot)
        weights = set((done.weights or {}).values())
        first = {"queries": done.labels, "weight": weights.pop() if len(weights) == 1 else None}
    drawn = sample_active(merged, pool, uncertainty, n=n, floor=DEFAULT_FLOOR if floor is None else floor, seed=seed,
                          pilot=first)
    drawn = with_texts(drawn, queries=queries, texts=texts, info=jl.info)
    write_sample(drawn, out, model=jl.model)
    spread = sorted(uncertainty.values())
    click.echo(f"design active: {n} draws (seed {seed}) over {drawn.population_queries} judged queries, probabilities "
               f"from the judges' nDCG@10 spread (median {spread[len(spread) // 2]:.3f}, max {spread[-1]:.3f}), "
               f"uniform share {drawn.floor:.2f} (every query at least that/N; the --floor "
               f"{DEFAULT_FLOOR if floor is None else floor:g}, raised to keep an uninformative judge's cost under 1% "
               f"of width); {drawn.n_queries} distinct queries, "
               f"{plural(drawn.n_pairs, 'pair')}")
    if first:
        click.echo(f"pilot {pilot}: its {len(first['queries'])} queries kept with their grades; every draw weighted "
                   "by the mixture of the uniform pilot and the active batch")
    click.echo("label every pair of a query; relgrade estimate, compare and rank-systems read the design and weights "
               "from the file (keep its design, weight, draws and pool columns)")
    click.echo(f"wrote {plural(drawn.n_pairs, 'pair')} to {out}, blind to the judge; the judge's grades to "
               f"{judge_file_for(out)} (keep it from the annotators)")
    return 0


def _summary(drawn, *, judge: str, out: str, seed: int, depth: int | None, exclude: str | None) -> None:
    no_text = sum(1 for it in drawn.items if not it.text)
    if drawn.design == "queries":
        pooled = "the judge's pairs" + (f" and each run's top {depth}" if depth else "")
        click.echo(f"design queries: {drawn.n_queries} of {drawn.population_queries} queries drawn uniformly at random "
                   f"(seed {seed}), all {drawn.n_pairs} of their pooled pairs ({pooled}); weight "
                   f"{drawn.items[0].weight:g} per pair")
        if drawn.n_queries < drawn.requested:
            click.echo(f"only {drawn.population_queries} queries are available, not the {drawn.requested} requested")
        click.echo("label every pair of a query (in file order, whole queries): relgrade estimate needs whole "
                   "random queries")
    else:
        spread = ", ".join(f"{s.name}: {s.drawn}/{s.size}" for s in drawn.strata)
        click.echo(f"design strata: {drawn.n_pairs} pairs from {len(drawn.strata)} strata over {drawn.n_queries} "
                   f"queries, of {drawn.population_pairs} judged pairs ({spread})")
        if drawn.n_pairs < drawn.requested:
            click.echo(f"only {drawn.population_pairs} judged pairs are available, not the {drawn.requested} requested")
        click.echo("analyse these labels with their weights (relgrade calibrate uses the 'weight' column); they cannot "
                   "feed relgrade estimate (PPI++ needs whole random queries: use --design queries)")
    if no_text:
        click.echo(f"note: {plural(no_text, 'pair has', 'pairs have')} no chunk text; give a JSONL --run with texts or --corpus "
                   "to label them")
    from relgrade.label._items import judge_file_for

    click.echo(f"wrote {plural(drawn.n_pairs, 'pair')} to {out}, blind to the judge; the judge's grades to "
               f"{judge_file_for(out)} (keep it from the annotators)")
    from relgrade.io import read_labels
    from relgrade.label._effort import effort

    recorded = read_labels(exclude, scale=None).labels if exclude else ()  # the times of the labels given so far
    click.echo(effort(drawn.n_pairs, recorded).text())
    click.echo(f"fill the 'grade' column, then: relgrade calibrate --judge {judge} --human {out}")
