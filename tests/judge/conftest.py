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
