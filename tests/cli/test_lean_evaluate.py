"""``relgrade evaluate`` and ``compare`` from files import no pandas (a third of a second of every process): pyarrow's
own conversions would import it, so the readers cross between numpy and pyarrow through buffers (issue 28)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_evaluate_and_compare_from_trec_and_jsonl_files_import_no_pandas(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 1.0 t\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"query_id": "q1", "query": "x", "results": [{"doc_id": "d1"}]}) + "\n"
                                      + json.dumps({"query_id": "q2", "results": [{"doc_id": " d3 "}]}) + "\n")
    probe = f"""
import sys
from relgrade.cli import main
assert main(["evaluate", "--run", {str(tmp_path / 'r.txt')!r}, "--qrels", {str(tmp_path / 'q.txt')!r},
             "--json", {str(tmp_path / 'a.json')!r}]) == 0
assert main(["compare", "--run-a", {str(tmp_path / 'r.txt')!r}, "--run-b", {str(tmp_path / 'r.jsonl')!r},
             "--qrels", {str(tmp_path / 'q.txt')!r}]) == 0
print("PANDAS", "pandas" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert "PANDAS False" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "a.json").read_text())["aggregate"]["mrr"]["value"] == 0.75
