"""Fixtures for the judge tests: the fake server at hand, and a config per transport (fakes, make_run: tests/conftest.py)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

FAKE_KEY = "sk-fake-7Qm3xZ9pL2vR8tK4nW6yB1cD5"


@pytest.fixture
def server(fakes):
    with fakes.FakeOpenAIServer(hang_seconds=3.0, lifetime=300) as srv:
        yield srv


def fast_config(**kw):
    from relgrade.judge import JudgeConfig

    base = dict(concurrency=8, timeout=2.0, backoff_initial=0.05, backoff_max=0.2, backoff_jitter=0.05)
    base.update(kw)
    return JudgeConfig(**base)


@pytest.fixture(params=["http", "litellm"])
def config(request):
    """``fast_config``, once per transport: the lean aiohttp path (the default for an openai/ model at an
    api_base) and litellm (every other provider), so each fault test holds for both."""

    def make(**kw):
        kw.setdefault("transport", request.param)
        return fast_config(**kw)

    return make


@pytest.fixture
def fake_key():
    return FAKE_KEY


@pytest.fixture
def pg_url():
    """A fresh schema on the PostgreSQL server of ``RELGRADE_TEST_PG`` (skipped outside CI without it, failed in CI)."""
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
