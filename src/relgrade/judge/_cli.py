"""``relgrade judge``: pool the runs, grade every pair with an LLM judge, write qrels and details.

Outputs: ``--out QRELS`` gets the judged labels as TREC qrels (``qid 0 docid grade``; CSV or JSONL
by extension), unjudged and failed pairs left out; ``QRELS.details.jsonl`` beside it gets one
object per pooled pair (grade, status, distribution, expected grade, reason, model, prompt hash,
tokens, cost, latency, cached, and the raw answer when unjudged).

Exit codes: 0 when every pair was attempted (or a --max-cost stop), 1 when some pairs failed
(no answer after the retries; re-run to retry them), 2 on a user error, 130 on Ctrl-C. Every
answer paid for is already in the store, whatever the exit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

_LOCAL_NOTE = ("note: {model} is the embedded plumbing default, with near-zero agreement with human labels; "
               "calibrate it (relgrade calibrate) like any judge, or name a real model with --model")


def details_path(out: str | Path) -> Path:
    """Where the details JSONL goes: ``OUT.details.jsonl`` beside ``--out``."""
    return Path(f"{out}.details.jsonl")


def _write_atomic(path: Path, lines) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
    os.replace(tmp, path)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--run", "runs", multiple=True, required=True, help="Run file (TREC or RAG JSONL); repeat to pool several.")
@click.option("--corpus", help="Chunk texts for TREC runs: JSONL (doc_id, text) or TSV doc_id<TAB>text.")
@click.option("--queries", help="Query texts for TREC runs: TSV qid<TAB>query or JSONL.")
@click.option("--model", default=None, help="litellm model, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
              "ollama/llama3. Default: local/gemma3-270m (offline plumbing default, near-zero agreement).")
@click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible server (use with an openai/<name> model).")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key "
              "(default: the provider's, e.g. OPENAI_API_KEY). Keys are never accepted on the command line.")
@click.option("--prompt", default=None, help="graded (0-3), binary (0-1), local, or a prompt file PATH. "
              "Default: graded (local for local/ models).")
@click.option("--judge", "judge_name", default=None, metavar="NAME",
              help="relgrade (default: the --prompt), or a ragas prompt judging one chunk: ragas:context_precision "
              "(verdict 0-1), ragas:context_relevance (rating 0-2). Needs the 'ragas' extra.")
@click.option("--transport", type=click.Choice(["auto", "litellm", "http"]), default="auto", show_default=True,
              help="How calls reach the model: litellm (every provider), http (relgrade's lean OpenAI-compatible client, "
              "openai/ models only), auto (http for an openai/ model with --api-base, else litellm).")
@click.option("--max-grade", type=int, default=None, help="Top of the scale of a custom prompt (default 3; 1 for binary).")
@click.option("--depth", type=int, default=10, show_default=True, help="Pool the top K of every run.")
@click.option("--concurrency", type=int, default=16, show_default=True, help="Requests in flight (a request waiting out a Retry-After or backoff frees its slot).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request before a retry.")
@click.option("--max-attempts", type=int, default=6, show_default=True, help="Attempts per call on 429/5xx/timeouts.")
@click.option("--rpm", type=float, default=None, help="Requests per minute limit.")
@click.option("--tpm", type=float, default=None, help="Tokens per minute limit.")
@click.option("--samples", type=int, default=1, show_default=True, help="Answers per pair (majority, mean and spread recorded).")
@click.option("--temperature", type=float, default=0.0, show_default=True, help="Sampling temperature.")
@click.option("--no-logprobs", is_flag=True, help="Do not ask for token logprobs (no grade distribution).")
@click.option("--retry-unjudged", is_flag=True, help="Ask again for pairs stored as unjudged.")
@click.option("--store", default=None, help="Judgment store (SQLite). Default: .relgrade/judgments.sqlite")
@click.option("--max-cost", type=float, default=None, help="Stop cleanly before spending more than this many USD.")
@click.option("--dry-run", is_flag=True, help="Print pairs, cached pairs, estimated tokens and dollars; call nothing.")
@click.option("--out", default=None, help="Judged qrels to write; details go to OUT.details.jsonl.")
@click.option("--show-unjudged", type=int, default=10, show_default=True, help="How many unjudged pairs to list.")
def judge(runs, corpus, queries, model, api_base, api_key_env, prompt, judge_name, transport, max_grade, depth, concurrency, timeout,
          max_attempts, rpm, tpm, samples, temperature, no_logprobs, retry_unjudged, store, max_cost, dry_run, out,
          show_unjudged):
    """Grade the pooled top-K chunks of one or more runs 0-3 with an LLM judge."""
    from relgrade._errors import InputError
    from relgrade.io import read_corpus, read_queries, read_run
    from relgrade.judge import DEFAULT_MODEL, DEFAULT_STORE, JudgeConfig, estimate, judge_pairs, pool
    from relgrade.judge._call import choose_transport

    if not dry_run and not out:
        raise InputError("--out QRELS is required (or pass --dry-run)")
    if judge_name is not None:
        from relgrade.ragas._judges import judge_prompt

        prompt = judge_prompt(judge_name, prompt, max_grade)
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise InputError(f"--api-key-env {api_key_env}: that environment variable is not set")
    config = JudgeConfig(concurrency=concurrency, timeout=timeout, max_attempts=max_attempts, rpm=rpm, tpm=tpm,
                         samples=samples, temperature=temperature, logprobs=not no_logprobs,
                         retry_unjudged=retry_unjudged, max_cost=max_cost, transport=transport)
    model = model or DEFAULT_MODEL
    choose_transport(model, transport, api_base)  # --transport http with a non-openai/ model: exit 2 before reading runs
    store_path = Path(store) if store else DEFAULT_STORE
    loaded = [read_run(path) for path in runs]
    pairs = pool(loaded, depth, corpus=read_corpus(corpus) if corpus else None,
                 queries=read_queries(queries) if queries else None)
    if out and Path(out).parent and not Path(out).parent.exists():
        raise InputError(f"--out {out}: the folder {Path(out).parent} does not exist")
    local = model.startswith("local/")

    if dry_run:
        plan = estimate(pairs, model=model, prompt=prompt, store=store_path, config=config, max_grade=max_grade)
        dollars = "unknown (model not in litellm's price table)" if plan.cost_usd is None else f"${plan.cost_usd:.4f}"
        click.echo(f"dry run for {model}: {plan.pairs} pooled pairs, {plan.unique} distinct, {plan.cached} cached, "
                   f"{plan.to_judge} to judge ({plan.calls} calls)")
        click.echo(f"estimated tokens: {plan.prompt_tokens} prompt + {plan.completion_tokens} completion; "
                   f"estimated cost {dollars}")
        if local:
            click.echo(_LOCAL_NOTE.format(model=model))
        return 0

    from relgrade.judge._progress import Progress

    on_progress = Progress(len(pairs))  # tqdm on a terminal, else a line every 5 s
    try:
        result = judge_pairs(pairs, model=model, prompt=prompt, store=store_path, config=config, api_base=api_base,
                             api_key_env=api_key_env, max_grade=max_grade, on_progress=on_progress)
    finally:
        on_progress.close()
    _write_outputs(result, out)
    counts = result.counts()
    cost = f"${result.cost_usd:.4f}" + (f" (+{result.cost_unknown} calls of unknown price)" if result.cost_unknown else "")
    click.echo(f"judged {counts['pairs']} pairs with {result.model} (prompt {result.prompt_hash}): "
               f"{counts['judged']} judged ({counts['cached']} paid nothing: stored or duplicate), "
               f"{counts['unjudged']} unjudged, {counts['failed']} failed, {counts['remaining']} not done; "
               f"{result.n_calls} calls, {cost} this run")
    n_labels = sum(len(v) for v in result.qrels().values())
    click.echo(f"wrote {out} ({n_labels} labels) and {details_path(out)}; store {result.store}")
    for j in result.unjudged[:show_unjudged]:
        click.echo(f"  {j.status}: query {j.query_id} doc {j.doc_id}: {j.error}")
    if len(result.unjudged) > show_unjudged:
        click.echo(f"  ... and {len(result.unjudged) - show_unjudged} more (see {details_path(out)})")
    if local:
        click.echo(_LOCAL_NOTE.format(model=result.model))
    if result.stopped == "max_cost":
        click.echo(f"stopped before --max-cost ${max_cost}: {counts['remaining']} pairs remain; re-run with a higher "
                   "--max-cost to finish (nothing paid is lost)")
        return 0
    if result.stopped == "interrupted":
        click.echo(f"interrupted: {counts['remaining']} pairs remain; re-run the same command to finish "
                   "(everything answered is kept)", err=True)
        return 130
    if counts["failed"]:
        click.echo(f"{counts['failed']} pairs failed (no answer after the retries); re-run to retry them", err=True)
        return 1
    return 0


def _write_outputs(result, out: str) -> None:
    from relgrade.io import write_qrels

    tmp = Path(out).with_name(f".{Path(out).name}.{os.getpid()}.tmp{Path(out).suffix}")
    write_qrels(result.qrels(), tmp)
    os.replace(tmp, out)
    rows = [json.dumps(j.to_dict(), ensure_ascii=False) + "\n" for j in result.judgments]
    for p in result.remaining:
        rows.append(json.dumps({"query_id": p.query_id, "doc_id": p.doc_id, "query": p.query, "text": p.text,
                                "grade": None, "status": "remaining", "model": result.model,
                                "prompt_hash": result.prompt_hash}, ensure_ascii=False) + "\n")
    _write_atomic(details_path(out), rows)
