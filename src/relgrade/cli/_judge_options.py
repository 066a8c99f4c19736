"""The options of every command that calls the judge (``judge``, ``audit``): one wording, one check, one dry-run
wall-time line."""

from __future__ import annotations

import os

import click

from relgrade._errors import InputError


def judge_call_options(f):
    """--model, --api-base, --api-key-env, --prompt, --transport, --max-grade, --concurrency, --timeout,
    --max-attempts, --rpm, --tpm, --temperature, --no-logprobs, --store, --lease, --max-cost, --latency."""
    options = [
        click.option("--model", default=None, help="litellm model, e.g. openai/gpt-4o-mini, "
                     "anthropic/claude-3-5-haiku-latest, ollama/llama3. Default: local/gemma3-270m (offline plumbing "
                     "default, near-zero agreement)."),
        click.option("--api-base", "api_base", multiple=True, help="Base URL of an OpenAI-compatible server (use with "
                     "an openai/<name> model). Repeat for a fleet: calls are spread over the servers, --concurrency per "
                     "server, and a failing one is taken out of rotation until it recovers."),
        click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key "
                     "(default: the provider's, e.g. OPENAI_API_KEY). Keys are never accepted on the command line."),
        click.option("--prompt", default=None, help="graded (0-3), binary (0-1), local, or a prompt file PATH. "
                     "Default: graded (local for local/ models)."),
        click.option("--transport", type=click.Choice(["auto", "litellm", "http"]), default="auto", show_default=True,
                     help="How calls reach the model: litellm (every provider), http (relgrade's lean OpenAI-compatible "
                     "client, openai/ models only), auto (http for an openai/ model with --api-base, else litellm)."),
        click.option("--max-grade", type=int, default=None,
                     help="Top of the scale of a custom prompt (default 3; 1 for binary)."),
        click.option("--concurrency", type=int, default=16, show_default=True, help="Requests in flight, per "
                     "--api-base server (a request waiting out a Retry-After or backoff frees its slot)."),
        click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request before a retry."),
        click.option("--max-attempts", type=int, default=6, show_default=True, help="Attempts per call on 429/5xx/timeouts."),
        click.option("--rpm", type=float, default=None, help="Requests per minute limit."),
        click.option("--tpm", type=float, default=None, help="Tokens per minute limit."),
        click.option("--temperature", type=float, default=0.0, show_default=True, help="Sampling temperature."),
        click.option("--no-logprobs", is_flag=True, help="Do not ask for token logprobs (no grade distribution)."),
        click.option("--store", default=None, help="Judgment store: a SQLite file, or postgresql://USER@HOST/DB (or a "
                     "libpq DSN 'host=HOST dbname=DB') for a store shared by a team (password from PGPASSWORD or "
                     "~/.pgpass); a value that looks like any other database URL is an error. Default: "
                     "$RELGRADE_STORE, else .relgrade/judgments.sqlite"),
        click.option("--lease", type=float, default=None, metavar="SECONDS", help="Claim lease: another process takes "
                     "over the pairs of a judge that stopped renewing (killed) after this long. Default: 60."),
        click.option("--max-cost", type=float, default=None, help="Stop cleanly before spending more than this many USD."),
        click.option("--latency", type=float, default=None, metavar="SECONDS", help="Seconds per call for the dry run's "
                     "wall time. Default: the median latency of this model's latest judgments in the store (any pairs, "
                     "up to 1,000), else assumed (0.8 s; 0.4 s for the local judge)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def engine_options(f):
    """--engine, --workers, --ray-address (``relgrade judge``)."""
    options = [
        click.option("--engine", type=click.Choice(["online", "ray", "ray-vllm"]), default="online",
                     show_default=True, help="Where the calls are made: online (this process); ray (an actor pool on "
                     "a Ray cluster, --workers actors of --concurrency calls each, sharing a PostgreSQL --store; needs "
                     "'relgrade[ray]'); ray-vllm (--model vllm/<model> served by vLLM on the cluster's GPUs through "
                     "ray.data.llm, --workers replicas)."),
        click.option("--workers", type=int, default=2, show_default=True,
                     help="Ray workers with --engine ray (actors, one CPU each) or ray-vllm (vLLM replicas)."),
        click.option("--ray-address", default=None, metavar="ADDRESS", help="The Ray cluster for --engine ray (e.g. "
                     "HEAD:6379). Default: $RAY_ADDRESS, else a local Ray started for the run."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def check_engine(engine: str, *, workers: int, ray_address: str | None, store: str | None, use_batch: bool,
                 dry_run: bool) -> None:
    """Before reading any run: --engine ray wants a PostgreSQL store, no --batch, Ray installed (unless a dry run)."""
    if engine == "online":
        for name, value, default in (("--workers", workers, 2), ("--ray-address", ray_address, None)):
            if value != default:
                raise InputError(f"{name} applies to --engine ray; add --engine ray or drop {name}")
        return
    from relgrade.judge.cluster._run import import_ray, require_shared_store

    if use_batch:
        raise InputError(f"--batch sends the pairs to the provider's batch API, --engine {engine} judges them on a "
                         "cluster: choose one")
    if workers < 1:
        raise InputError(f"--workers {workers}: give a whole number of Ray workers, 1 or more")
    require_shared_store(store or None)
    if not dry_run:
        import_ray()


def check_judge_call(model: str | None, api_base: tuple[str, ...], api_key_env: str | None, lease: float | None):
    """``(model, api_base)`` once checked: the key's variable is set, the model a name (the default when None), every
    --api-base a URL, the lease a number of seconds. ``api_base``: None, one URL, or a list for a fleet."""
    from relgrade.judge import DEFAULT_MODEL
    from relgrade.judge.transport._secrets import check_key_places

    check_key_places(model=model, api_base=api_base, api_key_env=api_key_env)  # every command: a key is never shown
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise InputError(f"--api-key-env {api_key_env}: that environment variable is not set")
    if model is not None and (not model.strip() or model != model.strip()):
        raise InputError(f"--model {model!r}: give a litellm model name such as openai/gpt-4o-mini, "
                         f"or leave --model out for the local default {DEFAULT_MODEL}")
    for base in api_base:
        if not base.strip() or not base.strip().lower().startswith(("http://", "https://")):
            raise InputError(f"--api-base must be a URL such as http://127.0.0.1:8000/v1, got {base!r}")
    if lease is not None and not (lease > 0 and lease < float("inf")):
        raise InputError(f"--lease {lease}: give a number of seconds above 0")
    return (DEFAULT_MODEL if model is None else model,
            list(api_base) if len(api_base) > 1 else (api_base[0] if api_base else None))


def wall_time_line(calls: int, tokens: int, *, model: str, transport: str, api_base, concurrency: int,
                   latency: float | None, measured: tuple[float | None, int], rpm: float | None,
                   tpm: float | None) -> str:
    """The dry run's wall-time line (:func:`relgrade.judge.engine._walltime.wall_time`)."""
    from relgrade.judge.engine._walltime import wall_time
    from relgrade.judge.transport._call import choose_transport

    bases = api_base if isinstance(api_base, list) else [api_base]
    return wall_time(calls, local=model.startswith("local/"), transport=choose_transport(model, transport, bases[0]),
                     concurrency=concurrency, servers=len(bases), latency=latency, measured=measured, rpm=rpm,
                     tpm=tpm, tokens=tokens).text(calls)
