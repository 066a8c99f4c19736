"""The fake OpenAI-compatible server of the tests (tests/fakes/openai_server.py), loaded by path for the benchmarks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "openai_server.py"


def load_fakes():
    if "relgrade_fake_openai_server" in sys.modules:
        return sys.modules["relgrade_fake_openai_server"]
    spec = importlib.util.spec_from_file_location("relgrade_fake_openai_server", SERVER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
