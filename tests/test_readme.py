"""The README's two commands are what CI runs, and every CLI command it documents exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quickstart = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", quickstart, flags=re.S)]


def test_ci_runs_the_readme_install_and_test_commands():
    demo, tests = readme_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    steps = [part.strip() for part in tests.split("&&")]
    assert steps[0] == "python3 -m venv .venv" and steps[1] == ". .venv/bin/activate"
    for step in steps[2:]:
        assert step in ci, f".ci/run lacks the README step: {step}"
    assert demo.endswith("relgrade demo")


def test_documented_commands_exist():
    from relgrade.cli import COMMANDS

    text = (ROOT / "README.md").read_text()
    for name in set(re.findall(r"^\s*relgrade ([a-z-]+)", text, flags=re.M)):
        assert name in COMMANDS, f"README documents 'relgrade {name}' but the CLI has no such command"
