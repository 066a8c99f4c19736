"""The README's section on the guide's whole loop: every bash command in it runs as written, in order, on the
files its first command writes, and ends as the text says (exit 0, or 1 where a gate fails; never 2)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("faiss", reason="faiss-cpu (the 'ann' extra, in dev)")


def loop_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The guide's whole loop", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_loop_commands_run_as_written(tmp_path):
    commands = loop_commands()
    assert len(commands) >= 8 and commands[0].startswith('python -c "from relgrade import demo')
    env_bin = str(Path(sys.executable).parent)
    results = {}
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PATH": f"{env_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
        assert "Traceback" not in done.stderr, (command, done.stderr)
        expected = 1 if "# exit 1" in command else 0
        assert done.returncode == expected, (command, done.returncode, done.stdout[-800:], done.stderr[-800:])
        results[command.split()[1]] = results.get(command.split()[1], []) + [done.stdout]
    assert "over 56 queries: 0.5375" in results["ann-recall"][0]  # the README's "keeps 0.54"
    assert "3 repeats vs golden.jsonl" in results["evaluate"][0]
    assert (tmp_path / "trend.html").stat().st_size > 2000 and (tmp_path / "golden.stamped.jsonl").exists()
