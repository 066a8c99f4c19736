"""No password of a ``postgresql://`` store URL is ever printed, whatever the URL's shape (issue 24).

Every shape below carries secret fragments marked ``Zq9`` and ``Xw7`` (the part of a password after an ``@``, which
libpq reads as part of the host name). Each runs through every place a store URL is used (``judge --dry-run``,
``judge --out``, ``judge --batch-status``; by ``--store`` and by ``$RELGRADE_STORE``) against the real PostgreSQL
server of the tests (its trust authentication ignores passwords, so some shapes connect) or a closed port. Some
succeed, most fail; none prints a fragment, and each failure is one line.
"""

from __future__ import annotations

import os

import pytest

from relgrade._redact import redact_text, redact_url
from relgrade.cli import main

PG = os.environ.get("RELGRADE_TEST_PG", "postgresql://postgres@127.0.0.1:55432/postgres")
HOSTPORT = PG.split("@", 1)[1].split("/", 1)[0] if "@" in PG else "127.0.0.1:55432"
FRAGMENTS = ("Zq9", "Xw7")
SHAPES = {
    "plain": f"postgresql://postgres:Zq9secret@{HOSTPORT}/postgres",
    "bad_percent_escape": f"postgresql://postgres:Zq9%ZZsecret@{HOSTPORT}/postgres",
    "unclosed_bracket_host": "postgresql://postgres:Zq9secret@[::1/postgres",
    "unclosed_bracket_user": f"postgresql://[postgres:Zq9secret@{HOSTPORT}/postgres",
    "at_in_password": f"postgresql://postgres:Zq9@Xw7secret@{HOSTPORT}/postgres",
    "slash_and_question_in_password": f"postgresql://postgres:Zq9/se?Xw7@{HOSTPORT}/postgres",
    "query_password": "postgresql://postgres@127.0.0.1:1/postgres?password=Zq9secret",
    "query_password_percent_name": "postgresql://postgres@127.0.0.1:1/postgres?pass%77ord=Zq9secret",
    "query_sslpassword": f"postgresql://postgres@{HOSTPORT}/postgres?sslpassword=Zq9secret&sslmode=bogus",
    "unknown_option_then_password": "postgresql://postgres@127.0.0.1:1/postgres?badopt=1&password=Zq9secret",
    "bad_port": "postgresql://postgres:Zq9secret@127.0.0.1:notaport/postgres",
    "space_in_password": f"postgresql://postgres:Zq9 Xw7@{HOSTPORT}/postgres",
    "postgres_scheme": "postgres://postgres:Zq9secret@127.0.0.1:1/postgres",
    "no_password": "postgresql://nobodyZq9@127.0.0.1:1/postgres",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_redaction_functions_leave_no_fragment(shape):
    url = SHAPES[shape]
    shown = redact_url(url)
    assert shown.startswith(("postgresql://", "postgres://"))
    if shape != "no_password":
        assert not any(f in shown for f in FRAGMENTS), shown
    # a driver quoting any piece of the URL back
    for quoted in (url, url.split("://", 1)[1], url.split("@")[-1], url.rsplit("@", 1)[0]):
        text = redact_text(f'connection failed: "{quoted}" host=x password=Zq9secret', url)
        assert not any(f in text for f in FRAGMENTS if shape != "no_password" or f != "Zq9"), text


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("how", ["option", "env"])
def test_no_command_prints_a_password(tmp_path, capsys, monkeypatch, make_run, pg_url, shape, how):
    url = SHAPES[shape]
    if HOSTPORT in url:  # a shape that may connect: into the test's own schema, never the server's public one
        url += ("&" if "?" in url else "?") + pg_url.split("?", 1)[1]
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", "a passage [[grade=2]]")])})
    store = ["--store", url] if how == "option" else []
    if how == "env":
        monkeypatch.setenv("RELGRADE_STORE", url)
    base = ["judge", "--run", str(run), "--model", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1",
            "--max-attempts", "1", *store]
    for argv in (base + ["--dry-run"], base + ["--out", str(tmp_path / "o.qrels")], ["judge", "--batch-status", *store]):
        code = main(argv)
        out, err = capsys.readouterr()
        for fragment in FRAGMENTS:
            if shape == "no_password" and fragment == "Zq9":
                continue  # a user name, not a secret
            assert fragment not in out + err, (argv[-2:], out, err)
        assert "Traceback" not in out + err
        if code == 2:
            assert len(err.strip().splitlines()) == 1, err
        else:
            assert code in (0, 1), (code, err)
