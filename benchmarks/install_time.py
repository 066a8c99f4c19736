"""Wall time of the README's quickstart install, whole process, from an empty pip cache, and of the demo after it.

    python benchmarks/install_time.py [--skip-demo]

Creates a fresh virtual environment in a temporary folder and runs the README's install command
(``CMAKE_ARGS=... pip install ".[local]"`` from this checkout) with ``--no-cache-dir``, so that
llama-cpp-python is built from source as on a new machine; then ``relgrade demo`` in a temporary
working folder (a cold judgment store). Prints both wall times and the machine's load average.
Needs the package index (PyPI); downloads about 300 MB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"  # the README's


def timed(cmd: list[str], **kw) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"install_time: {' '.join(cmd[:4])} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip-demo", action="store_true")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "PIP_NO_CACHE_DIR": "1"}
        install = timed([str(venv / "bin" / "pip"), "install", "-q", f"{ROOT}[local]"], env=env)
        print(f"pip install '.[local]' (llama-cpp-python built from source, empty cache): {install / 60:.1f} min")
        if not args.skip_demo:
            work = Path(tmp) / "work"
            work.mkdir()
            demo = timed([str(venv / "bin" / "relgrade"), "demo"], cwd=work)
            print(f"relgrade demo (cold store): {demo / 60:.1f} min")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
