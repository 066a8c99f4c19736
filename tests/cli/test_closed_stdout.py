"""A closed stdout (``relgrade estimate ... --json x.json | head -3``) ends every command quietly (issue 36, item 4):
its own exit code, no traceback, and every file it was asked to write is written, although the output it prints
before writing them has nowhere to go.

In process, each command of tests/fuzz/test_fuzz_outputs.py's table (every output option of every command) runs with a
stdout that breaks after its first line, as a pipe whose reader exited does; one real process runs with its stdout
pipe closed before it starts (the walkthrough's own ``estimate`` is checked the same way in tests/test_walkthrough.py).
"""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from relgrade.cli import main

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("relgrade_test_fuzz_outputs", HERE.parent / "fuzz" / "test_fuzz_outputs.py")
outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outputs)


class ReaderGone(io.StringIO):
    """A stdout whose reader leaves after ``lines`` lines: every later write or flush raises BrokenPipeError."""

    def __init__(self, lines: int = 1):
        super().__init__()
        self.left = lines
        self.broken = 0

    def write(self, text: str) -> int:
        if self.left <= 0:
            self.broken += 1
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= text.count("\n")
        return super().write(text)

    def flush(self) -> None:
        if self.left < 0:
            self.broken += 1
            raise BrokenPipeError(32, "Broken pipe")


# every command of the outputs table but the labeling page (it serves, prints its URL to stdout first, then blocks)
COMMANDS = [c for c in outputs.COMMANDS if c not in ("label", "judge")]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_writes_its_files_on_a_closed_stdout(tmp_path, monkeypatch, capsys, fuzz_world, command):
    files = outputs._world(tmp_path, fuzz_world)
    values = {k: str(v) for k, v in files.items()}
    argv, outs, _ = outputs.COMMANDS[command]
    argv = [part.format(**values) for part in argv]
    if command == "gate":
        argv.append("--no-tenants")  # an evaluate report of TREC qrels carries leaks: the gate passes
    if command == "label-export":  # a label to export
        from relgrade.label import LabelStore

        with LabelStore(files["store"]) as db:
            db.put("q1", "d1", "alice", 2)
    capsys.readouterr()
    gone = ReaderGone(lines=0 if command == "label-export" else 1)  # label --export prints one line
    monkeypatch.setattr(sys, "stdout", gone)
    code = main(argv)
    err = capsys.readouterr().err
    assert gone.broken, "the command printed nothing after the reader left: the test proves nothing"
    assert code == 0 and "Traceback" not in err and "Broken pipe" not in err, (code, err)
    for name in outs:
        assert files[name].is_file() and files[name].stat().st_size > 0, f"{command} did not write --{name}"


def test_the_judge_writes_its_qrels_and_details_on_a_closed_stdout(tmp_path, monkeypatch, capsys, fakes, make_run):
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", "chunk one [[grade=2]]"),
                                                                  ("d2", "chunk two [[grade=0]]")])})
    out = tmp_path / "judged.qrels"
    with fakes.FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-0123456789")
        gone = ReaderGone(lines=0)
        monkeypatch.setattr(sys, "stdout", gone)
        code = main(["judge", "--run", str(run), "--model", "openai/gpt-4o-mini", "--api-base", server.base_url,
                     "--store", str(tmp_path / "s.sqlite"), "--out", str(out)])
    err = capsys.readouterr().err
    assert gone.broken and code == 0 and "Traceback" not in err, err
    assert out.read_text().split() == ["q1", "0", "d1", "2", "q1", "0", "d2", "0"]
    assert len(Path(f"{out}.details.jsonl").read_text().splitlines()) == 2


def test_a_real_process_with_its_stdout_pipe_closed_exits_0_and_writes_its_json(tmp_path, fuzz_world):
    files = fuzz_world.write_world(tmp_path)
    out = tmp_path / "x.json"
    proc = subprocess.Popen([sys.executable, "-m", "relgrade.cli", "evaluate", "--run", str(files["run"]), "--qrels",
                             str(files["qrels"]), "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line: every print meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err == ""  # no traceback, no "Exception ignored ... BrokenPipeError" at the interpreter's exit
    assert json.loads(out.read_text())["aggregate"]
