"""``relgrade demo``: the whole pipeline offline on bundled data."""

from __future__ import annotations

import click


@click.command()
@click.option("--out", default="relgrade-demo", show_default=True, help="Directory for the report, summary and every intermediate file.")
@click.option("--model", default=None, help="Judge model (any litellm model). Default: the embedded local judge local/gemma3-270m.")
@click.option("--depth", type=click.IntRange(min=1), default=5, show_default=True, help="Judge the top K of each run.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Judge calls in flight (default 1 for local models, 16 otherwise).")
@click.option("--store", default=None, help="Judgment store (SQLite), shared by every run. Default: .relgrade/judgments.sqlite")
@click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible server for an openai/<name> --model "
              "(vLLM, llama.cpp server, Ollama).")
def demo(out, model, depth, concurrency, store, api_base):
    """Retrieve, judge, calibrate, build hybrid labels with PPI++ intervals, evaluate, gate, and write a report.

    A step that fails (no API key, a server that does not answer, an unknown model) stops the demo with one line
    naming the step; every judgment already paid for stays in the store.
    """
    from relgrade.demo._pipeline import ending, run_demo

    result = run_demo(out, model=model, depth=depth, concurrency=concurrency, store=store, say=click.echo,
                      api_base=api_base)
    click.echo("")
    for line in ending(result):
        click.echo(line)
    return 0
