"""Fixtures for the ragas tests: the real ragas (skipped when missing) and the fake OpenAI server."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no analytics calls from ragas (no internet here)

FAKES = Path(__file__).resolve().parents[1] / "fakes" / "openai_server.py"
RELGRADE = str(Path(sys.executable).with_name("relgrade"))
FAKE_KEY = "sk-fake-ragas-3Lr8Qx"


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
    with fakes.FakeOpenAIServer(lifetime=300) as srv:
        yield srv


def fast_config(**kw):
    from relgrade.judge import JudgeConfig

    base = dict(concurrency=8, timeout=5.0, backoff_initial=0.05, backoff_max=0.2, backoff_jitter=0.05)
    base.update(kw)
    return JudgeConfig(**base)


def write_run(path: Path, queries: dict[str, tuple[str, list[tuple[str, str]]]]) -> Path:
    """A RAG JSONL run: {qid: (query, [(doc_id, text), ...])} in rank order."""
    with open(path, "w", encoding="utf-8") as fh:
        for qid, (query, docs) in queries.items():
            fh.write(json.dumps({"query_id": qid, "query": query,
                                 "results": [{"doc_id": d, "text": t} for d, t in docs]}) + "\n")
    return path
