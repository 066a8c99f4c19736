"""Outputs never overwrite inputs (issue 24): every output option of every command, pointed at every one of its
inputs (as given, through a symbolic link, through a relative path with ``..``), and at its store, is exit 2 with
one line naming both options; the input's bytes are unchanged and no call is made (the judge's api base is a
closed port, and the check runs first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgrade.cli import main


JUDGE = ["--model", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1"]

# command -> (argv with {role} placeholders, output options (role names), input roles it reads)
COMMANDS = {
    "evaluate": (["evaluate", "--run", "{run}", "--qrels", "{qrels}", "--json", "{json}"], ["json"], ["run", "qrels"]),
    "compare": (["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--qrels", "{qrels}", "--json", "{json}"],
                ["json"], ["run", "run_b", "qrels"]),
    "judge": (["judge", "--run", "{run}", "--corpus", "{corpus}", "--store", "{store}", "--out", "{out}", *JUDGE],
              ["out"], ["run", "corpus", "store"]),
    "calibrate": (["calibrate", "--judge", "{judge}", "--human", "{human}", "--json", "{json}", "--report", "{html}"],
                  ["json", "html"], ["judge", "human"]),
    "sample": (["sample", "--judge", "{judge}", "--n", "2", "--out", "{out}", "--run", "{run}", "--depth", "3"],
               ["out"], ["judge", "run"]),
    "hybrid": (["hybrid", "--human", "{human}", "--judge", "{judge}", "--corpus", "{corpus}", "--mapping", "{mapping}",
                "--out", "{out}"], ["out"], ["human", "judge", "corpus", "mapping"]),
    "estimate": (["estimate", "--run", "{run}", "--human", "{human}", "--judge", "{judge}", "--mapping", "{mapping}",
                  "--json", "{json}"], ["json"], ["run", "human", "judge", "mapping"]),
    "rank-systems": (["rank-systems", "--run", "{run}", "--run", "{run_b}", "--human", "{human}", "--judge",
                      "{judge}", "--json", "{json}"], ["json"], ["run", "run_b", "human", "judge"]),
    "compare-ppi": (["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--human", "{human}", "--judge", "{judge}",
                     "--mapping", "{mapping}", "--json", "{json}"], ["json"], ["run", "run_b", "human", "judge", "mapping"]),
    "evaluate-repeats": (["evaluate", "--run", "{run}", "--run", "{run_b}", "--qrels", "{qrels}", "--corpus", "{corpus}",
                          "--json", "{json}"], ["json"], ["run", "run_b", "qrels", "corpus"]),
    "ann-recall": (["ann-recall", "--run", "{run}", "--exact", "{run_b}", "--qrels", "{qrels}", "--json", "{json}"],
                   ["json"], ["run", "run_b", "qrels"]),
    "check": (["check", "--golden", "{golden}", "--corpus", "{corpus}", "--json", "{json}", "--stamp", "{stamp}"],
              ["json", "stamp"], ["corpus"]),
    "gate": (["gate", "--baseline", "{baseline}", "--current", "{current}", "--json", "{json}"], ["json"],
             ["baseline", "current"]),
    "history": (["history", "{baseline}", "{current}", "--html", "{html}", "--json", "{json}"], ["html", "json"],
                ["baseline", "current"]),
    "label": (["label", "{items}", "--no-browser", "--store", "{store}"], ["store"], ["items"]),
    "label-export": (["label", "{items}", "--store", "{store}", "--export", "{export}"], ["export"],
                     ["items", "store"]),
}
HOW = ("same", "symlink", "dotdot")


def _cases():
    for command, (_, outputs, inputs) in COMMANDS.items():
        for out in outputs:
            for role in inputs:
                for how in HOW:
                    yield pytest.param(command, out, role, how, id=f"{command}-{out}={role}-{how}")


@pytest.fixture(autouse=True)
def never_serve(monkeypatch):
    import relgrade.label._server as server

    monkeypatch.setattr(server, "serve", lambda *a, **k: (_ for _ in ()).throw(AssertionError("served")))


def _world(tmp_path: Path, fuzz_world) -> dict[str, Path]:
    files = fuzz_world.write_world(tmp_path)
    files["store"] = tmp_path / "store.sqlite"
    import sqlite3

    sqlite3.connect(files["store"]).close()  # an existing (empty) SQLite file: label --export needs one
    for name, suffix in (("json", ".json"), ("html", ".html"), ("out", ".jsonl"), ("export", ".csv"),
                         ("stamp", ".jsonl")):
        files[name] = tmp_path / f"result-{name}{suffix}"
    files["golden"] = tmp_path / "golden.jsonl"
    files["golden"].write_text("".join(json.dumps({"query_id": q, "query": f"query {q}", "relevant_doc_ids": ["d1"]})
                                       + "\n" for q in ("q1", "q2")))
    for name in ("baseline", "current"):
        files[name] = tmp_path / f"{name}.json"
        assert main(["evaluate", "--run", str(files["run"]), "--qrels", str(files["qrels"]), "--n-boot", "20",
                     "--json", str(files[name])]) == 0
    return files


def _pointing(tmp_path: Path, target: Path, how: str) -> str:
    if how == "same":
        return str(target)
    if how == "symlink":
        link = tmp_path / "links" / f"to-{target.name}"
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(target)
        return str(link)
    sub = tmp_path / "sub"
    sub.mkdir(exist_ok=True)
    return str(sub / ".." / target.name)


@pytest.mark.parametrize("command,out,role,how", list(_cases()))
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, fuzz_world, command, out, role, how):
    files = _world(tmp_path, fuzz_world)
    before = {k: p.read_bytes() for k, p in files.items() if p.is_file()}
    values = {k: str(v) for k, v in files.items()}
    values[out] = _pointing(tmp_path, files[role], how)
    argv = [part.format(**values) for part in COMMANDS[command][0]]
    code = main(argv)
    stdout, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, stdout, err)
    assert len(lines) == 1 and lines[0].startswith("relgrade: error: ") and "same file" in lines[0], err
    assert "Traceback" not in err + stdout
    for k, data in before.items():
        assert files[k].read_bytes() == data, f"{k} was changed"


@pytest.mark.parametrize("command", ["judge-details", "hybrid-stale", "calibrate-both"])
def test_derived_and_twin_outputs_are_refused(tmp_path, capsys, fuzz_world, command):
    """An input that is the *details* file of --out (judge), the stale file of --out (hybrid), or two outputs that
    are one file (calibrate --json and --report)."""
    files = _world(tmp_path, fuzz_world)
    if command == "judge-details":
        (tmp_path / "c.details.jsonl").write_bytes(files["corpus"].read_bytes())
        argv = ["judge", "--run", str(files["run"]), "--corpus", str(tmp_path / "c.details.jsonl"),
                "--store", str(files["store"]), "--out", str(tmp_path / "c"), *JUDGE]
    elif command == "hybrid-stale":
        (tmp_path / "h.jsonl.stale.jsonl").write_bytes(files["judge"].read_bytes())
        argv = ["hybrid", "--human", str(files["human"]), "--judge", str(tmp_path / "h.jsonl.stale.jsonl"),
                "--out", str(tmp_path / "h.jsonl")]
    else:
        argv = ["calibrate", "--judge", str(files["judge"]), "--human", str(files["human"]),
                "--json", str(tmp_path / "r.out"), "--report", str(tmp_path / "x" / ".." / "r.out")]
        (tmp_path / "x").mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "same file" in err[0], err


def test_judge_out_equal_to_the_default_store_is_refused(tmp_path, capsys, monkeypatch, fuzz_world):
    """No --store: the store is $RELGRADE_STORE (else .relgrade/judgments.sqlite); --out may not be it."""
    files = _world(tmp_path, fuzz_world)
    monkeypatch.setenv("RELGRADE_STORE", str(tmp_path / "env.sqlite"))
    argv = ["judge", "--run", str(files["run"]), "--corpus", str(files["corpus"]), "--out",
            str(tmp_path / "env.sqlite-wal"), *JUDGE]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "same file as --store" in err and "-wal" in err


def test_demo_refuses_a_store_it_would_overwrite_and_a_url(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--store", str(out / "summary.json")]) == 2
    assert "a file the demo writes" in capsys.readouterr().err
    assert main(["demo", "--out", str(out), "--store", "postgresql://u:hunter22@127.0.0.1:9/db"]) == 2
    err = capsys.readouterr().err
    assert "hunter22" not in err and len(err.strip().splitlines()) == 1
    assert not (out / "runs").exists()  # refused before anything was written


# ---------------------------------------------------------------------------------------------- derived outputs (issue 34)
# A file a command derives from an output's name (judge's details, hybrid's stale labels and calibration, sample's
# judge grades, a SQLite file's companions) is an output too: pointed at every input of the command (as given,
# through a symbolic link, through '..'), it is exit 2 before anything is read, and the input is unchanged.
# command -> (argv with {role} placeholders, the output role whose side files are derived, the side kind, inputs)
SIDES = {  # the side files each writer puts beside its output, as the README names them
    "judge": {"its details file": lambda p: Path(f"{p}.details.jsonl")},
    "hybrid": {"its stale labels": lambda p: Path(f"{p}.stale.jsonl"),
               "its judge calibration": lambda p: Path(f"{p}.calibration.json")},
    "items": {"its judge grades": lambda p: Path(p).with_name(f"{Path(p).stem}.judge{Path(p).suffix}")},
    "sqlite": {f"its {c} file": (lambda p, c=c: Path(f"{p}{c}")) for c in ("-wal", "-shm", "-journal")},
}
DERIVING = {
    "judge": (COMMANDS["judge"][0], "out", "judge", ["run", "corpus", "store"]),
    "hybrid": (COMMANDS["hybrid"][0], "out", "hybrid", ["human", "judge", "corpus", "mapping"]),
    "sample": (COMMANDS["sample"][0], "out", "items", ["judge", "run"]),
    "label": (COMMANDS["label"][0], "store", "sqlite", ["items"]),
}


def test_the_side_files_are_the_ones_the_writers_use():
    from relgrade.io._outputs import SIDE_FILES

    assert {k: [w for w, _ in v] for k, v in SIDE_FILES.items()} == {k: list(v) for k, v in SIDES.items()}
    for kind, sides in SIDE_FILES.items():
        for what, make in sides:
            assert Path(make("dir/items.csv")) == SIDES[kind][what]("dir/items.csv")


def _derived_cases():
    for command, (_, _, kind, inputs) in DERIVING.items():
        for what in SIDES[kind]:
            for role in inputs:
                for how in HOW:
                    yield pytest.param(command, what, role, how, id=f"{command}-{what.split()[-2]}={role}-{how}")


@pytest.mark.parametrize("command,what,role,how", list(_derived_cases()))
def test_a_derived_output_that_is_an_input_is_refused(tmp_path, capsys, fuzz_world, command, what, role, how):
    files = fuzz_world.write_world(tmp_path)
    files["store"] = tmp_path / "store.sqlite"
    argv, out_role, kind, _ = DERIVING[command]
    out = tmp_path / ("made.csv" if kind == "items" else "made.jsonl" if kind == "hybrid" else "made")
    derived = SIDES[kind][what](out)  # the input is put where the output's side file goes
    source = files[role]
    derived.write_bytes(source.read_bytes() if source.is_file() else b"")
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    values = {k: str(v) for k, v in files.items()}
    values[out_role] = str(out)
    values[role] = _pointing(tmp_path, derived, how)
    code = main([part.format(**values) for part in argv])
    stdout, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, stdout, err)
    assert len(lines) == 1 and "same file" in lines[0] and what in lines[0], err
    assert "Traceback" not in err + stdout
    for p, data in before.items():
        assert p.read_bytes() == data, f"{p.name} was changed"


# inputs whose side files the command reads (a hybrid set's stale labels and calibration, an items file's judge
# grades) against every output of the command: command -> (argv, input role, side kind, output roles)
READING = {
    "evaluate": (COMMANDS["evaluate"][0], "qrels", "hybrid", ["json"]),
    "compare": (COMMANDS["compare"][0], "qrels", "hybrid", ["json"]),
    "label": (["label", "{items}", "--no-browser", "--show-judge", "--store", "{store}"], "items", "items", ["store"]),
    "label-export": (COMMANDS["label-export"][0], "items", "items", ["export"]),
}


def _reading_cases():
    for command, (_, _, kind, outputs) in READING.items():
        for what in SIDES[kind]:
            for out in outputs:
                yield pytest.param(command, what, out, id=f"{command}-{out}={what.split()[-2]}")


@pytest.mark.parametrize("command,what,out", list(_reading_cases()))
def test_an_output_that_is_a_side_file_of_an_input_is_refused(tmp_path, capsys, fuzz_world, command, what, out):
    files = _world(tmp_path, fuzz_world)
    argv, role, kind, _ = READING[command]
    side = SIDES[kind][what](files[role])
    side.write_text("kept\n")
    values = {k: str(v) for k, v in files.items()}
    values[out] = str(side)
    code = main([part.format(**values) for part in argv])
    stdout, err = capsys.readouterr()
    assert code == 2, (code, stdout, err)
    assert len(err.strip().splitlines()) == 1 and "same file" in err and what in err, err
    assert side.read_text() == "kept\n"


def test_an_input_that_is_a_companion_of_the_store_is_refused(tmp_path, capsys, fuzz_world):
    """The store writes its -wal file: a run file of that name would be destroyed by the first judgment."""
    files = _world(tmp_path, fuzz_world)
    wal = tmp_path / "store.sqlite-wal"
    wal.write_bytes(files["run"].read_bytes())
    argv = ["judge", "--run", str(wal), "--corpus", str(files["corpus"]), "--store", str(files["store"]),
            "--out", str(tmp_path / "j.qrels"), *JUDGE]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--run" in err and "-wal file" in err and len(err.strip().splitlines()) == 1, err
    assert wal.read_bytes() == files["run"].read_bytes()
