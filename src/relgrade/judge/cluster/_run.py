"""Judging on a Ray cluster: :func:`judge_pairs_ray` (``relgrade judge --engine ray``).

The driver reads the shared PostgreSQL store once, puts the distinct (query, chunk text) units not answered yet into
a Ray Dataset, and maps them through an actor pool of ``workers`` :class:`~relgrade.judge.cluster._worker.PairJudge`
(each ``config.concurrency`` requests in flight, per ``api_base`` server). Workers judge with relgrade's engine,
claims and store, so a batch Ray retries (its worker died) or a pair two workers meet is paid once; the driver
collects the records as batches come back, prints progress, and returns the same :class:`JudgeResult` as
:func:`relgrade.judge.judge_pairs`. ``--max-cost`` is one budget for all workers (a :class:`SharedBudget` actor);
``--dry-run`` (:func:`relgrade.judge.estimate`) needs no cluster.

The cluster: ``ray_address``, else ``$RAY_ADDRESS``, else a local one started for the run (and stopped after it).
Every node needs relgrade installed (the same version) and reach to the model's server and the store; the API key is
read on the driver and handed to the workers with their constructor arguments (never printed or logged).
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from relgrade._errors import InputError
from relgrade._version import __version__
from relgrade.judge._config import JudgeConfig
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt, resolve
from relgrade.judge._results import JudgeResult, in_pairs_order
from relgrade.judge.cluster._worker import PairJudge, SharedBudget
from relgrade.judge.engine._engine import aggregate, fan_out, load_records, make_units, unit_done
from relgrade.judge.store._open import open_store, store_spec
from relgrade.judge.store._store import JudgmentStore, is_url
from relgrade.judge.transport._call import choose_transport
from relgrade.judge.transport._preflight import PROBE_TIMEOUT, credentials, preflight

__all__ = ["RAY_MISSING", "connect", "import_ray", "judge_pairs_ray", "require_shared_store"]

RAY_MISSING = "--engine ray needs Ray, which is not installed: pip install 'relgrade[ray]'"
BATCHES_IN_FLIGHT = 4
"""Batches a worker holds at once (a threaded actor). A batch is a quarter of the worker's request slots, so a worker
holds 1.5x what it can send: its slots stay full across batch edges, and at the end of a run no worker is left with
more than that queued while another idles (batches are assigned to workers up front, not stolen)."""
ACTORS_WAIT_S = 300
"""Seconds to wait for the ``workers`` actors to start before the first batch (then: an error naming --workers)."""


def import_ray():
    """The ``ray`` module, or :class:`InputError` naming the extra (exit 2, one line)."""
    try:
        import ray
        import ray.data  # noqa: F401 - ray without its data extra cannot run the pool
    except ImportError:
        raise InputError(RAY_MISSING) from None
    return ray


def require_shared_store(store: "str | Path | JudgmentStore | None") -> str:
    """The PostgreSQL store the workers share; a SQLite path (or the default store) is refused in one line."""
    if isinstance(store, JudgmentStore):  # its workers open their own connections: they need its URL
        store = getattr(store, "_url", None) or str(store.path)
    spec = store_spec(store)
    if not is_url(spec):
        raise InputError(f"--engine ray needs a PostgreSQL store that every worker reaches (--store postgresql://USER@"
                         f"HOST/DB or $RELGRADE_STORE); got the SQLite file {spec}, which workers on other machines "
                         "cannot share")
    return str(spec)


def connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at ``address`` (else ``$RAY_ADDRESS``), else start a local one; True when this call started
    or joined it (the caller shuts it down), False when Ray was already initialised."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    kw: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    host = (urlparse(address if "://" in address else f"ray://{address}").hostname or "") if address else "127.0.0.1"
    if host in {"127.0.0.1", "localhost"}:
        kw["_node_ip_address"] = "127.0.0.1"  # a head on loopback: keep this driver on loopback too
    if address and "://" not in address and address != "auto":
        _reachable(address)
    try:
        if address:
            ray.init(address=address, **kw)
        else:
            ray.init(include_dashboard=False, **kw)
    except ConnectionError as exc:
        raise InputError(f"--ray-address {address}: no Ray cluster answers there ({str(exc).splitlines()[0][:200]}); "
                         "start one (ray start --head) or fix the address") from None
    except Exception as exc:  # noqa: BLE001 - Ray's auth errors have no public class
        if "AuthToken" in type(exc).__name__ or "auth" in str(exc).lower():
            raise InputError(f"the Ray cluster at {address} refused this driver's token: set RAY_AUTH_TOKEN (ray "
                             "get-auth-token on the head) or RAY_AUTH_MODE as the cluster has it") from None
        raise
    return True


def _reachable(address: str, timeout: float = 10.0) -> None:
    """A cluster address ``HOST:PORT`` that answers TCP, else one line (``ray.init`` would retry for minutes)."""
    import socket

    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray-address {address}: give the head's HOST:PORT (e.g. 10.0.0.5:6379), or set RAY_ADDRESS")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); start one "
                         "(ray start --head) or fix the address") from None


def judge_pairs_ray(pairs: Sequence[Pair], *, model: str | None = None, prompt: "str | Path | Prompt | None" = None,
                    store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                    api_base: "str | Sequence[str] | None" = None, api_key: str | None = None,
                    api_key_env: str | None = None, max_grade: int | None = None, workers: int = 2,
                    ray_address: str | None = None, lease_s: float | None = None,
                    on_progress: Callable[[dict[str, Any]], None] | None = None,
                    batch_units: int | None = None) -> JudgeResult:
    """:func:`relgrade.judge.judge_pairs` on a Ray cluster: ``workers`` actors, each ``config.concurrency`` calls in
    flight, one shared PostgreSQL ``store`` (module doc). ``batch_units``: distinct pairs per Ray Data batch
    (default: a quarter of a worker's concurrency, :data:`BATCHES_IN_FLIGHT`)."""
    config = config or JudgeConfig()
    if not (isinstance(workers, int) and workers >= 1):
        raise InputError(f"--workers {workers}: give a whole number of Ray workers, 1 or more")
    model, prompt_obj = resolve(model, prompt, max_grade)
    if model.startswith("local/"):
        raise InputError(f"--engine ray calls a served model; {model} runs inside one process: name a model with "
                         "--model (and --api-base for your own servers)")
    url = require_shared_store(store)
    pairs = list(pairs)
    units = make_units(pairs, model, prompt_obj, config)
    db, _ = open_store(url, lease_s=lease_s)
    try:
        db.check_writable()
        load_records(units, db, prompt_obj)
        where = str(db.path)
    finally:
        db.close()
    stats = {"done": 0, "failed": 0, "unjudged": 0, "cached": 0, "stored": 0, "duplicates": 0, "cost_usd": 0.0}
    todo = [i for i, u in enumerate(units) if not unit_done(u, config)]
    finished = [u for u in units if unit_done(u, config)]
    for unit in finished:
        _count(stats, unit, on_progress)
    remaining: list = []
    stopped = fatal = None
    spent, calls, unknown = 0.0, 0, 0
    if todo:
        transport = choose_transport(model, config.transport, api_base if isinstance(api_base, str) or api_base is None
                                     else api_base[0])
        bases = [api_base] if isinstance(api_base, str) else list(api_base or [])
        _, key = credentials(model, transport, bases, api_key, api_key_env)
        preflight(model, transport=config.transport, api_base=api_base, api_key=api_key, api_key_env=api_key_env,
                  timeout=min(PROBE_TIMEOUT, config.timeout))  # before Ray starts: a wrong key costs no cluster
        ray = import_ray()
        started = connect(ray, ray_address)
        restore = _quiet_data(ray)
        run_id = uuid.uuid4().hex
        try:
            shared = ray.remote(SharedBudget).options(num_cpus=0).remote(config.max_cost)
            size = batch_units or max(1, -(-config.concurrency * max(1, len(bases)) // 2))
            ds = ray.data.from_items([{"u": i, "query": units[i].query, "text": units[i].text} for i in todo],
                                     override_num_blocks=max(1, -(-len(todo) // size)))
            out = ds.map_batches(
                PairJudge, batch_size=size, batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=BATCHES_IN_FLIGHT,
                                                   max_concurrent_calls_per_actor=BATCHES_IN_FLIGHT,
                                                   enable_true_multi_threading=True),
                fn_constructor_kwargs=dict(model=model, prompt=prompt_obj, store=url, config=config,
                                           api_base=api_base, api_key=key if key else None,
                                           api_key_env=None if key else api_key_env, lease_s=lease_s, shared=shared,
                                           run_id=run_id),
                num_cpus=1)  # Ray Data restarts a dead worker and retries its batches (max_restarts=-1)
            for batch in _batches(ray, out, workers):
                for u, records, failed, paid, left, why in zip(batch["u"], batch["records"], batch["failed"],
                                                               batch["paid"], batch["left"], batch["fatal"]):
                    unit = units[int(u)]
                    unit.records = {int(k): v for k, v in json.loads(str(records)).items()}
                    unit.failed = str(failed) or None
                    unit.paid_now = bool(paid) or any(r.get("ray_run") == run_id for r in unit.records.values())
                    if why:
                        fatal = fatal or str(why)
                    if left:
                        stopped = stopped or (str(left) if str(left) == "max_cost" else None)
                        unit.batched = {"batch"} if str(left) == "batched" else set()
                        remaining.append(unit)
                        continue
                    finished.append(unit)
                    _count(stats, unit, None)
                if on_progress is not None:
                    stats["cost_usd"] = ray.get(shared.totals.remote())[0]
                    on_progress(dict(stats))
                if fatal:
                    break
            spent, calls, unknown = ray.get(shared.totals.remote())
        finally:
            restore()
            if started:
                ray.shutdown()
    if fatal is not None:
        raise InputError(f"{fatal} ({calls} judgments paid before the error are kept in {where})")
    judgments = []
    for unit in finished:
        judgments.extend(fan_out(unit, aggregate(unit, model, prompt_obj, config.samples, not unit.paid_now)))
    seen = {id(u) for u in finished} | {id(u) for u in remaining}
    remaining.extend(units[i] for i in todo if id(units[i]) not in seen)  # never came back (a fatal error)
    ordered, rest = in_pairs_order(pairs, judgments, (p for u in remaining for p in u.pairs))
    return JudgeResult(ordered, rest, model=model, prompt_hash=prompt_obj.hash, stopped=stopped, cost_usd=spent,
                       n_calls=calls, cost_unknown=unknown, store=where,
                       in_batches=sum(len(u.pairs) for u in remaining if u.batched))


def _quiet_data(ray: Any) -> Callable[[], None]:
    """Ray Data without progress bars or its INFO lines (the driver prints its own), every worker started before the
    first batch (an even share each); returns what puts the caller's settings back."""
    ctx, logger = ray.data.DataContext.get_current(), logging.getLogger("ray.data")
    ours = {"enable_progress_bars": False, "print_on_execution_start": False, "wait_for_min_actors_s": ACTORS_WAIT_S}
    saved, level = {k: getattr(ctx, k) for k in ours}, logger.level
    for k, v in ours.items():
        setattr(ctx, k, v)
    logger.setLevel(logging.ERROR)  # also its warning that progress bars are off

    def restore() -> None:
        for k, v in saved.items():
            setattr(ctx, k, v)
        logger.setLevel(level)

    return restore


def _batches(ray: Any, out: Any, workers: int):
    """The result batches as they come back; workers that never start are an :class:`InputError`."""
    try:
        yield from out.iter_batches(batch_size=None, batch_format="numpy")
    except ray.exceptions.GetTimeoutError:
        raise InputError(f"--workers {workers}: the Ray cluster did not start {workers} workers (one CPU each) within "
                         f"{ACTORS_WAIT_S} s; lower --workers or add nodes") from None
    except ray.exceptions.RayError as exc:  # a worker that cannot start: one line, not Ray's nested tracebacks
        text = str(exc)
        missing = re.search(r"No module named '(relgrade[^']*)'", text)
        if missing:
            raise InputError(f"the Ray workers cannot import {missing.group(1)}: install relgrade {__version__} "
                             "('relgrade[ray]') on every node, in the Python the cluster runs") from None
        cause = re.search(r"InputError: ([^\n]+)", text)
        if cause:
            raise InputError(f"a Ray worker stopped: {cause.group(1).strip()}") from None
        raise


def _count(stats: dict[str, Any], unit, on_progress) -> None:
    """The engine's progress counts (:meth:`relgrade.judge.engine._engine.Engine._progress`) for one unit."""
    stats["done"] += len(unit.pairs)
    if unit.failed is not None:
        stats["failed"] += len(unit.pairs)
    elif "judged" not in [unit.records[i]["status"] for i in sorted(unit.records)]:
        stats["unjudged"] += len(unit.pairs)
    if unit.failed is None:
        stats["cached"] += len(unit.pairs) - (1 if unit.paid_now else 0)
        stats["stored"] += 0 if unit.paid_now else 1
        stats["duplicates"] += len(unit.pairs) - 1
    if on_progress is not None:
        on_progress(dict(stats))
