"""The demo pipeline: retrieve → judge → calibrate → hybrid + PPI → evaluate → gate → report.

Every step calls the public Python API (:func:`relgrade.judge.judge_pairs`,
:func:`relgrade.calibration.agreement` and :func:`~relgrade.calibration.fit_mapping`,
:func:`relgrade.hybrid.merge_labels` and :func:`~relgrade.hybrid.estimate`,
:func:`relgrade.evaluate`, :func:`relgrade.gate`); the files each step would hand to the next
command (runs, judge qrels and details, calibration JSON, hybrid labels, reports) are written to
``DIR`` so a user can re-run any step with the CLI. The report reads the gate's own
:class:`~relgrade.GateResult`; nothing is recomputed beside the library.

Judgments go to the default store (``.relgrade/judgments.sqlite`` of the working directory), not into
``DIR``: a second demo into another directory reuses them and calls nothing.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from relgrade._errors import InputError
from relgrade._words import plural

GATE_METRIC = "recall@5"
GATE_MAX_DROP = 0.02
KS = (5, 10)


@dataclass(frozen=True)
class DemoResult:
    """Paths of the demo's outputs, its summary (``summary.json``), the gate's result and the judging counts."""

    out: Path
    report: Path
    summary: Path
    data: dict
    gate: Any  # relgrade.GateResult
    store: Path
    judge_calls: int


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    return path


_OUTPUTS = ("golden.jsonl", "human_labels.csv", "judge.qrels", "judge.qrels.details.jsonl", "calibration.json",
            "calibration.html", "hybrid.jsonl", "hybrid.jsonl.stale.jsonl", "gate.json", "summary.json", "report.html")
"""The files the demo writes into ``--out`` (besides ``runs/`` and the ``eval_*`` and ``estimate_*`` reports)."""


def _store_path(store: str | Path | None, out: Path) -> Path:
    """The demo's SQLite store, refused when it is a URL or one of the files the demo writes into ``out``."""
    import os

    from relgrade.judge import DEFAULT_STORE
    from relgrade.judge.store._store import is_url

    if store is not None and is_url(str(store)):  # never echoed: a URL may hold a password
        raise InputError("--store: the demo keeps its judgments in a SQLite file; give a file path "
                         "(a postgresql:// store is for relgrade judge)")
    path = Path(store) if store is not None else DEFAULT_STORE
    try:
        rel = Path(os.path.relpath(os.path.realpath(path), os.path.realpath(out)))
    except ValueError:  # another drive
        return path
    if not rel.parts or rel.parts[0] == "..":
        return path
    if rel.parts[0] == "runs" or (len(rel.parts) == 1 and (rel.name in _OUTPUTS or rel.name.startswith(("eval_", "estimate_")))):
        raise InputError(f"--store {path} is a file the demo writes into --out {out}; put the store elsewhere "
                         f"(default {DEFAULT_STORE})")
    return path


def _writable_dir(out: Path, what: str) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"{what} {out}: that is a file, not a directory; give a new or existing directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{what} {out}: cannot create the directory ({exc.strerror}); choose another path") from None


@contextlib.contextmanager
def _step(say: Callable[[str], None], title: str) -> Iterator[None]:
    """One step of the demo: it says when it starts and ends; a user error stops the demo there, in one line
    that names the step (the steps after it would only fail with a less useful message)."""
    say(f"  {title} ...")
    start = time.perf_counter()
    try:
        yield
    except InputError as exc:
        raise InputError(f"demo step '{title}' failed: {exc}") from None
    say(f"  {title}: done in {time.perf_counter() - start:.1f} s")


def run_demo(out: str | Path = "relgrade-demo", *, model: str | None = None, depth: int = 5,
             concurrency: int | None = None, store: str | Path | None = None, say: Callable[[str], None] = print,
             progress: Callable[[int], Any] | None = None, api_base: str | None = None) -> DemoResult:
    """Run the whole pipeline on the bundled data into ``out``; return the paths, summary and gate result.

    ``store``: the judgment store (default :data:`relgrade.judge.DEFAULT_STORE`, shared by every demo
    run from this directory). ``progress(total)`` builds the judge's ``on_progress`` callback (with a
    ``close()``); default :class:`relgrade.judge.engine._progress.Progress` (tqdm on a terminal, else a line
    every 5 s on stderr). ``api_base``: an OpenAI-compatible server for an ``openai/`` model (vLLM, Ollama...).
    A step that fails stops the demo with an :class:`~relgrade.InputError` naming the step (a judge step with pairs
    that got no answer too: every answer already paid for stays in the store).
    """
    import dataclasses

    from relgrade.gating import gate
    from relgrade.io import read_qrels, read_run
    from relgrade.metrics import evaluate
    from relgrade.calibration import agreement, disagreements, fit_mapping, read_human, read_judge, render_page
    from relgrade.calibration._inputs import dumps
    from relgrade.demo import _data
    from relgrade.hybrid import (
        estimate, merge_labels, read_human_labels, read_judge_labels, read_mapping, write_hybrid,
    )
    from relgrade.judge import DEFAULT_MODEL, JudgeConfig, judge_pairs, pool
    from relgrade.judge._outputs import details_path, judged_line, write_outputs
    from relgrade.judge.engine._progress import Progress
    from relgrade.metrics import parse_metrics

    out = Path(out)
    store = _store_path(store, out)
    _writable_dir(out, "--out")
    _writable_dir(store.parent, "the judgment store's folder")
    model = model or DEFAULT_MODEL
    if concurrency is None:
        concurrency = 1 if model.startswith("local/") else 16

    say(f"relgrade demo: bundled product docs, judge {model}")
    say(f"  judgments are stored in {store}; a re-run with this store, into any --out, reuses them")
    paths = _data.write_runs(out / "runs", k=10)
    runs = {name: read_run(p, name=name) for name, p in paths.items()}
    baseline, candidate = list(runs)
    golden_path, human_path = out / "golden.jsonl", out / "human_labels.csv"
    shutil.copyfile(_data.golden_path(), golden_path)
    shutil.copyfile(_data.human_labels_path(), human_path)
    golden = read_qrels(golden_path)
    say(f"  retrieved with {baseline} (baseline) and {candidate} (candidate) -> {out / 'runs'}")

    judged = out / "judge.qrels"
    details = details_path(judged)
    pairs = pool(list(runs.values()), depth)
    with _step(say, f"judge the top {depth} of both runs ({len(pairs)} pairs)"):
        on_progress = (progress or Progress)(len(pairs))
        try:
            result = judge_pairs(pairs, model=model, store=store, config=JudgeConfig(concurrency=concurrency),
                                 on_progress=on_progress, api_base=api_base)
        finally:
            on_progress.close()
        write_outputs(result, judged)
        counts = result.counts()
        say(f"  {judged_line(result)}; {plural(result.n_calls, 'judge call')}")
        if counts["failed"]:
            first = next(j for j in result.judgments if j.status == "failed")
            raise InputError(f"{counts['failed']} of {counts['pairs']} pairs got no answer (e.g. query {first.query_id} "
                             f"doc {first.doc_id}: {first.error}); re-run the same command to retry them (the "
                             f"{counts['judged']} answers so far are kept in {store})")

    with _step(say, "calibrate the judge against the human labels"):
        humans = read_human(human_path)
        judge = read_judge(details)
        report = agreement(judge.labels, humans.labels, expected=judge.expected,
                           annotations=humans.annotations or None, name="the demo judge",
                           model=judge.model or model, n_unjudged=judge.n_unjudged)
        mapping = fit_mapping(judge.labels, humans.labels, expected=judge.expected)
        report = dataclasses.replace(report, mapping=mapping)
        audit = disagreements(judge.labels, humans.labels, info={**humans.info, **judge.info})
        calibration = out / "calibration.json"
        calibration.write_text(dumps({**report.to_dict(), "n_disagreements": len(audit)}) + "\n", encoding="utf-8")
        (out / "calibration.html").write_text(render_page([report], disagreements=[audit]), encoding="utf-8")

    with _step(say, "merge human and judge labels (hybrid set)"):
        judge_mapping = read_mapping(calibration)
        judge_in = read_judge_labels(details, mapping=judge_mapping)
        texts: dict[str, str] = {}
        for run in runs.values():
            texts.update(run.texts)
        human_qrels = read_qrels(human_path)
        verdict = judge_mapping.verdict(judge_in.model)  # the judge's calibration travels with its labels
        hybrid = merge_labels(read_human_labels(human_path), judge_in.labels, texts=texts, calibration=verdict)
        write_hybrid(hybrid, out / "hybrid.jsonl")
        # PPI's prediction (estimate's default, soft) calibrates the judge's own grades on these human labels by
        # cross-fitting: the mapping, fitted on the same labels, is for the hybrid set only

    metrics = parse_metrics(None, KS)
    evaluations, estimates = {}, {}
    for name, run in runs.items():
        with _step(say, f"evaluate {name} against the golden set and with hybrid labels; PPI++ estimates"):
            evaluations[name] = evaluate(golden, run, metrics)
            _write_json(out / f"eval_{name}.json", evaluations[name].to_dict())
            _write_json(out / f"eval_{name}_hybrid.json", {**evaluate(hybrid.to_qrels(), run, metrics).to_dict(),
                                                           "judge": hybrid.judge()})
            estimates[name] = estimate(run, human_qrels, judge_in, metrics, forbidden=golden, calibration=verdict)
            _write_json(out / f"estimate_{name}.json", estimates[name].to_dict())

    gate_result = gate(evaluations[baseline], evaluations[candidate], metrics=[GATE_METRIC], max_drop=GATE_MAX_DROP,
                       names=(baseline, candidate))
    _write_json(out / "gate.json", gate_result.to_dict())
    say(f"  gate {candidate} against {baseline}: {'pass' if gate_result.passed else 'FAIL'}")

    from relgrade.demo._report import build_report

    data = build_report(out, baseline=baseline, candidate=candidate, model=model, calibration=report, audit=audit,
                        evaluations=evaluations, estimates=estimates, gate=gate_result, details=details, store=store)
    summary = _write_json(out / "summary.json", data)
    return DemoResult(out, out / "report.html", summary, data, gate_result, store, result.n_calls)



def ending(result: DemoResult) -> list[str]:
    """The lines ``relgrade demo`` ends with (the README quotes them; tests/demo_pipeline checks they match)."""
    from relgrade.demo._report import leak_sentence

    d, gate = result.data, result.gate
    lines = [f"judge {d['model']}: {d['calibration']['verdict']}"]
    for name, ev in d["runs"].items():
        r5, ci = ev["recall@5"], ev["recall@5"]["ci95"]
        lines.append(f"{name:<8} recall@5 {r5['value']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]  "
                     f"ndcg@10 {ev['ndcg@10']['value']:.3f}  leaks {ev['leaks']}")
    lines.append(f"gate {gate.current} vs {gate.baseline}: {'pass' if gate.passed else 'FAIL'}")
    if gate.leaks:
        lines.append(f"  {leak_sentence(gate)}")
    lines += [f"report    {result.report}", f"summary   {result.summary}",
              f"judgments {result.store} (a re-run into any --out reuses them: 0 judge calls)"]
    return lines


__all__ = ["DemoResult", "ending", "run_demo"]
