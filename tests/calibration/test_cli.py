"""relgrade calibrate through the real CLI entry point, on real files (relgrade sample: test_sample.py)."""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pytest

from relgrade.cli import main
from relgrade.calibration import read_judge
from relgrade._intervals import BCA, STUDENTIZED


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    human_lines, judge_lines, details = [], [], []
    for q in range(12):
        for d in range(10):
            h = int(rng.integers(0, 4))
            j = h if rng.random() < 0.6 else int(rng.integers(0, 4))
            human_lines.append(f"q{q} 0 d{d} {h}")
            judge_lines.append(f"q{q} 0 d{d} {j}")
            p = np.full(4, 0.1)
            p[j] = 0.7
            details.append({"query_id": f"q{q}", "doc_id": f"d{d}", "grade": j,
                            "distribution": {str(i): float(p[i]) for i in range(4)},
                            "expected_grade": float(p @ np.arange(4)), "reason": "<b>mentions</b> the term",
                            "query": f"question {q}", "text": f"chunk <script>alert({d})</script>",
                            "model": "local/gemma-3-270m"})
    details.append({"query_id": "q0", "doc_id": "dx", "grade": None, "reason": "unparseable", "model": "local/x"})
    (tmp_path / "human.txt").write_text("\n".join(human_lines) + "\n")
    (tmp_path / "judge.txt").write_text("\n".join(judge_lines) + "\n")
    (tmp_path / "details.jsonl").write_text("".join(json.dumps(o) + "\n" for o in details))
    return tmp_path


def test_calibrate_writes_the_json_contract_and_a_safe_report(files, capsys):
    out, html = files / "out.json", files / "report.html"
    code = main(["calibrate", "--judge", str(files / "details.jsonl"), "--human", str(files / "human.txt"),
                 "--json", str(out), "--report", str(html), "--n-boot", "200"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "1 unjudged pair (grade null) excluded" in printed and "verdict:" in printed
    data = json.loads(out.read_text())
    assert data["n_pairs"] == 120 and data["n_queries"] == 12 and data["n_unjudged"] == 1
    for key in ("kappa", "kappa_linear", "kappa_quadratic", "binary_kappa", "krippendorff_alpha", "accuracy"):
        assert data[key]["value"] is not None and len(data[key]["ci95"]) == 2
    assert {"confusion_matrix", "leniency", "verdict", "mapping", "spearman", "kendall", "auc"} <= set(data)
    assert data["mapping"]["adopted"] in (True, False)
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<script" not in page and "&lt;script&gt;" in page  # untrusted chunk escaped
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert "plumbing default" in page
    # both say which interval construction they used, by its one name
    assert data["bootstrap"]["interval"] == STUDENTIZED.described
    assert data["bootstrap"]["interval_continuous_and_human"] == BCA.described
    assert escape(STUDENTIZED.described) in page and escape(BCA.name) in page and "percentile 95% CI" not in page
    assert "atanh" in STUDENTIZED.definition and "Student" in STUDENTIZED.definition


def test_calibrate_several_judges(files):
    out = files / "out.json"
    code = main(["calibrate", "--judge", str(files / "details.jsonl"), "--judge", str(files / "judge.txt"),
                 "--human", str(files / "human.txt"), "--json", str(out), "--n-boot", "100"])
    assert code == 0
    data = json.loads(out.read_text())
    assert len(data["judges"]) == 2 and data["combination"]["n_pairs"] == 120
    assert data["judges"][0]["kappa"] == data["judges"][1]["kappa"]  # same grades in both files


def _error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("relgrade: error:") and "\n" not in err
    return err


def test_out_of_scale_labels_exit_2_with_count_and_line(files, capsys):
    bad = files / "bad.txt"
    bad.write_text("q0 0 d0 1\nq0 0 d1 4\nq0 0 d2 7\n")
    err = _error(capsys, ["calibrate", "--judge", str(bad), "--human", str(files / "human.txt")])
    assert "2 label(s) outside the scale [0, 1, 2, 3]" in err and "line 2" in err and "q0 0 d1 4" in err


def test_user_errors_exit_2(files, capsys):
    assert "no such" in _error(capsys, ["calibrate", "--judge", str(files / "nope.txt"), "--human",
                                        str(files / "human.txt")])
    other = files / "other.txt"
    other.write_text("z1 0 y1 1\n")
    assert "no (query, doc) pair" in _error(capsys, ["calibrate", "--judge", str(other), "--human",
                                                     str(files / "human.txt")])
    assert "--scale" in _error(capsys, ["calibrate", "--judge", str(other), "--human", str(other), "--scale", "x"])
    assert "exactly one of --n" in _error(capsys, ["sample", "--judge", str(other), "--out", str(files / "s.csv")])


def test_read_judge_details_keeps_scores_and_counts_unjudged(files):
    jl = read_judge(files / "details.jsonl")
    assert jl.n_unjudged == 1 and jl.unjudged == (("q0", "dx"),) and jl.model == "local/gemma-3-270m"
    assert len(jl.expected) == 12 and jl.distribution[("q0", "d0")][0] in (0.1, 0.7)
    assert jl.info[("q0", "d0")]["reason"].startswith("<b>")
    plain = read_judge(files / "judge.txt")
    assert plain.expected is None and plain.labels == {q: dict(d) for q, d in jl.labels.items()}


def test_human_annotator_column_gives_the_ceiling(files, capsys):
    rng = np.random.default_rng(4)
    lines = ["query_id,doc_id,grade,annotator"]
    for q in range(12):
        for d in range(10):
            truth = int(rng.integers(0, 4))
            for who in ("ann1", "ann2"):
                g = truth if rng.random() < 0.8 else int(rng.integers(0, 4))
                lines.append(f"q{q},d{d},{g},{who}")
    (files / "two.csv").write_text("\n".join(lines) + "\n")
    out = files / "o.json"
    assert main(["calibrate", "--judge", str(files / "judge.txt"), "--human", str(files / "two.csv"),
                 "--n-boot", "100", "--json", str(out)]) == 0
    ha = json.loads(out.read_text())["human_agreement"]
    assert ha["n_annotators"] == 2 and ha["n_pairs"] == 120
    assert ha["pairwise_kappa"]["value"] > ha["judge_kappa"]["value"]
    assert "human-human kappa" in capsys.readouterr().out


def _details(path, rows, scale):
    path.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "grade": g, "status": "judged",
                                        "distribution": None, "expected_grade": None, "reason": "r",
                                        "scale": scale}) + "\n" for q, d, g in rows), encoding="utf-8")
    return path


def test_binary_judge_is_calibrated_against_binarized_graded_humans(tmp_path, capsys):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(3)
    humans = {(f"q{q}", f"d{d}"): int(rng.integers(0, 4)) for q in range(12) for d in range(6)}
    # the binary judge says 1 exactly when the human grade is >= 2, except on every 7th pair
    binary = [(q, d, int(g >= 2) if i % 7 else 1 - int(g >= 2)) for i, ((q, d), g) in enumerate(humans.items())]
    graded = [(q, d, g if i % 5 else min(3, g + 1)) for i, ((q, d), g) in enumerate(humans.items())]
    human = tmp_path / "human.csv"
    human.write_text("query_id,doc_id,grade\n" + "".join(f"{q},{d},{g}\n" for (q, d), g in humans.items()))
    out = tmp_path / "cal.json"
    code = main(["calibrate", "--judge", str(_details(tmp_path / "ragas.jsonl", binary, [0, 1])),
                 "--judge", str(_details(tmp_path / "ours.jsonl", graded, [0, 1, 2, 3])), "--human", str(human),
                 "--n-boot", "50", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    rag, ours = json.loads(out.read_text())["judges"]
    truth = [int(g >= 2) for g in humans.values()]
    assert rag["kappa"]["value"] == pytest.approx(cohen_kappa_score(truth, [g for _, _, g in binary]))
    assert rag["binary_kappa"]["value"] == pytest.approx(rag["kappa"]["value"])
    assert rag["kappa"]["value"] > 0.6  # 6 in 7 right: without binarizing humans it would be near zero
    assert ours["kappa"]["value"] == pytest.approx(cohen_kappa_score(list(humans.values()), [g for _, _, g in graded]))
    assert "binary judge (scale 0-1): compared with the human grades binarized at --threshold 2" in printed
    assert "different scales (0-1, 0-3)" in printed and "no combination" in printed


def test_judge_scale_wider_than_the_humans_exits_2(tmp_path, capsys):
    human = tmp_path / "human.csv"
    human.write_text("query_id,doc_id,grade\nq1,d1,1\nq1,d2,0\n")
    judge = _details(tmp_path / "j.jsonl", [("q1", "d1", 4), ("q1", "d2", 0)], [0, 1, 2, 3, 4])
    code = main(["calibrate", "--judge", str(judge), "--human", str(human)])
    err = capsys.readouterr().err
    assert code == 2 and "the judge grades on 0-4, which does not fit the human scale --scale 0-3" in err
    assert str(judge) in err and "Traceback" not in err
