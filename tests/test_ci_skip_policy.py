"""Under CI=true a skipped required test fails the run (tests/conftest.py); outside CI it stays a skip."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

TESTS = '''
import pytest

def test_runs():
    assert True

@pytest.mark.skipif(True, reason="needs Debian's chromium and chromium-driver")
def test_browser_dependency_missing():
    pass

@pytest.mark.required
def test_marked_required():
    pytest.skip("no server")

def test_optional_skip():
    pytest.skip("only on Windows")
'''

MODULE_SKIP = '''
import pytest
pytest.importorskip("ragas_not_installed_here", reason="ragas is not installed")

def test_never():
    pass
'''


def _run(tmp_path: Path, ci: str | None, files: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    work = tmp_path / f"work{len(list(tmp_path.iterdir()))}"
    work.mkdir()
    shutil.copyfile(CONFTEST, work / "conftest.py")
    (work / "fakes").mkdir()  # conftest loads fakes/openai_server.py lazily; nothing here needs it
    for name, text in (files or {"test_policy.py": TESTS}).items():
        (work / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-v", "-rA", "-p", "no:cacheprovider", str(work)],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)


def _outcomes(out: str) -> dict[str, str]:
    """``{test name: outcome}`` from the ``-v`` lines ``test_policy.py::name OUTCOME``."""
    import re

    return {m.group(1): m.group(2) for m in re.finditer(r"::(\w+) (PASSED|FAILED|SKIPPED|ERROR)", out)}


def test_required_skips_fail_under_ci(tmp_path):
    proc = _run(tmp_path, "true")
    got = _outcomes(proc.stdout)
    assert proc.returncode == 1, proc.stdout
    assert got["test_runs"] == "PASSED"
    assert got["test_browser_dependency_missing"] == "ERROR"  # skipped in setup (skipif): an error there
    assert got["test_marked_required"] == "FAILED"
    assert got["test_optional_skip"] == "SKIPPED"
    assert "CI=true: a required test was skipped (Skipped: needs Debian's chromium and chromium-driver)" in proc.stdout


def test_a_module_skipped_for_a_required_dependency_is_a_collection_error_under_ci(tmp_path):
    files = {"test_module_skip.py": MODULE_SKIP}
    proc = _run(tmp_path, "true", files)
    assert proc.returncode == 2, proc.stdout  # pytest: interrupted by a collection error
    assert "ERROR test_module_skip.py - CI=true: a required test was skipped (Skipped: ragas is not installed)" in proc.stdout
    assert _run(tmp_path, None, files).returncode == 5  # outside CI: everything skipped, no test ran


def test_outside_ci_they_stay_skips(tmp_path):
    proc = _run(tmp_path, None)
    got = _outcomes(proc.stdout)
    assert proc.returncode == 0, proc.stdout
    assert got["test_runs"] == "PASSED"
    assert got["test_browser_dependency_missing"] == got["test_marked_required"] == got["test_optional_skip"] == "SKIPPED"


@pytest.mark.parametrize("value", ["false", ""])
def test_ci_other_than_true_is_not_ci(tmp_path, value):
    assert _run(tmp_path, value).returncode == 0
