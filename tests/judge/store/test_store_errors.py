"""The store and the outputs fail before the first paid call, in one line naming the file (issue 15),
and a dry run writes nothing (issue 18). Real SQLite files, corrupted or made read-only for real
(``chmod``; as root, where ``chmod`` does not stop writes, the immutable attribute ``chattr +i``)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from relgrade.cli import main
from relgrade.io import read_qrels

MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def env(monkeypatch, fake_key):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    monkeypatch.delenv("RELGRADE_STORE", raising=False)


def _run(tmp_path, make_run, n_queries=3, n_docs=4, name="run.jsonl"):
    spec = {f"q{q}": (f"question {q}", [(f"q{q}d{d}", f"passage {d} of {q} [[grade={(q + d) % 4}]]")
                                        for d in range(n_docs)]) for q in range(n_queries)}
    return make_run(tmp_path / name, spec)


def _judge(server, run, *extra):
    return main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, *extra])


def _one_line_error(capsys, *fragments):
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("relgrade: error:"), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def readonly():
    """Make a file or folder read-only for this process, for real; undone at teardown."""
    done: list[Path] = []

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
                pytest.skip("running as root without chattr +i: cannot make a path read-only")
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
        done.append(path)

    yield make
    for path in done:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o755 if path.is_dir() else 0o644)


def test_out_a_folder_fails_before_any_call(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    (tmp_path / "outdir").mkdir()
    assert _judge(server, run, "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "outdir")) == 2
    _one_line_error(capsys, "--out", "outdir", "is a folder")
    assert server.stats()["requests"] == 0


def test_out_in_a_missing_folder_fails_before_any_call(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    assert _judge(server, run, "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "nope" / "o.qrels")) == 2
    _one_line_error(capsys, "--out", "does not exist")
    assert server.stats()["requests"] == 0


def test_out_in_a_read_only_folder_fails_before_any_call(server, tmp_path, make_run, env, capsys, readonly):
    run = _run(tmp_path, make_run)
    folder = tmp_path / "ro"
    folder.mkdir()
    readonly(folder)
    assert _judge(server, run, "--store", str(tmp_path / "s.sqlite"), "--out", str(folder / "o.qrels")) == 2
    _one_line_error(capsys, "--out", "cannot write in")
    assert server.stats()["requests"] == 0


def test_details_path_a_folder_fails_before_any_call(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    (tmp_path / "o.qrels.details.jsonl").mkdir()
    assert _judge(server, run, "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, "details", "is a folder")
    assert server.stats()["requests"] == 0


def test_read_only_store_fails_before_any_call(server, tmp_path, make_run, env, capsys, readonly):
    run = _run(tmp_path, make_run)
    store = tmp_path / "s.sqlite"
    assert _judge(server, _run(tmp_path, make_run, 1, 1, "small.jsonl"), "--store", str(store), "--out", str(tmp_path / "a.qrels")) == 0
    capsys.readouterr()
    server.reset()
    readonly(store)
    assert _judge(server, run, "--store", str(store), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, str(store), "read-only")
    assert server.stats()["requests"] == 0


def test_store_in_a_read_only_folder_fails_before_any_call(server, tmp_path, make_run, env, capsys, readonly):
    run = _run(tmp_path, make_run)
    folder = tmp_path / "ro"
    folder.mkdir()
    readonly(folder)
    assert _judge(server, run, "--store", str(folder / "s.sqlite"), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, "s.sqlite")
    assert server.stats()["requests"] == 0
    assert not (folder / "s.sqlite").exists()


def _judged_store(server, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run, 6, 5)
    store = tmp_path / "s.sqlite"
    assert _judge(server, run, "--store", str(store), "--out", str(tmp_path / "first.qrels")) == 0
    capsys.readouterr()
    server.reset()
    return run, store


def test_corrupted_store_page_is_one_line_naming_the_file(server, tmp_path, make_run, env, capsys):
    run, store = _judged_store(server, tmp_path, make_run, capsys)
    data = bytearray(store.read_bytes())
    assert len(data) >= 3 * 4096
    data[4096:] = bytes((i * 131 + 7) % 256 for i in range(len(data) - 4096))  # every page after the header page
    store.write_bytes(bytes(data))
    assert _judge(server, run, "--store", str(store), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, str(store), "corrupted")
    assert server.stats()["requests"] == 0


def test_a_file_that_is_no_database(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    store = tmp_path / "s.sqlite"
    store.write_bytes(b"query_id,doc_id,grade\n" * 400)
    assert _judge(server, run, "--store", str(store), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, str(store))
    assert server.stats()["requests"] == 0
    assert store.read_bytes() == b"query_id,doc_id,grade\n" * 400


def test_foreign_judgments_table_is_refused(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    store = tmp_path / "s.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE judgments (id INTEGER PRIMARY KEY, name TEXT, score REAL)")
        db.execute("INSERT INTO judgments (name, score) VALUES ('theirs', 0.5)")
    db.close()
    assert _judge(server, run, "--store", str(store), "--out", str(tmp_path / "o.qrels")) == 2
    _one_line_error(capsys, str(store), "table judgments has columns id, name, score")
    assert server.stats()["requests"] == 0
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT name, score FROM judgments").fetchall() == [("theirs", 0.5)]
    db.close()


@pytest.mark.parametrize("tamper, fragment", [
    ("UPDATE judgments SET grade = 7 WHERE key = (SELECT MIN(key) FROM judgments)", "grade 7"),
    ("UPDATE judgments SET grade = NULL WHERE key = (SELECT MIN(key) FROM judgments)", "not a valid judgment"),
    ("UPDATE judgments SET record = '{not json' WHERE key = (SELECT MIN(key) FROM judgments)", "not a valid judgment"),
    ("UPDATE judgments SET status = 'great' WHERE key = (SELECT MIN(key) FROM judgments)", "not a valid judgment"),
])
def test_a_tampered_row_is_refused_never_written_to_qrels(server, tmp_path, make_run, env, capsys, tamper, fragment):
    run, store = _judged_store(server, tmp_path, make_run, capsys)
    with sqlite3.connect(store) as db:
        db.execute(tamper)
    db.close()
    out = tmp_path / "o.qrels"
    assert _judge(server, run, "--store", str(store), "--out", str(out)) == 2
    _one_line_error(capsys, str(store), fragment, "delete that row")
    assert not out.exists() and server.stats()["requests"] == 0
    assert main(["judge", "--run", str(run), "--model", MODEL, "--store", str(store), "--dry-run"]) == 2
    _one_line_error(capsys, str(store), fragment)


def test_dry_run_writes_nothing(server, tmp_path, make_run, env, capsys, monkeypatch):
    run = _run(tmp_path, make_run)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["judge", "--run", str(run), "--model", MODEL, "--dry-run"]) == 0
    assert "12 pooled pairs, 12 distinct, 0 from the store, 12 to judge" in capsys.readouterr().out
    assert list(work.iterdir()) == []  # no .relgrade/judgments.sqlite
    # With a store: read, not written (same bytes, no journal files left), cached pairs counted.
    store = tmp_path / "s.sqlite"
    assert _judge(server, _run(tmp_path, make_run, 1, 4, "small.jsonl"), "--store", str(store), "--out", str(tmp_path / "a.qrels")) == 0
    capsys.readouterr()
    before = store.read_bytes()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert main(["judge", "--run", str(run), "--model", MODEL, "--store", str(store), "--dry-run"]) == 0
    assert "12 distinct, 4 from the store, 8 to judge" in capsys.readouterr().out
    assert store.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == files
    assert list(work.iterdir()) == [] and server.stats()["requests"] == 4


def test_relgrade_store_env_selects_the_store(server, tmp_path, make_run, env, capsys, monkeypatch):
    run = _run(tmp_path, make_run, 1, 3)
    monkeypatch.setenv("RELGRADE_STORE", str(tmp_path / "team.sqlite"))
    monkeypatch.chdir(tmp_path)
    assert _judge(server, run, "--out", str(tmp_path / "o.qrels")) == 0
    assert "store " + str(tmp_path / "team.sqlite") in capsys.readouterr().out
    assert not (tmp_path / ".relgrade").exists()
    with sqlite3.connect(tmp_path / "team.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 3
    db.close()
    assert sum(len(v) for v in read_qrels(tmp_path / "o.qrels").labels.values()) == 3


def test_unreachable_postgres_store_is_one_line_without_the_password(server, tmp_path, make_run, env, capsys):
    run = _run(tmp_path, make_run)
    url = "postgresql://alice:S3cretPW9x@127.0.0.1:1/judgments"
    assert _judge(server, run, "--store", url, "--out", str(tmp_path / "o.qrels")) == 2
    captured = capsys.readouterr()
    line = _one_line_error(_Fixed(captured), "postgresql://alice")
    assert "S3cretPW9x" not in captured.err + captured.out
    assert "127.0.0.1" in line and server.stats()["requests"] == 0
    assert main(["judge", "--run", str(run), "--model", MODEL, "--store", url, "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert "S3cretPW9x" not in captured.err + captured.out and captured.err.startswith("relgrade: error:")


class _Fixed:
    def __init__(self, captured):
        self.captured = captured

    def readouterr(self):
        return self.captured
