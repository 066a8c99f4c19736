"""The demo pipeline: retrieve → judge → calibrate → hybrid + PPI → evaluate → gate → report.

Every step runs the same public command a user would run (``relgrade judge``, ``calibrate``,
``hybrid``, ``estimate``, ``evaluate``, ``gate``), so the demo exercises exactly the code paths of
the CLI; their full output goes to ``DIR/demo.log`` and every intermediate file stays in ``DIR``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from relgrade._errors import InputError


@dataclass(frozen=True)
class DemoResult:
    out: Path
    report: Path
    summary: Path
    data: dict


def _step(log_path: Path, say: Callable[[str], None], title: str, argv: list[str], ok=(0,)) -> int:
    from relgrade.cli import main

    say(f"  {title} ...")
    start = time.perf_counter()
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"\n$ relgrade {' '.join(argv)}\n")
        log.flush()
        with contextlib.redirect_stdout(log):
            code = main(argv)
    if code not in ok:
        raise InputError(f"demo step '{title}' failed (exit {code}); see {log_path}")
    say(f"  {title}: done in {time.perf_counter() - start:.1f} s")
    return code


def run_demo(out: str | Path = "relgrade-demo", *, model: str | None = None, depth: int = 5, concurrency: int | None = None,
             say: Callable[[str], None] = print) -> DemoResult:
    """Run the whole pipeline on the bundled data into ``out``; returns the paths and the summary."""
    from relgrade.demo import _data

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: that is a file, not a directory; give a new or existing directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create the directory ({exc.strerror}); choose another path") from None
    log = out / "demo.log"
    log.write_text("relgrade demo log\n", encoding="utf-8")
    model = model or "local/gemma3-270m"
    local = model.startswith("local/")
    if concurrency is None:
        concurrency = 1 if local else 16

    say(f"relgrade demo: bundled product docs, judge {model}")
    runs = {name: Path(p) for name, p in _data.write_runs(out / "runs", k=10).items()}
    names = list(runs)
    baseline, candidate = names[0], names[1]
    golden = out / "golden.jsonl"
    human = out / "human_labels.csv"
    shutil.copyfile(_data.golden_path(), golden)
    shutil.copyfile(_data.human_labels_path(), human)
    say(f"  retrieved with {baseline} (baseline) and {candidate} (candidate) -> {out / 'runs'}")

    judged = out / "judge.qrels"
    details = out / "judge.qrels.details.jsonl"
    judge_argv = ["judge", *sum((["--run", str(p)] for p in runs.values()), []), "--model", model,
                  "--depth", str(depth), "--concurrency", str(concurrency), "--store", str(out / "judgments.sqlite"),
                  "--out", str(judged)]
    _step(log, say, f"judge the top {depth} of both runs", judge_argv, ok=(0, 1))

    calibration = out / "calibration.json"
    _step(log, say, "calibrate the judge against the human labels",
          ["calibrate", "--judge", str(details), "--human", str(human), "--json", str(calibration),
           "--report", str(out / "calibration.html")])

    hybrid = out / "hybrid.jsonl"
    _step(log, say, "merge human and judge labels (hybrid set)",
          ["hybrid", "--human", str(human), "--judge", str(details), *sum((["--run", str(p)] for p in runs.values()), []),
           "--mapping", str(calibration), "--out", str(hybrid)])

    evaluations, estimates = {}, {}
    for name, path in runs.items():
        evaluations[name] = out / f"eval_{name}.json"
        _step(log, say, f"evaluate {name} against the golden set",
              ["evaluate", "--run", str(path), "--qrels", str(golden), "--k", "5", "--k", "10",
               "--json", str(evaluations[name])])
        _step(log, say, f"evaluate {name} with hybrid labels",
              ["evaluate", "--run", str(path), "--qrels", str(hybrid), "--k", "5", "--k", "10",
               "--json", str(out / f"eval_{name}_hybrid.json")])
        estimates[name] = out / f"estimate_{name}.json"
        _step(log, say, f"PPI estimates for {name}",
              ["estimate", "--run", str(path), "--human", str(human), "--judge", str(details), "--k", "5",
               "--k", "10", "--mapping", str(calibration), "--json", str(estimates[name])])

    gate_code = _step(log, say, f"gate {candidate} against {baseline}",
                      ["gate", "--baseline", str(evaluations[baseline]), "--current", str(evaluations[candidate]),
                       "--metric", "recall@5", "--max-drop", "0.02"], ok=(0, 1))

    from relgrade.demo._report import build_report

    data = build_report(out, runs=runs, baseline=baseline, candidate=candidate, model=model, details=details,
                        human=human, calibration=calibration, evaluations=evaluations, estimates=estimates,
                        gate_code=gate_code)
    summary = out / "summary.json"
    summary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return DemoResult(out, out / "report.html", summary, data)
