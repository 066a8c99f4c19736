"""``relgrade judge``: pool the runs, grade every pair with an LLM judge, write qrels and details.

Outputs: ``--out QRELS`` gets the judged labels as TREC qrels and ``QRELS.details.jsonl`` beside it one object per
pooled pair (:mod:`relgrade.judge._outputs`).

Exit codes: 0 when every pair was attempted (or a --max-cost stop), 1 when some pairs failed
(no answer after the retries; re-run to retry them), 2 on a user error, 130 on Ctrl-C. Every
answer paid for is already in the store, whatever the exit.
"""

from __future__ import annotations

from pathlib import Path

import click

from relgrade._words import plural
from relgrade.cli._judge_options import (
    check_engine, check_judge_call, engine_options, judge_call_options, wall_time_line,
)
from relgrade.cli._options import CHUNKS_HELP, QUERIES_HELP

_LOCAL_NOTE = ("note: {model} is the embedded plumbing default, with near-zero agreement with human labels; "
               "calibrate it (relgrade calibrate) like any judge, or name a real model with --model")


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a prompt name too long for a path, or holding a NUL
        return False


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--run", "runs", multiple=True, help="Run file (TREC or RAG JSONL); repeat to pool several. Required.")
@click.option("--corpus", help=CHUNKS_HELP)
@click.option("--queries", help=QUERIES_HELP)
@judge_call_options
@click.option("--judge", "judge_name", default=None, metavar="NAME",
              help="relgrade (default: the --prompt), or a ragas prompt judging one chunk: ragas:context_precision "
              "(verdict 0-1), ragas:context_relevance (rating 0-2). Needs the 'ragas' extra.")
@click.option("--depth", type=int, default=10, show_default=True, help="Pool the top K of every run.")
@click.option("--samples", type=int, default=1, show_default=True, help="Answers per pair (majority, mean and spread recorded).")
@click.option("--retry-unjudged", is_flag=True, help="Ask again for pairs stored as unjudged.")
@click.option("--dry-run", is_flag=True, help="Print the pooled pairs, those whose answer is already in the store, "
              "estimated tokens, dollars, wall time and the human labeling a first sample asks; call nothing.")
@click.option("--out", default=None, help="Judged qrels to write; details go to OUT.details.jsonl.")
@click.option("--show-unjudged", type=int, default=10, show_default=True, help="How many unjudged pairs to list.")
@click.option("--batch", "use_batch", is_flag=True, help="Submit the pairs not in the store as provider batches (openai/, "
              "anthropic/: about half price, within 24 h); a re-run resumes polling the same batches.")
@click.option("--batch-status", is_flag=True, help="List the batches of the store still pending, and exit.")
@click.option("--poll-interval", type=float, default=60.0, show_default=True, help="Seconds between batch status polls.")
@click.option("--batch-size", type=int, default=50_000, show_default=True, help="Requests per batch at most.")
@engine_options
@click.option("--batch-fallback", type=click.Choice(["batch", "direct"]), default="batch", show_default=True,
              help="Lines of a failed or expired batch: resubmit them as a batch, or judge them by direct calls.")
def judge(runs, corpus, queries, model, api_base, api_key_env, prompt, judge_name, transport, max_grade, depth, concurrency, timeout,
          max_attempts, rpm, tpm, samples, temperature, no_logprobs, retry_unjudged, store, lease, max_cost, dry_run,
          latency, out, show_unjudged, use_batch, batch_status, poll_interval, batch_size, batch_fallback, engine, workers, ray_address):
    """Grade the pooled top-K chunks of one or more runs 0-3 with an LLM judge."""
    from relgrade._errors import InputError
    from relgrade.io import read_corpus, read_queries, read_run
    from relgrade.judge import JudgeConfig, estimate, judge_pairs, pool
    from relgrade.judge._outputs import check_writable, details_path, judged_line, write_outputs
    from relgrade.judge.store._open import open_store
    from relgrade.judge.transport._call import choose_transport
    from relgrade.judge.transport._secrets import check_key_places

    check_key_places(model=model, api_base=api_base, api_key_env=api_key_env)  # a key where a name goes: never shown
    if batch_status:
        from relgrade.cli._judge_batch import print_batch_status

        return print_batch_status(store, model)
    if not runs:
        raise InputError("--run is required: pass at least one run file")
    check_engine(engine, workers=workers, ray_address=ray_address, store=store, use_batch=use_batch, dry_run=dry_run)
    if not dry_run and not out:
        raise InputError("--out QRELS is required (or pass --dry-run)")
    if judge_name is not None:
        from relgrade.ragas._judges import judge_prompt

        prompt = judge_prompt(judge_name, prompt, max_grade)
    config = JudgeConfig(concurrency=concurrency, timeout=timeout, max_attempts=max_attempts, rpm=rpm, tpm=tpm,
                         samples=samples, temperature=temperature, logprobs=not no_logprobs,
                         retry_unjudged=retry_unjudged, max_cost=max_cost, transport=transport)
    n_bases = len(api_base)
    model, api_base = check_judge_call(model, api_base, api_key_env, lease)
    if use_batch and n_bases > 1:
        raise InputError("--batch takes one --api-base (a provider batch goes to one server); drop the others")
    if use_batch:
        from relgrade.judge.batch._options import check_batch_options

        check_batch_options(poll_interval=poll_interval, batch_size=batch_size, fallback=batch_fallback)
    choose_transport(model, transport, api_base[0] if isinstance(api_base, list) else api_base)  # --transport http with a non-openai/ model: exit 2 before reading runs
    if out:
        from relgrade.io._outputs import check_outputs, with_sides
        from relgrade.judge.store._open import store_spec

        prompt_file = prompt if isinstance(prompt, str) and _is_file(prompt) else None
        check_outputs(with_sides("--out", out, "judge"),
                      {"--run": runs, "--corpus": corpus, "--queries": queries, "--prompt": prompt_file},
                      {"--store": store_spec(store or None)})
    loaded = [read_run(path) for path in runs]
    pairs = pool(loaded, depth, corpus=read_corpus(corpus) if corpus else None,
                 queries=read_queries(queries) if queries else None)
    if out:
        check_writable(Path(out), "--out")
        check_writable(details_path(out), "--out (its details file)")
        if Path(out).suffix.lower() not in {".csv", ".jsonl", ".ndjson", ".json"}:
            from relgrade.io._qrels import check_trec_ids  # before paying: TREC qrels cannot hold ids with spaces

            check_trec_ids([x for p in pairs for x in (p.query_id, p.doc_id)], path=out)
    local = model.startswith("local/")
    if latency is not None and not (dry_run and 0 < latency < float("inf")):
        raise InputError(f"--latency {latency}: give the seconds per call (above 0) of a --dry-run's wall-time "
                         "estimate, with --dry-run")

    if dry_run:
        plan = estimate(pairs, model=model, prompt=prompt, store=store or None, config=config, max_grade=max_grade)
        dollars = "unknown (model not in litellm's price table)" if plan.cost_usd is None else f"${plan.cost_usd:.4f}"
        click.echo(f"dry run for {model}: {plan.pairs} pooled pairs, {plan.unique} distinct, {plan.cached} from the "
                   f"store, {plan.to_judge} to judge ({plural(plan.calls, 'call')})")
        click.echo(f"estimated tokens: {plan.prompt_tokens} prompt + {plan.completion_tokens} completion; "
                   f"estimated cost {dollars}")
        click.echo(wall_time_line(plan.calls, plan.prompt_tokens + plan.completion_tokens, model=model,
                                  transport=transport, api_base=api_base, latency=latency,
                                  concurrency=concurrency * (workers if engine != "online" else 1),
                                  measured=(plan.latency_s, plan.latency_n), rpm=rpm, tpm=tpm))
        from relgrade.cli._judge_batch import print_batch_price

        print_batch_price(plan, model)
        from relgrade.label._effort import first_sample_line

        click.echo(first_sample_line(pairs))
        if local:
            click.echo(_LOCAL_NOTE.format(model=model))
        return 0

    from relgrade.judge.engine._progress import Progress

    db, _ = open_store(store or None, lease_s=lease)  # opened (and checked writable) before any call
    from relgrade.judge.batch._run import in_pending_batches, pending_batches_error

    if not use_batch:  # one rule for pairs a pending batch holds, found now or during the run (pending_batches_error)
        n = in_pending_batches(pairs, model=model, prompt=prompt, store=db, config=config, max_grade=max_grade)
        if n:
            db.close()
            raise pending_batches_error(n, str(db.path))
    on_progress = Progress(len(pairs))  # tqdm on a terminal, else a line every 5 s
    try:
        if use_batch:
            from relgrade.judge.batch._run import judge_batch
            from relgrade.cli._judge_batch import PollPrinter

            result = judge_batch(pairs, model=model, prompt=prompt, store=db, config=config, api_base=api_base,
                                 api_key_env=api_key_env, max_grade=max_grade, poll_interval=poll_interval,
                                 batch_size=batch_size, fallback=batch_fallback,
                                 on_poll=PollPrinter(poll_interval))
        elif engine == "ray":
            from relgrade.judge.cluster import judge_pairs_ray

            result = judge_pairs_ray(pairs, model=model, prompt=prompt, store=store or None, config=config, api_base=api_base,
                                     api_key_env=api_key_env, max_grade=max_grade, on_progress=on_progress,
                                     workers=workers, ray_address=ray_address, lease_s=lease)
        elif engine == "ray-vllm":
            from relgrade.judge.cluster import judge_pairs_vllm

            result = judge_pairs_vllm(pairs, model=model, prompt=prompt, store=store or None, config=config,
                                      max_grade=max_grade, on_progress=on_progress, workers=workers,
                                      ray_address=ray_address, lease_s=lease)
        else:
            result = judge_pairs(pairs, model=model, prompt=prompt, store=db, config=config, api_base=api_base,
                                 api_key_env=api_key_env, max_grade=max_grade, on_progress=on_progress)
    finally:
        db.close()
        on_progress.close()
    if result.in_batches:  # submitted by another process meanwhile: the same rule as at start-up
        raise pending_batches_error(result.in_batches, result.store, paid=result.n_calls)
    write_outputs(result, out)
    counts = result.counts()
    cost = f"${result.cost_usd:.4f}" + (f" (+{result.cost_unknown} calls of unknown price)" if result.cost_unknown else "")
    click.echo(f"judged {plural(counts['pairs'], 'pair')} with {result.model} (prompt {result.prompt_hash}): "
               f"{judged_line(result)}; {plural(result.n_calls, 'call')}, {cost} this run"
               + (" (batch prices)" if use_batch else ""))
    n_labels = sum(len(v) for v in result.qrels().values())
    conflicts = result.conflicts()
    if conflicts:
        (qid, doc), _ = next(iter(conflicts.items()))
        click.echo(f"note: {len(conflicts)} doc ids were shown with different texts by different runs (e.g. doc {doc} "
                   f"of query {qid}): each text is judged and in the details (text_sha256, runs); the qrels hold the "
                   "grade of the first run's text. Give such chunks their own ids to evaluate every run on its text.")
    click.echo(f"wrote {out} ({plural(n_labels, 'label')}) and {details_path(out)}; store {result.store}")
    for j in result.unjudged[:show_unjudged]:
        click.echo(f"  {j.status}: query {j.query_id} doc {j.doc_id}: {j.error}")
    if len(result.unjudged) > show_unjudged:
        click.echo(f"  ... and {len(result.unjudged) - show_unjudged} more (see {details_path(out)})")
    if local:
        click.echo(_LOCAL_NOTE.format(model=result.model))
    if result.stopped == "max_cost":
        click.echo(f"stopped before --max-cost ${max_cost}: {plural(counts['remaining'], 'pair remains', 'pairs remain')}; "
                   "re-run with a higher "
                   "--max-cost to finish (nothing paid is lost)")
        return 0
    if result.stopped == "interrupted":
        click.echo(f"interrupted: {plural(counts['remaining'], 'pair remains', 'pairs remain')}; re-run the same command "
                   "to finish "
                   "(everything answered is kept" + ("; submitted batches keep running and are collected by the "
                                                     "next run)" if use_batch else ")"), err=True)
        return 130
    if counts["failed"]:
        click.echo(f"{counts['failed']} pairs failed (no answer after the retries); re-run to retry them", err=True)
        return 1
    return 0
