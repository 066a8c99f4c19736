"""The README's pytest example (*Use it in CI*, *In pytest*) runs as written (issue 36, item 11): on the demo's golden
set it passes for the BM25 baseline, and for the TF-IDF candidate it fails with the message the README quotes."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import relgrade

ROOT = Path(__file__).resolve().parents[1]


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("### In pytest\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_pytest_example_passes_and_fails_as_quoted(tmp_path, monkeypatch):
    from relgrade.demo import _data, write_runs

    code = re.search(r"```python\n(.*?)```", _section(), re.S).group(1)
    quoted = re.search(r"```text\n(.*?)```", _section(), re.S).group(1).rstrip("\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval").mkdir()
    shutil.copyfile(_data.golden_path(), tmp_path / "eval" / "golden.jsonl")
    runs = write_runs(tmp_path / "runs", k=10)
    golden = relgrade.read_golden("eval/golden.jsonl")
    baseline = relgrade.evaluate(golden, relgrade.read_run(runs["bm25"]), ["recall@5", "ndcg@10"])
    (tmp_path / "eval" / "baseline.json").write_text(json.dumps(baseline.to_dict()))
    namespace: dict = {}
    exec(compile(code, "README.md (In pytest)", "exec"), namespace)  # noqa: S102 (the README's own block)
    tests = [v for k, v in namespace.items() if k.startswith("test_")]
    assert len(tests) == 1

    shutil.copyfile(runs["bm25"], "run.jsonl")
    tests[0]()  # the baseline against itself and the floor: passes
    shutil.copyfile(runs["tfidf"], "run.jsonl")
    with pytest.raises(AssertionError) as failed:
        tests[0]()
    assert os.path.exists("run.jsonl")
    assert str(failed.value) == quoted
