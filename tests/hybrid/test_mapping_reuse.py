"""PPI never reuses the human labels a mapping was fitted on (issue 14): estimate cross-fits, rank-systems refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgrade.cli import main


def _lenient_world(tmp_path, world):
    """The noisy judge of the world made lenient (every grade +1), so calibrate adopts a mapping."""
    truth, human, judge, texts, runs = world
    lenient = {q: {d: min(3, g + 1) for d, g in docs.items()} for q, docs in truth.items()}
    details = tmp_path / "lenient.details.jsonl"
    details.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "query": f"query {q}", "text": texts[d],
                                           "grade": g, "expected_grade": float(g), "model": "fake/lenient"}) + "\n"
                               for q, docs in lenient.items() for d, g in docs.items()))
    human_path = tmp_path / "human.tsv"
    human_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in human.items() for d, g in docs.items()))
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--judge", str(details), "--human", str(human_path), "--n-boot", "50",
                 "--json", str(cal)]) == 0
    assert json.loads(cal.read_text())["mapping"]["adopted"] is True
    return lenient, human, details, human_path, cal


def test_estimate_cross_fits_a_mapping_fitted_on_its_own_human_labels(tmp_path, world, files, capsys):
    from relgrade.calibration import crossfit_mapping
    from relgrade.hybrid import estimate
    from relgrade.io import read_run

    lenient, human, details, human_path, cal = _lenient_world(tmp_path, world)
    capsys.readouterr()
    out = tmp_path / "est.json"
    assert main(["estimate", "--run", str(files["run_b"]), "--human", str(human_path), "--judge", str(details),
                 "--mapping", str(cal), "--metric", "ndcg@5", "--no-answer", "zero", "--prediction", "hard",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cross-fitting" in printed and "fitted on 12 of these human-labeled queries" in printed
    got = json.loads(out.read_text())["aggregate"]["ndcg@5"]["ppi"]
    # the oracle: the library's cross-fitted estimate on the raw (unmapped) judge grades
    cf = crossfit_mapping(lenient, human, expected={q: {d: float(g) for d, g in docs.items()}
                                                    for q, docs in lenient.items()}, seed=0)
    ref = estimate(read_run(files["run_b"]), human, lenient, ["ndcg@5"], no_answer="zero", crossfit=cf,
                   prediction="hard")
    e = ref.estimates["ndcg@5"]
    assert got["value"] == pytest.approx(e.ppi) and got["ci95"] == pytest.approx(list(e.ppi_ci95))


def test_rank_systems_refuses_a_mapping_fitted_on_its_own_human_labels(tmp_path, world, files, capsys):
    _, _, details, human_path, cal = _lenient_world(tmp_path, world)
    capsys.readouterr()
    code = main(["rank-systems", "--run", str(files["run_a"]), "--run", str(files["run_b"]), "--human", str(human_path),
                 "--judge", str(details), "--mapping", str(cal), "--metric", "ndcg@5", "--prediction", "hard"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "fitted on 12 of these human-labeled queries" in err[0]


def test_a_mapping_fitted_on_other_queries_is_used_as_it_is(tmp_path, world, files, capsys):
    from relgrade.hybrid import crossfit_for_ppi, read_judge_labels, read_mapping

    lenient, human, details, human_path, cal = _lenient_world(tmp_path, world)
    mapping = read_mapping(cal)
    other = {q: {d: 1 for d in range(2)} for q in ("x1", "x2", "x3")}  # none of the fitted queries
    assert crossfit_for_ppi(read_judge_labels(details, mapping=mapping), other, mapping) == (None, None)
    cf, note = crossfit_for_ppi(read_judge_labels(details, mapping=mapping), human, mapping)
    assert cf is not None and len(cf.folds) >= 2 and "cross-fitting" in note
    assert np.all([q in human for fold in cf.folds for q in fold])
