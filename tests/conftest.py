"""Shared fixtures: the fake OpenAI-compatible server (tests/fakes/openai_server.py) and run files.

CI skip policy: under ``CI=true`` (``.ci/run``, GitHub Actions) a *required* test that skips is a
failure, so CI cannot go green with a whole feature untested because chromium, the local model,
ragas, PostgreSQL or the Ray head was missing. Required: tests marked ``required``, ``local_model``, ``browser``,
``postgres`` or ``ray``, and any test or module whose skip reason names one of :data:`REQUIRED_DEPENDENCIES`.
Outside CI such skips stay skips (a laptop without chromium can still run the rest).

Two workers: the README's test command is ``pytest -n 2 --dist loadfile`` (pytest-xdist): a module's tests share a
worker, so the cold demo of :func:`demo_run` (tests/demo_pipeline/test_demo.py) runs once, and the Ray head's tests
(one module) run one at a time on its 2 CPUs. (``--dist loadgroup`` would let modules share a worker, but with pytest
9.2 and pytest-xdist 3.8 its ``xdist_group`` marks are not applied: measured, the demo ran in both workers.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parent / "fakes" / "openai_server.py"

REQUIRED_MARKERS = ("required", "local_model", "browser", "postgres", "ray")
REQUIRED_DEPENDENCIES = ("chromium", "chromedriver", "selenium", "llama_cpp", "llama-cpp", "ragas", "postgresql",
                         "postgres", "psycopg", "pg_ctl", "initdb", "nbclient", "nbformat")


def pytest_configure(config):
    config.addinivalue_line("markers", "required: must run in CI (CI=true turns its skip into a failure)")
    config.addinivalue_line("markers", "browser: drives headless Chromium (required in CI)")
    config.addinivalue_line("markers", "postgres: needs a PostgreSQL server (required in CI)")
    config.addinivalue_line("markers", "ray: needs the local Ray head of RELGRADE_TEST_RAY (required in CI)")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return str(longrepr[2])
    return str(longrepr or "")


def required_skip(reason: str, markers=()) -> bool:
    """True when a skip with this reason (or of a test with these marker names) hides a required feature."""
    text = reason.lower()
    return any(m in REQUIRED_MARKERS for m in markers) or any(dep in text for dep in REQUIRED_DEPENDENCIES)


def _fail(report, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = (f"CI=true: a required test was skipped ({reason.strip()}); install what it needs "
                       "(see .ci/run) instead of letting CI pass without it")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (_in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if required_skip(reason, [m.name for m in item.iter_markers()]):
        _fail(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped:  # a module-level importorskip / skip(allow_module_level=True)
        reason = _skip_reason(report)
        if required_skip(reason):
            _fail(report, reason)


def _load(name: str, path: Path):
    """A helper module of the tests, loaded once by path (the tests run with ``--import-mode=importlib``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_fakes():
    """The fake server module, loaded once by path."""
    return _load("relgrade_fake_openai_server", FAKES)


def write_run(path: Path, queries: dict[str, tuple[str, list[tuple[str, str]]]]) -> Path:
    """A RAG JSONL run: {qid: (query, [(doc_id, text), ...])} in rank order."""
    with open(path, "w", encoding="utf-8") as fh:
        for qid, (query, docs) in queries.items():
            fh.write(json.dumps({"query_id": qid, "query": query,
                                 "results": [{"doc_id": d, "text": t} for d, t in docs]}) + "\n")
    return path


@pytest.fixture
def fakes():
    return load_fakes()


@pytest.fixture
def batch_fakes():
    """The fake provider batch endpoint (tests/fakes/batch_server.py)."""
    return _load("relgrade_fake_batch_server", FAKES.with_name("batch_server.py"))


@pytest.fixture(scope="session")
def fuzz_world():
    """The small valid world of files and its malformed variants (tests/fuzz/fuzz_world.py)."""
    return _load("relgrade_fuzz_world", Path(__file__).resolve().parent / "fuzz" / "fuzz_world.py")


@pytest.fixture
def make_run():
    return write_run


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``relgrade demo`` with its defaults, cold, run once per session from a fresh directory as the README says
    (the local judge grades 329 pairs: the suite's largest cost). Every test that needs the demo's outputs (its
    report, summary, calibration page, judgment store) reads them here instead of running it again:
    ``{"work", "out", "stdout", "stderr"}``."""
    import contextlib
    import io

    pytest.importorskip("llama_cpp")
    from relgrade.cli import main

    work = tmp_path_factory.mktemp("demo")
    stdout, stderr = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["demo"])
    finally:
        os.chdir(cwd)
    assert code == 0, stderr.getvalue()[-2000:]
    run = {"work": work, "out": work / "relgrade-demo", "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    _DEMO_RUNS.append(run)
    return run


_DEMO_RUNS: list[dict] = []


@pytest.fixture
def demo_store(tmp_path):
    """A copy of the session's demo judgment store when the demo has already run in this session (the full suite
    runs tests/demo_pipeline first), else None: a test that judges the demo's pairs with the local model reads its
    answers there instead of computing them again (the same model and prompt give the same grades)."""
    if not _DEMO_RUNS:
        return None
    import shutil

    copy = tmp_path / "demo-judgments.sqlite"
    shutil.copyfile(_DEMO_RUNS[0]["work"] / ".relgrade" / "judgments.sqlite", copy)
    return copy


@pytest.fixture
def pg_url():
    """A fresh schema on the PostgreSQL server of ``RELGRADE_TEST_PG`` (skipped outside CI without it, failed in CI); for
    the judge tests and the fuzz suite."""
    import uuid

    base = os.environ.get("RELGRADE_TEST_PG")
    if not base:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but RELGRADE_TEST_PG is not set: .ci/run must start PostgreSQL")
        pytest.skip("RELGRADE_TEST_PG not set (a postgresql:// URL of a test server)")
    psycopg = pytest.importorskip("psycopg") if os.environ.get("CI") != "true" else __import__("psycopg")
    schema = f"t_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(base, autocommit=True, connect_timeout=5) as db:
            db.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the PostgreSQL server of RELGRADE_TEST_PG is unreachable: {exc}")
        pytest.skip(f"PostgreSQL server unreachable: {exc}")
    sep = "&" if "?" in base else "?"
    yield f"{base}{sep}options=-csearch_path%3D{schema}"
    with psycopg.connect(base, autocommit=True) as db:
        db.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="session")
def ray_address():
    """The address of the local Ray head the Ray tests share (one per session: ``RELGRADE_TEST_RAY``, else
    ``RAY_ADDRESS``; .ci/run starts it with ``ray start --head`` on 127.0.0.1). Skipped outside CI without one, failed in
    CI (mark the test ``ray``)."""
    address = os.environ.get("RELGRADE_TEST_RAY") or os.environ.get("RAY_ADDRESS")
    if not address:
        if _in_ci():
            pytest.fail("CI=true but RELGRADE_TEST_RAY is not set: .ci/run must start a Ray head")
        pytest.skip("RELGRADE_TEST_RAY not set (the address of a local Ray head: ray start --head, see .ci/run)")
    if importlib.util.find_spec("ray") is None:
        if _in_ci():
            pytest.fail("CI=true but ray is not installed: the dev extra installs it")
        pytest.skip("ray not installed (pip install 'relgrade[ray]')")
    return address
