"""``relgrade audit``: probe the judge for biases on a sample of the user's own pairs (:mod:`relgrade.audit`).

Exit codes: 0 when no probe shows a bias, 1 when one does (or some calls failed: re-run to finish), 2 on a user
error, 130 on Ctrl-C. Every answer paid for is in the store, whatever the exit, and a re-run reuses it.
"""

from __future__ import annotations

import click

from relgrade._words import plural
from relgrade.audit._probes import DEFAULT_N, PROBES
from relgrade.audit._stats import DEFAULT_MIN_SHIFT
from relgrade.cli._judge_options import check_judge_call, judge_call_options, wall_time_line
from relgrade.cli._options import CHUNKS_HELP, QUERIES_HELP

_PROBES_HELP = "; ".join(f"{p.name}: {p.what}" for p in PROBES)


@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               help="Audit the judge for biases: perturb a random sample of the runs' pairs and have the judge grade "
                    f"each perturbed passage beside the original. Probes: {_PROBES_HELP}. Each probe's mean grade "
                    "shift gets a 95% interval clustered by query and simultaneous over the probes; a bias is an "
                    "interval that excludes 0 with a shift of at least --min-shift. Exit 1 when a probe shows a bias.")
@click.option("--run", "runs", multiple=True, help="Run file (TREC or RAG JSONL) whose pairs are sampled; repeat to "
              "pool several. Required.")
@click.option("--corpus", help=CHUNKS_HELP)
@click.option("--queries", help=QUERIES_HELP)
@judge_call_options
@click.option("--depth", type=int, default=10, show_default=True, help="Pool the top K of every run.")
@click.option("--n", "n_pairs", type=int, default=DEFAULT_N, show_default=True,
              help="Pairs to sample (distinct query and passage). The same --seed with a larger --n keeps the first "
                   "pairs, so their judgments come from the store.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample and of the padding.")
@click.option("--probe", "probes", multiple=True, metavar="NAME",
              help=f"Probe to run (repeatable or comma-separated: {', '.join(p.name for p in PROBES)}). Default: all. "
                   "identity always runs (the others are compared with it); position brings length.")
@click.option("--min-shift", type=float, default=DEFAULT_MIN_SHIFT, show_default=True,
              help="Smallest mean grade shift called a bias.")
@click.option("--system-model", "system_models", multiple=True, metavar="MODEL",
              help="The model behind the system's reranker or generator (repeatable): a warning when it shares a model "
                   "family with the judge (judge-based evaluation of that system is circular).")
@click.option("--dry-run", is_flag=True, help="Print the calls per probe, tokens, dollars and wall time; call nothing.")
@click.option("--json", "json_out", metavar="OUT", help="Write the audit as JSON here (estimate, compare and "
              "rank-systems take it with --audit; calibrate --audit puts it in its HTML report).")
def audit(runs, corpus, queries, model, api_base, api_key_env, prompt, transport, max_grade, concurrency, timeout,
          max_attempts, rpm, tpm, temperature, no_logprobs, store, lease, max_cost, latency, depth, n_pairs, seed,
          probes, min_shift, system_models, dry_run, json_out):
    from relgrade._errors import InputError
    from relgrade.audit import circularity, design_audit, price_audit, run_audit
    from relgrade.io import read_corpus, read_queries, read_run
    from relgrade.io._outputs import check_outputs
    from relgrade.judge import JudgeConfig, pool
    from relgrade.judge._prompt import resolve
    from relgrade.judge.store._open import open_store, store_spec
    from relgrade.judge.transport._call import choose_transport

    if not runs:
        raise InputError("--run is required: pass at least one run file")
    config = JudgeConfig(concurrency=concurrency, timeout=timeout, max_attempts=max_attempts, rpm=rpm, tpm=tpm,
                         temperature=temperature, logprobs=not no_logprobs, max_cost=max_cost, transport=transport)
    model, api_base = check_judge_call(model, api_base, api_key_env, lease)
    resolve(model, prompt, max_grade)  # a wrong --prompt or --max-grade: exit 2 before reading runs or opening a store
    choose_transport(model, transport, api_base[0] if isinstance(api_base, list) else api_base)
    if latency is not None and not (dry_run and 0 < latency < float("inf")):
        raise InputError(f"--latency {latency}: give the seconds per call (above 0) of a --dry-run's wall-time "
                         "estimate, with --dry-run")
    if not (min_shift >= 0 and min_shift < float("inf")):
        raise InputError(f"--min-shift must be a finite number of grades >= 0 (e.g. {DEFAULT_MIN_SHIFT}), got {min_shift}")
    for system in system_models:
        if not system.strip():
            raise InputError("--system-model must name a model, e.g. openai/gpt-4o, got ''")
    prompt_file = prompt if prompt is not None and prompt not in ("graded", "binary", "local") else None
    check_outputs({"--json": json_out}, {"--run": runs, "--corpus": corpus, "--queries": queries,
                                         "--prompt": prompt_file}, {"--store": store_spec(store or None)})
    pairs = pool([read_run(path) for path in runs], depth, corpus=read_corpus(corpus) if corpus else None,
                 queries=read_queries(queries) if queries else None)
    design = design_audit(pairs, n=n_pairs, seed=seed, probes=list(probes) or None)
    for c in circularity(model, system_models):
        click.echo(c.line())
    local = model.startswith("local/")
    if dry_run:
        plan = price_audit(design, model=model, prompt=prompt, store=store or None, config=config, max_grade=max_grade)
        for line in plan.lines():
            click.echo(line)
        click.echo(wall_time_line(plan.calls, plan.prompt_tokens + plan.completion_tokens, model=model,
                                  transport=transport, api_base=api_base, concurrency=concurrency, latency=latency,
                                  measured=(plan.latency_s, plan.latency_n), rpm=rpm, tpm=tpm))
        if local:
            click.echo(f"note: {model} is the embedded plumbing default: its audit tests the plumbing, not a judge")
        return 0

    from relgrade.judge.engine._progress import Progress

    db, _ = open_store(store or None, lease_s=lease)
    progress = Progress(design.n_judgments, desc="auditing")
    try:
        report = run_audit(design, model=model, prompt=prompt, store=db, config=config, api_base=api_base,
                           api_key_env=api_key_env, max_grade=max_grade, min_shift=min_shift,
                           system_models=system_models, on_progress=progress)
    finally:
        db.close()
        progress.close()
    click.echo(report.table())
    cost = f"${report.cost_usd:.4f}" + (f" (+{report.cost_unknown} calls of unknown price)" if report.cost_unknown else "")
    answers = ", ".join(f"{kind} {a['calls']}" for kind, a in report.answers.items())
    click.echo(f"this run: {plural(report.n_calls, 'call')}, {cost}; calls behind the answers read (1 each, 2 with a "
               f"repair; paid now or earlier): {answers}; store {report.store}")
    if json_out:
        from relgrade.cli._output import write_json

        write_json(json_out, report.to_dict())
        click.echo(f"wrote {json_out}")
    if report.stopped == "max_cost":
        click.echo(f"stopped before --max-cost ${max_cost}: {plural(report.missing, 'answer is', 'answers are')} "
                   "missing and the probes rest on the pairs answered; re-run with a higher --max-cost to finish "
                   "(nothing paid is lost)")
    if report.stopped == "interrupted":
        click.echo("interrupted: re-run the same command to finish (everything answered is kept)", err=True)
        return 130
    if report.failed:
        click.echo(f"{plural(report.failed, 'pair')} failed (no answer after the retries); re-run to retry them",
                   err=True)
    if report.biases:
        click.echo(f"BIAS: {', '.join(report.biases)}: the judge's grades move with what the "
                   f"{'probe changes' if len(report.biases) == 1 else 'probes change'}, not with relevance")
    if local:
        click.echo(f"note: {model} is the embedded plumbing default: its audit tests the plumbing, not a judge")
    return report.exit_code
