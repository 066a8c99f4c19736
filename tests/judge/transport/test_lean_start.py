"""A lean start: the http transport never imports litellm, ``relgrade --help`` imports no numpy/pandas,
and the price table and token counts read without litellm agree with litellm's and tiktoken's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("litellm", "openai", "numpy", "pandas", "llama_cpp", "tiktoken")


def _loaded_after(code: str, env_extra: dict[str, str] | None = None) -> dict:
    probe = (f"{code}\nimport sys, json\n"
             f"print('LOADED', json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    env = {**os.environ, **(env_extra or {})}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert "LOADED" in proc.stdout, proc.stderr[-2000:]
    return {"loaded": json.loads(proc.stdout.split("LOADED", 1)[1]), "stdout": proc.stdout}


def test_help_imports_no_heavy_module():
    out = _loaded_after("from relgrade.cli import main\nmain(['--help'])")
    assert "judge" in out["stdout"] and "calibrate" in out["stdout"]  # every command still listed
    assert out["loaded"] == []


def test_import_and_an_http_judge_do_not_import_litellm():
    code = """
import relgrade.judge
from relgrade.judge import JudgeConfig
from relgrade.judge.transport._call import Caller
caller = Caller("openai/gpt-4o-mini", JudgeConfig(transport="auto"), api_base="http://127.0.0.1:9/v1", api_key="sk-x")
assert caller.transport == "http" and caller.prices == (1.5e-07, 6e-07), caller.prices
"""
    assert _loaded_after(code)["loaded"] == []


def test_a_whole_http_judge_run_with_budget_and_tpm_never_imports_litellm(server, tmp_path, make_run, fake_key):
    run = make_run(tmp_path / "run.jsonl", {"q": ("tides", [(f"d{i}", f"passage {i} [[grade={i % 4}]]")
                                                             for i in range(6)])})
    code = f"""
from relgrade.cli import main
code = main(["judge", "--run", {str(run)!r}, "--model", "openai/gpt-4o-mini", "--api-base", {server.base_url!r},
             "--store", {str(tmp_path / "s.sqlite")!r}, "--out", {str(tmp_path / "o.qrels")!r},
             "--max-cost", "1", "--tpm", "1000000"])
assert code == 0, code
"""
    out = _loaded_after(code, {"OPENAI_API_KEY": fake_key})
    assert "litellm" not in out["loaded"] and "openai" not in out["loaded"]
    assert server.stats()["paid"] == 6


def test_prices_match_litellm_without_importing_it():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from relgrade.judge.transport._prices import price_per_token, price_table

    table = price_table()
    assert len(table) > 1000  # the table litellm ships
    checked = 0
    for name in ["openai/gpt-4o-mini", "gpt-4o", "openai/gpt-4.1-nano", "mistral/mistral-small-latest",
                 "deepseek/deepseek-chat", "ollama/llama3", "anthropic/claude-3-5-haiku-20241022",
                 "openai/no-such-model"]:
        try:
            cin, cout = litellm.cost_per_token(model=name, prompt_tokens=1_000_000, completion_tokens=1_000_000)
            expected = (cin / 1e6, cout / 1e6)
        except Exception:  # noqa: BLE001 - litellm does not know the model
            expected = None
        ours = price_per_token(name)
        if expected is None:
            assert ours is None, name
        else:
            assert ours == pytest.approx(expected, rel=1e-9), name
            checked += 1
    assert checked >= 4


@pytest.mark.parametrize("model, encoding", [("openai/gpt-4o-mini", "o200k_base"), ("openai/gpt-4", "cl100k_base"),
                                             ("anthropic/claude-3-5-haiku-latest", "cl100k_base")])
def test_token_counts_are_tiktokens_with_the_files_litellm_ships(model, encoding, monkeypatch):
    import tiktoken

    from relgrade.judge.transport._prices import count_tokens, encoding_name, litellm_dir

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(litellm_dir() / "litellm_core_utils" / "tokenizers"))
    oracle = tiktoken.get_encoding(encoding)
    messages = [{"role": "system", "content": "You rate passages."},
                {"role": "user", "content": "Query: <<<QUERY ab>>> déjà vu 東京 1234567 <|endoftext|>\n\n  spaces"}]
    assert encoding_name(model) == encoding
    expected = 3 + sum(len(oracle.encode(m["content"], disallowed_special=())) + 3 for m in messages)
    assert count_tokens(model, messages) == expected
