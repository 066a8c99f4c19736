"""Fixtures for the judge tests: the fake OpenAI server (tests/fakes/openai_server.py) and run files."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

FAKES = Path(__file__).resolve().parents[1] / "fakes" / "openai_server.py"
RELGRADE = str(Path(sys.executable).with_name("relgrade"))
FAKE_KEY = "sk-fake-7Qm3xZ9pL2vR8tK4nW6yB1cD5"


def load_fakes():
    if "relgrade_fake_openai_server" in sys.modules:
        return sys.modules["relgrade_fake_openai_server"]
    spec = importlib.util.spec_from_file_location("relgrade_fake_openai_server", FAKES)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fakes():
    return load_fakes()


@pytest.fixture
def server(fakes):
    with fakes.FakeOpenAIServer(hang_seconds=3.0, lifetime=300) as srv:
        yield srv


def write_run(path: Path, queries: dict[str, tuple[str, list[tuple[str, str]]]]) -> Path:
    """A RAG JSONL run: {qid: (query, [(doc_id, text), ...])} in rank order."""
    with open(path, "w", encoding="utf-8") as fh:
        for qid, (query, docs) in queries.items():
            fh.write(json.dumps({"query_id": qid, "query": query,
                                 "results": [{"doc_id": d, "text": t} for d, t in docs]}) + "\n")
    return path


def fast_config(**kw):
    from relgrade.judge import JudgeConfig

    base = dict(concurrency=8, timeout=2.0, backoff_initial=0.05, backoff_max=0.2, backoff_jitter=0.05)
    base.update(kw)
    return JudgeConfig(**base)


@pytest.fixture
def make_run():
    return write_run


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
