"""An open model on the cluster's GPUs: :func:`judge_pairs_vllm` (``relgrade judge --engine ray-vllm``).

The same interface as :func:`relgrade.judge.cluster.judge_pairs_ray`, but the model runs inside the cluster: the
pairs' prompts go through ``ray.data.llm`` (a vLLM engine per GPU replica, ``workers`` replicas) instead of HTTP
calls. The model is ``vllm/<Hugging Face id or path>``; that string is the store key's model, so these grades never
mix with the same weights served elsewhere (``openai/<name>`` at a vLLM server is another judge until calibrated).

The driver claims the pairs it sends (the store's claim protocol, renewed while the run lasts), so another judge on
the same store never pays for them; every answer is read by relgrade's parser (:func:`relgrade.judge.parse_answer`)
and committed to the store as it comes back. One generation per pair: an answer without a grade on the scale is
stored ``unjudged`` with the raw answer (a GPU batch has no repair round; ``--retry-unjudged`` asks again). Prices are
unknown (your own GPUs): the calls are counted, the dollars not. ``processor``: a stand-in for
``ray.data.llm.build_processor`` (the tests stub vLLM with it; a machine without GPUs cannot start the engine).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from relgrade._errors import InputError
from relgrade.judge._config import JudgeConfig
from relgrade.judge._parse import expected_grade, grade_distribution, parse_answer
from relgrade.judge._pool import Pair
from relgrade.judge._prompt import Prompt, resolve
from relgrade.judge._results import JudgeResult, in_pairs_order
from relgrade.judge.cluster._run import connect, import_ray, require_shared_store
from relgrade.judge.engine._engine import aggregate, fan_out, load_records, make_units, unit_done
from relgrade.judge.store._claims import new_owner
from relgrade.judge.store._open import open_store
from relgrade.judge.store._store import JudgmentStore

__all__ = ["PREFIX", "judge_pairs_vllm", "vllm_processor"]

PREFIX = "vllm/"


def vllm_processor(config: dict[str, Any], preprocess: Callable, postprocess: Callable):
    """``ray.data.llm.build_processor`` with a :class:`vLLMEngineProcessorConfig` made of ``config``."""
    try:
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig
    except ImportError:
        raise InputError("--engine ray-vllm needs Ray's LLM extra and vLLM on the cluster: pip install "
                         "'ray[data,llm]' vllm") from None
    return build_processor(vLLMEngineProcessorConfig(**config), preprocess=preprocess, postprocess=postprocess)


def judge_pairs_vllm(pairs: Sequence[Pair], *, model: str, prompt: "str | Path | Prompt | None" = None,
                     store: "str | Path | JudgmentStore | None" = None, config: JudgeConfig | None = None,
                     max_grade: int | None = None, workers: int = 1, ray_address: str | None = None,
                     lease_s: float | None = None, engine_kwargs: dict[str, Any] | None = None,
                     batch_size: int = 64, on_progress: Callable[[dict[str, Any]], None] | None = None,
                     processor: Callable | None = None) -> JudgeResult:
    """Judge ``pairs`` with ``model`` (``vllm/<model>``) on ``workers`` vLLM replicas of the Ray cluster (module doc)."""
    config = config or JudgeConfig()
    if not model.startswith(PREFIX) or not model[len(PREFIX):].strip():
        raise InputError(f"--model {model!r}: --engine ray-vllm runs an open model in the cluster; name it "
                         f"{PREFIX}<Hugging Face id or path>, e.g. {PREFIX}Qwen/Qwen2.5-7B-Instruct")
    if config.samples != 1:
        raise InputError("--samples: --engine ray-vllm draws one answer per pair; drop --samples")
    model, prompt_obj = resolve(model, prompt, max_grade)
    url = require_shared_store(store)
    pairs = list(pairs)
    units = make_units(pairs, model, prompt_obj, config)
    db, _ = open_store(url, lease_s=lease_s)
    owner = new_owner()
    stop = threading.Event()
    lock = threading.Lock()
    calls = 0
    try:
        db.check_writable()
        load_records(units, db, prompt_obj)
        todo = [i for i, u in enumerate(units) if not unit_done(u, config)]
        sent: list[int] = []
        for i in todo:  # this run's pairs, claimed one by one: a pair another judge holds is left to it
            claimed, busy = db.claim(units[i].keys, owner)
            if claimed and not busy:
                units[i].claimed = claimed
                sent.append(i)

        def heartbeat() -> None:
            while not stop.wait(db.lease_s / 3):
                with lock:
                    db.renew(owner)

        beat = threading.Thread(target=heartbeat, name="relgrade-vllm-claims", daemon=True)
        beat.start()
        if sent:
            ray = import_ray()
            started = connect(ray, ray_address)
            try:
                calls = _generate(ray, units, sent, model, prompt_obj, config, db, owner, lock, workers, batch_size,
                                  engine_kwargs, processor or vllm_processor, on_progress)
            finally:
                if started:
                    ray.shutdown()
        stop.set()
        beat.join()
        db.release(owner)
        where = str(db.path)
    finally:
        stop.set()
        db.close()
    done = [u for u in units if unit_done(u, config)]
    judgments = [j for u in done for j in fan_out(u, aggregate(u, model, prompt_obj, 1, not u.paid_now))]
    rest = [p for u in units if not unit_done(u, config) for p in u.pairs]
    ordered, left = in_pairs_order(pairs, judgments, rest)
    return JudgeResult(ordered, left, model=model, prompt_hash=prompt_obj.hash, cost_usd=0.0, n_calls=calls,
                       cost_unknown=calls, store=where)


def _generate(ray, units, sent, model, prompt, config, db, owner, lock, workers, batch_size, engine_kwargs,
              build, on_progress) -> int:
    """Run the prompts of ``units[sent]`` through the processor, store every answer; the number of generations."""
    ds = ray.data.from_items([{"u": i, "messages": json.dumps(prompt.render(units[i].query, units[i].text))}
                              for i in sent])
    sampling = {"temperature": config.temperature, "max_tokens": config.max_tokens}

    def preprocess(row: dict[str, Any]) -> dict[str, Any]:
        return {"u": row["u"], "messages": json.loads(row["messages"]), "sampling_params": dict(sampling)}

    def postprocess(row: dict[str, Any]) -> dict[str, Any]:
        return {"u": row["u"], "answer": row.get("generated_text") or "",
                "prompt_tokens": int(row.get("num_input_tokens") or 0),
                "completion_tokens": int(row.get("num_generated_tokens") or 0)}

    settings = {"model_source": model[len(PREFIX):], "engine_kwargs": dict(engine_kwargs or {}),
                "concurrency": workers, "batch_size": batch_size}
    out = build(settings, preprocess, postprocess)(ds)
    calls, started = 0, time.monotonic()
    for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
        for u, answer, n_in, n_out in zip(batch["u"], batch["answer"], batch["prompt_tokens"],
                                          batch["completion_tokens"]):
            unit = units[int(u)]
            parsed = parse_answer(str(answer), prompt.scale, prompt.grade_key)
            distribution = grade_distribution(None, str(answer), parsed, prompt.scale)
            record = {"reason": parsed.reason, "distribution": distribution,
                      "expected_grade": expected_grade(distribution), "raw_answer": str(answer), "error": parsed.error,
                      "prompt_tokens": int(n_in), "completion_tokens": int(n_out), "cost_usd": None,
                      "latency_s": None, "calls": 1, "engine": "ray-vllm"}
            status = "judged" if parsed.grade is not None else "unjudged"
            with lock:
                db.put(unit.keys[0], model=model, prompt_hash=prompt.hash, status=status, grade=parsed.grade,
                       owner=owner, record=record)
            unit.records[0] = {**record, "status": status, "grade": parsed.grade}
            unit.paid_now = True
            calls += 1
        if on_progress is not None:
            on_progress({"done": calls, "failed": 0, "unjudged": 0, "cached": 0, "stored": 0, "duplicates": 0,
                         "cost_usd": 0.0, "seconds": time.monotonic() - started})
    return calls
