"""Shared fixtures: the fake OpenAI-compatible server (tests/fakes/openai_server.py) and run files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parent / "fakes" / "openai_server.py"


def load_fakes():
    """The fake server module, loaded once by path (the tests run with ``--import-mode=importlib``)."""
    if "relgrade_fake_openai_server" in sys.modules:
        return sys.modules["relgrade_fake_openai_server"]
    spec = importlib.util.spec_from_file_location("relgrade_fake_openai_server", FAKES)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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
def make_run():
    return write_run
