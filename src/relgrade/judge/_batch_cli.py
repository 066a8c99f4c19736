"""What ``relgrade judge`` prints for ``--batch``, ``--batch-status`` and the batch line of ``--dry-run``."""

from __future__ import annotations

import time

import click


def print_batch_price(plan, model: str) -> None:
    """The dry run's second price: the same tokens at batch prices."""
    from relgrade.judge._batch import batch_cost

    cost, source = batch_cost(plan, model)
    if cost is None:
        click.echo("estimated cost with --batch: unknown (model not in litellm's price table)")
        return
    online = plan.cost_usd
    ratio = f", {cost / online:.0%} of online" if online else ""
    click.echo(f"estimated cost with --batch: ${cost:.4f} ({source} batch prices{ratio}; results within 24 h)")


def print_batch_status(store, model: str | None) -> int:
    """``--batch-status``: one line per open batch of the store's ledger (``--store``, else ``$RELGRADE_STORE``, else
    the default file); the store is named as every message names it (a URL without its password)."""
    from relgrade.judge._batch import batch_status
    from relgrade.judge._secrets import collect_secrets, redact
    from relgrade.judge._store import store_name

    rows = batch_status(store or None, model=model)
    name = store_name(store or None)
    if not rows:
        click.echo(f"no pending batches in {name}")
        return 0
    click.echo(f"{len(rows)} pending batches in {name}:")
    secrets = collect_secrets()  # a ledger written by an older relgrade may hold an id a provider built from the key
    for r in rows:
        age = time.time() - r.created
        click.echo(redact(f"  {r.batch_id or '(not created yet)'}  {r.provider}  {r.model}  {r.requests} requests  "
                          f"{r.state}  submitted {age / 3600:.1f} h ago  (local id {r.local_id})", secrets))
    click.echo("re-run the same relgrade judge --batch command to collect them")
    return 0


class PollPrinter:
    """``on_poll`` of ``judge --batch``: one stderr line per round of polls (each open batch's state and counts, or why
    its status could not be read); the first also says what the run waits for."""

    def __init__(self, poll_interval: float):
        self.poll_interval = poll_interval
        self.said = False

    def __call__(self, report) -> None:
        parts = []
        for row, state, why in report:
            if why is not None:
                parts.append(f"{row.batch_id or row.local_id[:8]}: {why}")
            elif state is None:
                parts.append(f"{row.batch_id or row.local_id[:8]}: {row.state}")
            else:
                counts = ", ".join(f"{k} {v}" for k, v in state.counts.items())
                parts.append(f"{state.batch_id}: {state.state} ({row.requests} requests"
                             f"{'; ' + counts if counts else ''})")
        if not self.said:
            self.said = True
            click.echo(f"waiting for {len(report)} provider batch(es) to end (they answer within 24 h): a status "
                       f"poll every {self.poll_interval:g} s; Ctrl-C stops polling, the next run collects them", err=True)
        click.echo("batches: " + "; ".join(parts), err=True)
