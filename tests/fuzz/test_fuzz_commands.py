"""Malformed inputs for every command that reads files: exit 2, one ``relgrade: error:`` line naming the file,
no traceback (issue 15). Commands run in-process through ``relgrade.cli.main``; a few as real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from relgrade.cli import main


def _load_world():
    import importlib.util

    spec = importlib.util.spec_from_file_location("relgrade_fuzz_world", Path(__file__).with_name("fuzz_world.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_w = _load_world()
BAD, GENERIC, JSON_CASES, SUFFIX, write_world = _w.BAD, _w.GENERIC, _w.JSON_CASES, _w.SUFFIX, _w.write_world


SCALE_CASES = {"grade_4", "grade_minus_1"}  # invalid only where a label scale applies (not plain qrels)

# command -> (argv template, {role: kinds of bad content it gets})
COMMANDS = {
    "evaluate": (["evaluate", "--run", "{run}", "--qrels", "{qrels}", "--n-boot", "20"],
                 {"run": ["trec_run"], "qrels": ["trec_qrels", "csv_labels"]}),
    "compare": (["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--qrels", "{qrels}", "--n-boot", "20"],
                {"run": ["trec_run"], "run_b": ["trec_run"], "qrels": ["trec_qrels"]}),
    "gate": (["gate", "--baseline", "{baseline}", "--current", "{current}"],
             {"baseline": ["report"], "current": ["report"]}),
    "judge": (["judge", "--run", "{run}", "--dry-run", "--model", "openai/gpt-4o-mini", "--store", "{tmp}/j.sqlite"],
              {"run": ["trec_run"]}),
    "calibrate": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--n-boot", "20", "--no-mapping"],
                  {"judge": ["details"], "human": ["csv_labels"]}),
    "sample": (["sample", "--judge", "{judge}", "--n", "2", "--out", "{tmp}/sample.csv", "--exclude", "{exclude}",
                "--run", "{run}", "--depth", "3"],
               {"judge": ["details"], "exclude": ["csv_labels"], "run": ["trec_run"]}),
    "hybrid": (["hybrid", "--human", "{human}", "--judge", "{judge}", "--corpus", "{corpus}", "--mapping", "{mapping}",
                "--out", "{tmp}/hy.jsonl"],
               {"human": ["csv_labels"], "judge": ["details"], "corpus": ["corpus"], "mapping": ["mapping"]}),
    "estimate": (["estimate", "--run", "{run}", "--human", "{human}", "--judge", "{judge}", "--mapping", "{mapping}"],
                 {"run": ["trec_run"], "human": ["csv_labels"], "judge": ["details"], "mapping": ["mapping"]}),
    "rank-systems": (["rank-systems", "--run", "{run}", "--run", "{run_b}", "--human", "{human}", "--judge", "{judge}",
                      "--n-boot", "20"],
                     {"run": ["trec_run"], "run_b": ["trec_run"], "human": ["csv_labels"], "judge": ["details"]}),
    "label": (["label", "{items}", "--no-browser", "--port", "0", "--store", "{tmp}/l.sqlite"], {"items": ["items"]}),
}
EXTRA_REPORT = {"not_json": "{not json", "list": "[1, 2]"}


def _cases():
    for command, (_, roles) in COMMANDS.items():
        for role, kinds in roles.items():
            for name in [*GENERIC, "directory", "missing"]:
                yield pytest.param(command, role, "generic", name, id=f"{command}-{role}-{name}")
            for kind in kinds:
                table = EXTRA_REPORT if kind == "report" else BAD[kind]
                for name in table:
                    if name in SCALE_CASES and role == "qrels":
                        continue
                    yield pytest.param(command, role, kind, name, id=f"{command}-{role}-{kind}-{name}")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    files = write_world(root)
    files["exclude"] = root / "labeled.csv"
    files["exclude"].write_text("query_id,doc_id,grade\nq6,d1,2\n")
    for name in ("baseline", "current"):
        files[name] = root / f"{name}.json"
        assert main(["evaluate", "--run", str(files["run"]), "--qrels", str(files["qrels"]), "--n-boot", "20",
                     "--json", str(files[name])]) == 0
    return files


@pytest.fixture(autouse=True)
def never_serve(monkeypatch):
    """``relgrade label`` must fail before serving a malformed items file; serving would block the test."""
    import relgrade.label._server as server

    def refuse(*args, **kwargs):
        raise AssertionError("relgrade label served a malformed items file")

    monkeypatch.setattr(server, "serve", refuse)


def _argv(command: str, files: dict[str, Path], tmp: Path, **override: Path) -> list[str]:
    values = {k: str(v) for k, v in files.items()}
    values.update({k: str(v) for k, v in override.items()})
    values["tmp"] = str(tmp)
    return [part.format(**values) for part in COMMANDS[command][0]]


def _bad_file(tmp: Path, kind: str, name: str) -> Path:
    if name == "missing":
        return tmp / "does-not-exist.txt"
    if name == "directory":
        (tmp / "a-folder.csv").mkdir()
        return tmp / "a-folder.csv"
    if kind == "generic":
        content = GENERIC[name]
        path = tmp / f"bad-{name}.jsonl" if name.startswith("deep") else tmp / f"bad-{name}.csv"
        path.write_bytes(content)
        return path
    text = EXTRA_REPORT[name] if kind == "report" else BAD[kind][name]
    suffix = ".jsonl" if name in JSON_CASES or text.lstrip().startswith("{") and kind not in {"mapping", "report"} \
        else SUFFIX[kind]
    path = tmp / f"bad-{kind}-{name}{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_world_is_valid_for_every_command(world, tmp_path, capsys):
    """Every command accepts the valid world, so each failure below is the bad file's."""
    for command in COMMANDS:
        if command in {"label", "judge"}:
            continue
        code = main(_argv(command, world, tmp_path))
        err = capsys.readouterr().err
        assert code == 0, (command, err)


@pytest.mark.parametrize("command,role,kind,name", list(_cases()))
def test_malformed_input_exits_2_with_one_line_naming_the_file(world, tmp_path, capsys, command, role, kind, name):
    bad = _bad_file(tmp_path, kind, name)
    code = main(_argv(command, world, tmp_path, **{role: bad}))
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("relgrade: error: "), err
    assert str(bad) in lines[0] or bad.name in lines[0], lines[0]
    assert "Traceback" not in err + out


@pytest.mark.parametrize("argv_of,content,suffix", [
    (lambda f, bad: ["calibrate", "--judge", str(f["judge"]), "--human", str(bad)],
     BAD["csv_labels"]["unbalanced_quote"], ".csv"),
    (lambda f, bad: ["estimate", "--run", str(f["run"]), "--human", str(f["human"]), "--judge", str(f["judge"]),
                     "--mapping", str(bad)], GENERIC["deep_json"].decode(), ".json"),
    (lambda f, bad: ["evaluate", "--run", str(f["run"]), "--qrels", str(bad)], BAD["trec_qrels"]["nan_grade"], ".txt"),
    (lambda f, bad: ["hybrid", "--human", str(bad), "--out", str(bad.with_name("h.jsonl"))],
     BAD["csv_labels"]["infinity_json"], ".jsonl"),
], ids=["calibrate-quote", "estimate-deep-json", "evaluate-nan", "hybrid-infinity"])
def test_real_processes_print_no_traceback(world, tmp_path, argv_of, content, suffix):
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(content, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "relgrade.cli", *argv_of(world, bad)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("relgrade: error: ") and str(bad) in lines[0]
