"""A store value that looks like a database URL or DSN opens PostgreSQL or is a one-line error; never a SQLite file
named after it, never its password printed (issue 34).

Every spelling runs through ``judge --dry-run``, ``judge --out`` and ``judge --batch-status``, given by ``--store`` and
by ``$RELGRADE_STORE``, from an empty working folder, against the real PostgreSQL server of the tests (its trust
authentication ignores passwords, so a honoured spelling connects into the test's own schema) and the fake OpenAI
server. A honoured spelling writes its judgment into PostgreSQL; any other is exit 2 with one line; in every case no
file but the outputs appears and the password (``Zq9…``) is printed nowhere.
"""

from __future__ import annotations

import os

import pytest

from relgrade.cli import main

MODEL = "openai/gpt-4o-mini"
PW = "Zq9pw-Secret-77"
PG = os.environ.get("RELGRADE_TEST_PG", "postgresql://postgres@127.0.0.1:55432/postgres")
HOSTPORT = PG.split("@", 1)[1].split("/", 1)[0] if "@" in PG else "127.0.0.1:55432"
HOST, PORT = HOSTPORT.rsplit(":", 1)

HONOURED = {  # {} is the test schema's query string (options=-csearch_path...)
    "upper_case": f"POSTGRESQL://postgres:{PW}@{HOSTPORT}/postgres?{{}}",
    "mixed_case_driver": f"PostgreSQL+Psycopg://postgres:{PW}@{HOSTPORT}/postgres?{{}}",
    "psycopg2_driver": f"postgresql+psycopg2://postgres:{PW}@{HOSTPORT}/postgres?{{}}",
    "postgres_scheme": f"postgres://postgres:{PW}@{HOSTPORT}/postgres?{{}}",
    "leading_space": f" postgresql://postgres:{PW}@{HOSTPORT}/postgres?{{}}",
    "trailing_spaces": f"postgresql://postgres:{PW}@{HOSTPORT}/postgres?{{}}  \t",
    "key_value_dsn": f"host={HOST} port={PORT} user=postgres password={PW} dbname=postgres {{}}",
    "key_value_dsn_quoted": f"host={HOST} port={PORT} user=postgres password='{PW} x' dbname=postgres {{}}",
}
REFUSED = {
    "one_slash": f"postgresql:/postgres:{PW}@{HOSTPORT}/postgres",
    "no_slash": f"postgresql:postgres:{PW}@{HOSTPORT}/postgres",
    "four_slashes": f"postgresql:////postgres:{PW}@{HOSTPORT}/postgres",
    "upper_one_slash": f"POSTGRES:/postgres:{PW}@{HOSTPORT}/postgres",
    "no_scheme": f"postgres:{PW}@{HOSTPORT}/postgres",
    "mysql": f"mysql://root:{PW}@{HOSTPORT}/judgments",
    "mariadb_driver": f"mariadb+pymysql://root:{PW}@{HOSTPORT}/judgments",
    "sqlite_url": "sqlite:///judgments.sqlite",
    "jdbc": f"jdbc:postgresql://{HOSTPORT}/postgres?user=postgres&password={PW}",
    "https": f"https://postgres:{PW}@{HOSTPORT}/postgres",
    "dsn_closed_port": f"host=127.0.0.1 port=1 user=postgres password={PW} connect_timeout=2",
    "dsn_upper_keyword": f"HOST={HOST} PORT={PORT} PASSWORD={PW}",
    "dsn_unterminated_quote": f"host={HOST} password='{PW}",
    "blank": "   ",
    "padded_path": " judgments.sqlite ",
}


def _spec(template: str, pg_url: str) -> str:
    query = pg_url.split("?", 1)[1]  # options=-csearch_path%3Dt_...
    if "{}" not in template:
        return template
    if template.startswith("host="):
        schema = query.split("%3D", 1)[1]
        return template.replace("{}", f"options='-csearch_path={schema}'")
    return template.replace("{}", query)


def _judgments(pg_url: str) -> int:
    import psycopg

    with psycopg.connect(pg_url) as db:
        return db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]


def _commands(run, server_url, out):
    base = ["judge", "--run", str(run), "--model", MODEL, "--api-base", server_url]
    return {"dry_run": base + ["--dry-run"], "out": base + ["--out", str(out)], "batch_status": ["judge", "--batch-status"]}


@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.parametrize("name", sorted(HONOURED) + sorted(REFUSED))
def test_a_database_spelling_opens_postgres_or_is_one_line_never_a_file(server, tmp_path, make_run, pg_url, capsys,
                                                                        monkeypatch, fake_key, name, how):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    monkeypatch.delenv("RELGRADE_STORE", raising=False)
    spec = _spec(HONOURED.get(name) or REFUSED[name], pg_url)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [("d1", "a passage [[grade=2]]")])})
    if how == "env":
        monkeypatch.setenv("RELGRADE_STORE", spec)
    store = ["--store", spec] if how == "option" else []
    for command, argv in _commands(run, server.base_url, work / "o.qrels").items():
        code = main(argv + store)
        out, err = capsys.readouterr()
        assert "Zq9" not in out + err, (command, out, err)
        assert "Traceback" not in out + err
        if name in HONOURED:
            assert code == 0, (command, err)
        else:
            lines = err.strip().splitlines()
            assert code == 2 and len(lines) == 1 and lines[0].startswith("relgrade: error:"), (command, err)
            if not name.startswith("dsn"):  # a spelling error names where the value came from; libpq's, the store
                assert ("$RELGRADE_STORE" if how == "env" else "--store") in lines[0], lines[0]
    assert sorted(p.name for p in work.iterdir()) == (["o.qrels", "o.qrels.details.jsonl"] if name in HONOURED
                                                      else []), "a file named after the store value"
    if name in HONOURED:  # the judgment went to PostgreSQL, and a re-run finds it there
        assert _judgments(pg_url) == 1 and server.stats()["paid"] == 1


@pytest.mark.parametrize("name", ["upper_case", "one_slash", "mysql", "key_value_dsn"])
def test_the_labeling_pages_store_is_never_a_file_named_after_a_database(tmp_path, monkeypatch, capsys, name):
    """``relgrade label --store`` keeps human labels in a SQLite file: a database spelling is one line, no file."""
    spec = (HONOURED.get(name) or REFUSED[name]).replace("?{}", "").replace("{}", "")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "items.csv").write_text("query_id,query,doc_id,text\nq1,what,d1,some text\n")
    for extra in (["--export", "out.csv"], ["--no-browser", "--port", "1"]):
        assert main(["label", "items.csv", "--store", spec, *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "labeling page keeps its labels in a SQLite file" in err[0] and "Zq9" not in err[0]
    assert sorted(p.name for p in work.iterdir()) == ["items.csv"]
