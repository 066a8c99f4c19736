"""The label model's consumers: binary judges in hybrid and agreement(), designs and weights (issues 14, 16)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgrade.cli import main


def _details(path, grades, scale):
    path.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "grade": g, "model": "m", "scale": scale,
                                        "text": f"text {d}"}) + "\n" for (q, d), g in grades.items()))
    return path


def _world(n_queries=12, seed=0):
    rng = np.random.default_rng(seed)
    human = {(f"q{i}", f"d{j}"): int(rng.integers(0, 4)) for i in range(n_queries) for j in range(4)}
    binary = {k: int(g >= 2) if rng.random() > 0.2 else 1 - int(g >= 2) for k, g in human.items()}
    return human, binary


def test_agreement_with_a_binary_judge_binarizes_the_humans():
    from relgrade.calibration import agreement

    human, binary = _world()
    h = {}
    j = {}
    for (q, d), g in human.items():
        h.setdefault(q, {})[d] = g
        j.setdefault(q, {})[d] = binary[(q, d)]
    rep = agreement(j, h, judge_scale=(0, 1), binary_threshold=2, n_boot=30)
    by_hand = agreement(j, {q: {d: int(g >= 2) for d, g in docs.items()} for q, docs in h.items()}, scale=(0, 1),
                        binary_threshold=1, n_boot=30)
    from sklearn.metrics import cohen_kappa_score

    keys = sorted(human)
    expected = cohen_kappa_score([int(human[k] >= 2) for k in keys], [binary[k] for k in keys])
    assert rep.kappa.value == pytest.approx(expected) == pytest.approx(by_hand.kappa.value)
    assert rep.notes[0].startswith("binary judge (scale 0-1)")
    # without the judge's scale the 0/1 verdicts were compared with 0-3 grades grade for grade
    naive = agreement(j, h, n_boot=30)
    assert naive.kappa.value != pytest.approx(expected)


def test_hybrid_puts_a_binary_judge_and_graded_humans_on_one_scale(tmp_path, capsys):
    human, binary = _world()
    hpath = tmp_path / "h.csv"
    hpath.write_text("query_id,doc_id,grade\n" + "".join(f"{q},{d},{g}\n" for (q, d), g in list(human.items())[:8]))
    jpath = _details(tmp_path / "j.details.jsonl", binary, [0, 1])
    out = tmp_path / "hy.jsonl"
    assert main(["hybrid", "--human", str(hpath), "--judge", str(jpath), "--out", str(out), "--threshold", "2"]) == 0
    assert "binary judge (scale 0-1): human grades binarized at threshold 2" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["grade"] for r in rows} <= {0, 1}
    for r in rows:
        key = (r["query_id"], r["doc_id"])
        expected = int(human[key] >= 2) if r["source"] == "human" else binary[key]
        assert r["grade"] == expected


def test_estimate_and_hybrid_refuse_grades_off_the_scale(tmp_path, capsys):
    human, binary = _world(4)
    hpath = tmp_path / "h.csv"
    hpath.write_text("query_id,doc_id,grade\n" + "".join(f"{q},{d},{g}\n" for (q, d), g in human.items()) + "q0,dx,4\n")
    jpath = _details(tmp_path / "j.details.jsonl", {k: min(g, 3) for k, g in human.items()}, [0, 1, 2, 3])
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 1 {5 - int(d[1:])} t\n" for q, d in human))
    for argv in (["estimate", "--run", str(run)], ["rank-systems", "--run", str(run), "--run", str(run)],
                 ["hybrid", "--out", str(tmp_path / "x.jsonl")]):
        assert main([*argv, "--human", str(hpath), "--judge", str(jpath)]) == 2
        err = capsys.readouterr().err
        assert "1 label(s) outside the scale [0, 1, 2, 3]" in err and str(hpath) in err


def test_estimate_refuses_a_stratified_sample_and_calibrate_reads_its_weights(tmp_path, capsys):
    from relgrade.calibration import read_human, read_judge, sample_pairs, write_sample

    human, _ = _world(10)
    jpath = _details(tmp_path / "j.details.jsonl", human, [0, 1, 2, 3])
    judge = read_judge(jpath)
    sample = sample_pairs(judge.labels, n=8, design="strata", seed=1)
    items = write_sample(sample, tmp_path / "items.csv")
    import csv

    with open(items, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["grade"] = str(human[(r["query_id"], r["doc_id"])])
    with open(items, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    labels = read_human(items)
    assert labels.design == "strata"
    assert labels.weights == {(it.query_id, it.doc_id): it.weight for it in sample.items}
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 1 {5 - int(d[1:])} t\n" for q, d in human))
    assert main(["estimate", "--run", str(run), "--human", str(items), "--judge", str(jpath)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("relgrade: error: ") and "stratified sample (design 'strata')" in err and "\n" not in err


def test_calibrate_uses_the_weight_column_of_a_strata_sample(tmp_path):
    """calibrate --human with a 'weight' column: the kappa is sklearn's kappa with those sample weights."""
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(3)
    human, _ = _world(n_queries=15, seed=3)
    judge = {k: min(3, max(0, g + int(rng.integers(-1, 2)))) for k, g in human.items()}
    weights = {k: float(rng.choice([1.0, 4.0, 9.5])) for k in human}
    _details(tmp_path / "judge.jsonl", judge, [0, 1, 2, 3])
    (tmp_path / "human.csv").write_text("query_id,doc_id,grade,design,weight\n" + "".join(
        f"{q},{d},{g},strata,{weights[(q, d)]}\n" for (q, d), g in human.items()))
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--judge", str(tmp_path / "judge.jsonl"), "--human", str(tmp_path / "human.csv"),
                 "--n-boot", "50", "--no-mapping", "--json", str(out)]) == 0
    kappa = json.loads(out.read_text())["kappa"]["value"]
    keys = sorted(human)
    h, j, w = ([human[k] for k in keys], [judge[k] for k in keys], [weights[k] for k in keys])
    assert kappa == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3], sample_weight=w))
    assert kappa != pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3]))  # the weights mattered
