"""Fixtures for the ragas tests: the real ragas (skipped when missing) and the fake OpenAI server."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no analytics calls from ragas (no internet here)

FAKE_KEY = "sk-fake-ragas-3Lr8Qx"


@pytest.fixture
def server(fakes):
    with fakes.FakeOpenAIServer(lifetime=300) as srv:
        yield srv


def fast_config(**kw):
    from relgrade.judge import JudgeConfig

    base = dict(concurrency=8, timeout=5.0, backoff_initial=0.05, backoff_max=0.2, backoff_jitter=0.05)
    base.update(kw)
    return JudgeConfig(**base)


