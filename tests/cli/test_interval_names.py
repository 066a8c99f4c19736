"""One name per interval construction (relgrade._intervals), in every table, help text, report and JSON (issue 25).

evaluate and compare compute Student t intervals (plus-two for a 0/1 metric): no text may call them a bootstrap;
calibrate computes a studentized bootstrap up to 100 queries (BCa above): its HTML must not say percentile.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from relgrade import _intervals as I
from relgrade.cli import main

QRELS = "".join(f"q{i} 0 rel{i} {1 + i % 3}\nq{i} 0 other{i} {i % 2}\n" for i in range(20))
NAMES = {c.name for c in I.CONSTRUCTIONS}


def _run(path, hits):
    rows = []
    for i in range(20):
        first, second = (f"rel{i}", f"other{i}") if i < hits else (f"noise{i}", f"other{i}")
        rows += [f"q{i} Q0 {first} 1 2.0 t\n", f"q{i} Q0 {second} 2 1.0 t\n"]
    path.write_text("".join(rows))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    _run(tmp_path / "a.txt", 17)
    _run(tmp_path / "b.txt", 15)
    return tmp_path


def _no_bootstrap_for_means(text: str) -> None:
    assert "bootstrap over" not in text.lower() and "percentile" not in text.lower(), text


@pytest.mark.parametrize("command", ["evaluate", "compare", "gate", "estimate", "rank-systems"])
def test_help_names_the_constructions_and_never_a_bootstrap_for_a_t_interval(command, capsys):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    if command in ("evaluate", "compare"):
        assert f"{I.STUDENT_T.name} intervals over queries" in text and I.PLUS_TWO.name in text
        assert "not a bootstrap" in text
        _no_bootstrap_for_means(text.replace("Bootstrap resamples (>= 1) of the commands that bootstrap", ""))
    if command == "gate":
        assert I.PPI.name in text and I.MEAN_CI in text
        _no_bootstrap_for_means(text)
    if command == "rank-systems":
        assert I.PERCENTILE.name in text and I.PPI.name in text and I.MEAN_CI in text


def test_evaluate_table_and_json_name_each_metrics_construction(files, capsys):
    out_json = files / "a.json"
    assert main(["evaluate", "--run", str(files / "a.txt"), "--qrels", str(files / "qrels.txt"),
                 "--metric", "recall@1,ndcg@2", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    _no_bootstrap_for_means(out)
    data = json.loads(out_json.read_text())
    per_query = data["per_query"]
    for metric, row in data["aggregate"].items():
        values = np.array([per_query[q][metric] for q in per_query])
        binary = bool(np.isin(values, (0.0, 1.0)).all())
        assert row["interval"] == (I.PLUS_TWO.name if binary else I.STUDENT_T.name)
        line = next(x for x in out.splitlines() if x.startswith(metric + " "))
        assert line.rstrip().endswith(row["interval"])
    assert data["aggregate"]["recall@1"]["interval"] == "plus-two" and data["aggregate"]["ndcg@2"]["interval"] == "Student t"
    assert "95% CI over 20 queries" in out


def test_compare_header_and_json_name_the_construction(files, capsys):
    out_json = files / "cmp.json"
    assert main(["compare", "--run-a", str(files / "a.txt"), "--run-b", str(files / "b.txt"),
                 "--qrels", str(files / "qrels.txt"), "--metric", "recall@1,ndcg@2", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    _no_bootstrap_for_means(out)
    assert f"95% CI of B-A ({I.STUDENT_T.name})" in out
    data = json.loads(out_json.read_text())
    assert {m["interval"] for m in data["metrics"].values()} == {I.STUDENT_T.name}


def test_estimate_json_and_table_name_ppi_and_the_human_only_construction(files, capsys, tmp_path):
    human = "".join(f"q{i} 0 rel{i} {1 + i % 3}\nq{i} 0 other{i} {3 if i % 4 == 0 else 0}\n" for i in range(8))
    judge = "".join(f"q{i} 0 rel{i} {1 + (i + 1) % 3}\nq{i} 0 other{i} {(i + 1) % 2}\nq{i} 0 noise{i} 0\n"
                    for i in range(20))
    (tmp_path / "human.txt").write_text(human)
    (tmp_path / "judge.txt").write_text(judge)
    for rule, ppi_name in (("exclude", I.PPI_RATIO.name), ("zero", I.PPI.name)):
        out_json = tmp_path / f"est_{rule}.json"
        assert main(["estimate", "--run", str(files / "a.txt"), "--human", str(tmp_path / "human.txt"),
                     "--judge", str(tmp_path / "judge.txt"), "--metric", "recall@1,ndcg@2", "--no-answer", rule,
                     "--json", str(out_json)]) == 0
        out = capsys.readouterr().out
        assert f"({ppi_name}; human-only: " in out and "8 human-labeled queries of 20" in out
        data = json.loads(out_json.read_text())
        for metric, row in data["aggregate"].items():
            assert row["ppi"]["interval"] == ppi_name and row["ppi"]["method"].startswith(I.PPI.name)
            # the human-only interval is the same construction at lam = 0: the ratio's under exclude
            human_names = (I.RATIO.name,) if rule == "exclude" else (I.STUDENT_T.name, I.PLUS_TWO.name)
            assert row["human_only"]["interval"] in human_names
            assert row["human_only"]["method"].startswith(row["human_only"]["interval"] + " (")
        assert data["aggregate"]["ndcg@2"]["human_only"]["interval"] == (I.RATIO.name if rule == "exclude"
                                                                         else I.STUDENT_T.name)


@pytest.mark.parametrize("n_queries, name", [(12, I.STUDENTIZED.name), (120, I.BCA.name)])
def test_calibration_html_and_json_name_the_bootstrap_that_was_computed(n_queries, name):
    from relgrade.calibration import agreement, render_sections

    rng = np.random.default_rng(1)
    human = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in range(3)} for i in range(n_queries)}
    judge = {q: {d: min(3, g + int(rng.integers(0, 2))) for d, g in docs.items()} for q, docs in human.items()}
    report = agreement(judge, human, n_boot=50, seed=0)
    html = render_sections(report, disagreements=None)
    assert f"95% CIs: {name} (50 resamples of queries" in html
    assert "percentile" not in html.lower()
    data = report.to_dict()
    assert data["bootstrap"]["interval"].startswith(name + " (")
    assert data["bootstrap"]["interval_continuous_and_human"].startswith(I.BCA.name)
    assert name in report.verdict.text


def test_demo_report_caption_names_the_t_interval_not_a_bootstrap():
    from relgrade.demo._report import _metrics_table

    evals = {"a": {"aggregate": {"recall@5": {"value": 0.5, "ci95": [0.3, 0.7], "interval": "plus-two"}},
                   "n_queries": 10}}
    html = _metrics_table(evals)
    assert f"the 95% CI is {I.STUDENT_T.name} over queries" in html and I.PLUS_TWO.name in html
    _no_bootstrap_for_means(html)


def test_every_interval_text_in_the_cli_modules_comes_from_relgrade_intervals():
    """No module that prints a mean's interval spells a construction itself (the names live in one place)."""
    from pathlib import Path

    import relgrade

    root = Path(relgrade.__file__).parent
    spelled = re.compile(r"[\"'][^\"']*\b(bootstrap over queries|percentile 95%|t interval|classical 95%)", re.I)
    offenders = []
    for rel in ("cli/_evaluate.py", "cli/_gate.py", "metrics/_evaluate.py", "demo/_report.py", "hybrid/_cli.py",
                "hybrid/_estimate.py", "hybrid/_rank.py", "calibration/_report.py", "metrics/_repeats.py",
                "cli/_repeats.py"):
        for number, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
            if spelled.search(line):
                offenders.append(f"{rel}:{number}: {line.strip()}")
    assert not offenders, offenders
