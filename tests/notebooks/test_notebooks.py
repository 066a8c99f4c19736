"""The notebooks run top to bottom on the bundled data (nbclient), are stored without outputs, and print
what the library computes: each printed value is checked against the same call made here, and against
facts of the bundled data (57 golden queries, 30 human-labeled, 7 tenant leaks of the TF-IDF candidate)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _run(name: str, tmp_path: Path) -> list[str]:
    """Execute the notebook; return the stdout of each code cell, in order."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{name} is stored with outputs"
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    return ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream" and o.get("name") == "stdout")
            for c in code]


def test_the_four_notebooks_exist():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == [
        "01_quickstart.ipynb", "02_calibrate_your_judge.ipynb", "03_hybrid_golden_set.ipynb", "04_the_whole_loop.ipynb"]


def test_quickstart_prints_the_library_metrics_failures_leaks_and_comparison(tmp_path):
    from relgrade import compare, demo, evaluate, read_run

    out = _run("01_quickstart.ipynb", tmp_path)
    assert out[0] == "57 queries; bm25, tfidf\n"
    golden = demo.golden()
    runs = {name: read_run(path) for name, path in demo.write_runs(tmp_path / "runs", k=10).items()}
    reports = {name: evaluate(golden, run, ["recall@5", "mrr", "ndcg@10"]) for name, run in runs.items()}
    assert out[1] == "".join(f"{name}\n{report.table()}\n" for name, report in reports.items())
    tfidf = reports["tfidf"]
    assert len(tfidf.leaks) == 7
    assert f"leaks: {tfidf.leaks[:3]}\n" in out[2]
    assert f"no-answer queries reported apart: {len(tfidf.no_answer)}\n" in out[2]
    for f in tfidf.failures[:5]:
        assert f"{f['query_id']} {f['query']} \n  expected {f['expected']} \n  got {f['got']}\n" in out[2]
    assert out[3] == compare(reports["bm25"], reports["tfidf"]).table() + "\n"


@pytest.mark.local_model
def test_calibrate_notebook_prints_the_agreement_of_the_local_judge(tmp_path, demo_store):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama_cpp (the 'local' extra)")
    from relgrade import demo
    from relgrade.calibration import agreement, fit_mapping
    from relgrade.judge import Pair, judge_pairs

    out = _run("02_calibrate_your_judge.ipynb", tmp_path)
    human = demo.human_qrels().labels
    corpus = demo.corpus()
    queries = {c.query_id: c.query for c in demo.golden()}
    pairs = [Pair(q, d, queries[q], corpus[d]) for q in list(human)[:4] for d in list(human[q])[:3]]
    assert out[0] == "12 pairs to judge\n"
    # The local judge is deterministic (greedy, canonical KV blocks): judging the same pairs here gives
    # the same grades, so the notebook's agreement must be the library's on them. The session's demo judged these
    # 12 pairs already (with the same model and prompt): its store answers them when it ran, else they are judged.
    result = judge_pairs(pairs, model="local/gemma3-270m", store=demo_store or tmp_path / "here.sqlite")
    assert result.counts()["pairs"] == 12 and (demo_store is None or result.n_calls == 0)
    counts = result.counts()
    if demo_store is not None:  # answered from the store here; the notebook, on a fresh store, paid for them
        counts = {**counts, "paid": counts["stored"], "stored": 0, "cached": counts["duplicates"]}
    assert out[1] == f"{counts}\n"
    report = agreement(result.qrels(), human, n_boot=500, seed=0)
    assert out[2] == f"{report.verdict.text}\nkappa {report.kappa}\n"
    assert out[3] == fit_mapping(result.qrels(), human, n_boot=200, seed=0).message + "\n"


def test_hybrid_notebook_prints_the_library_ppi_estimates(tmp_path):
    import numpy as np

    from relgrade import demo, read_run
    from relgrade.hybrid import estimate

    out = _run("03_hybrid_golden_set.ipynb", tmp_path)
    run = read_run(demo.write_runs(tmp_path / "runs", k=10)["bm25"])
    human = demo.human_qrels()
    golden = demo.golden().to_qrels()
    rng = np.random.default_rng(0)
    judge = {}
    for q, docs in run.ranked().items():
        truth = golden.labels.get(q, {})
        judge[q] = {d: int(rng.integers(0, 4)) if rng.random() < 0.3 else truth.get(d, 0) for d in docs}
    # 56: BM25 retrieves nothing for lq48 ("student or nonprofit discount": no word of it is in the docs)
    assert out[0] == f"30 human-labeled queries; {len(judge)} judged queries\n" and len(judge) == 56
    report = estimate(run, human, judge, ["ndcg@10", "recall@5"])
    assert out[1] == report.table() + "\n"
    for e in report.estimates.values():  # and the intervals are intervals
        assert e.ppi_ci95[0] <= e.ppi <= e.ppi_ci95[1]


def test_whole_loop_notebook_prints_the_ann_check_and_the_trend(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu (the 'ann' extra, in dev)")
    from relgrade import ann_recall, demo, evaluate, gate_min, read_qrels, read_run
    from relgrade.history import history

    out = _run("04_the_whole_loop.ipynb", tmp_path)
    files = demo.write_loop_files(tmp_path / "here")
    assert out[0] == f"{sorted(p.name for p in (files / 'ann').iterdir())}\n"
    golden, exact = read_qrels(files / "golden.jsonl"), read_run(files / "ann" / "exact.jsonl")
    lines = out[1].splitlines()
    assert len(lines) == 4
    for line, n in zip(lines, (1, 2, 4, 8)):
        report = ann_recall(read_run(files / "ann" / f"ivf_nprobe{n}.jsonl"), exact, 10, qrels=golden, metrics=["recall@5"])
        assert line.startswith(f"nprobe {n}: recall@10 vs exact {report.value:.3f}")
        assert line.endswith("gate >= 0.95: " + ("pass" if gate_min(report, minimum=0.95).passed else "FAIL"))
    assert lines[-1].endswith("pass") and lines[0].endswith("FAIL")  # nprobe 8 of 8 is exact
    assert out[2] == ann_recall(read_run(files / "ann" / "ivf_nprobe1.jsonl"), exact, 10).table(show=3) + "\n"
    rows = out[3].splitlines()
    assert [r.split()[0] for r in rows[1:6]] == ["night1-nprobe8", "night2-nprobe8", "night3-nprobe4", "night4-nprobe2",
                                                "night5-nprobe1"]
    first = evaluate(golden, read_run(files / "ann" / "ivf_nprobe8.jsonl"), ["recall@5", "ndcg@10"])
    assert f"{first.value('recall@5'):.4f}" in rows[1]
    assert rows[-2].startswith("gate: at most 0.02 below the baseline")
    assert rows[-1].startswith("gate: FAIL: the newest report night5-nprobe1: recall@5 ")  # gated as the gate would
