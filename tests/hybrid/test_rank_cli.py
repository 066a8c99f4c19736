"""rank_systems against scipy/paired_difference, and the estimate / rank-systems / gate CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import kendalltau

from relgrade.cli import main
from relgrade.hybrid import rank_systems
from relgrade.io import Run
from relgrade.metrics import evaluate, paired_difference


def _mean(labels, run, metric, topics):
    rep = evaluate({q: labels[q] for q in topics}, run, [metric], no_answer="zero", ci=False)
    return np.array([rep.per_query[q][metric] for q in topics])


def test_rankings_taus_and_tests_match_the_oracles(world):
    truth, human, judge, _, runs_raw = world
    rng = np.random.default_rng(1)
    runs = {name: Run.from_dict(r, name=name) for name, r in runs_raw.items()}
    runs["c"] = Run.from_dict({q: {d: float(s) for d, s in zip(docs, rng.random(len(docs)))}
                               for q, docs in runs_raw["a"].items()}, name="c")
    rep = rank_systems(runs, human, judge, "ndcg@5", n_boot=200, n_perm=2000, prediction="hard")  # judge grades
    labeled = list(human)
    H = {n: _mean(human, r, "ndcg@5", labeled) for n, r in runs.items()}
    J = {n: _mean(judge, r, "ndcg@5", list(judge)) for n, r in runs.items()}
    for n in runs:
        assert rep.values["human"][n] == pytest.approx(H[n].mean())
        assert rep.values["judge"][n] == pytest.approx(J[n].mean())
    assert rep.rankings["human"] == tuple(sorted(runs, key=lambda n: -H[n].mean()))
    tau = next(t for t in rep.taus if (t.x, t.y) == ("human", "judge"))
    names = list(runs)
    assert tau.tau == pytest.approx(kendalltau([H[n].mean() for n in names], [J[n].mean() for n in names]).statistic)
    assert tau.ci95[0] <= tau.ci95[1] and tau.n_boot > 0
    pair = next(p for p in rep.pairs if (p.a, p.b) == ("a", "b"))
    ref = paired_difference(H["a"], H["b"], n_boot=200, n_perm=2000, seed=0)
    assert pair.by_source["human"].p_value == ref.p_value and pair.by_source["human"].diff == pytest.approx(ref.diff)
    lo, hi = pair.by_source["ppi"].ci95
    assert lo <= pair.by_source["ppi"].diff <= hi


def test_a_judge_that_prefers_the_other_system_flips_the_pair(world):
    truth, human, _, _, runs_raw = world
    runs = {n: Run.from_dict(r, name=n) for n, r in runs_raw.items()}
    # the judge inverts relevance: what humans find relevant it grades 0 and vice versa
    inverted = {q: {d: 3 - g for d, g in docs.items()} for q, docs in truth.items()}
    rep = rank_systems(runs, human, inverted, "ndcg@5", n_boot=100, n_perm=500, prediction="hard")
    ha, hb = rep.values["human"]["a"], rep.values["human"]["b"]
    ja, jb = rep.values["judge"]["a"], rep.values["judge"]["b"]
    assert np.sign(hb - ha) == -np.sign(jb - ja)
    assert rep.flipped and "human vs judge" in rep.flipped[0].flips


def test_estimate_cli_json_shape_and_gate_beyond_ci(files, tmp_path, capsys):
    out_a, out_b = tmp_path / "a.json", tmp_path / "b.json"
    golden = tmp_path / "golden.jsonl"  # forbidden documents no run retrieves: an empty leak list, checked
    golden.write_text(json.dumps({"query_id": "q0", "query": "query q0", "relevant_doc_ids": ["q0d0"], "forbidden_doc_ids": ["secret"]}))
    for run, out in ((files["run_a"], out_a), (files["run_b"], out_b)):
        assert main(["estimate", "--run", str(run), "--human", str(files["human"]), "--judge", str(files["judge"]),
                     "--k", "5", "--forbidden", str(golden), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "the judge was worth" in text and "PPI++" in text
    data = json.loads(out_a.read_text())
    agg = data["aggregate"]["ndcg@5"]
    assert set(agg) >= {"ppi", "human_only", "judge_only", "effective_human_queries"}
    assert set(agg["ppi"]) >= {"value", "ci95"} and agg["human_only"]["n_queries"] == 12
    assert data["n_labeled"] == 12 and data["n_unlabeled"] == 28
    assert set(data["aggregate"]) == {"recall@5", "precision@5", "ndcg@5", "mrr"}

    a, b = data["aggregate"]["ndcg@5"]["ppi"], json.loads(out_b.read_text())["aggregate"]["ndcg@5"]["ppi"]
    drop = a["value"] - b["value"]
    assert drop > 0  # run a ranks by the truth's order, run b is random
    # default gate reads the PPI value: a drop above --max-drop fails
    assert main(["gate", "--baseline", str(out_a), "--current", str(out_b), "--metric", "ndcg@5",
                 "--max-drop", f"{drop / 2:.6f}"]) == 1
    # beyond the interval: fails only when baseline - max_drop is above the current upper bound
    slack = a["value"] - b["ci95"][1]
    assert main(["gate", "--baseline", str(out_a), "--current", str(out_b), "--metric", "ndcg@5", "--beyond-ci",
                 "--max-drop", f"{max(slack, 0) + 0.001:.6f}"]) == 0
    if slack > 0.002:
        assert main(["gate", "--baseline", str(out_a), "--current", str(out_b), "--metric", "ndcg@5",
                     "--beyond-ci", "--max-drop", f"{slack - 0.001:.6f}"]) == 1


def test_rank_systems_cli(files, tmp_path, capsys):
    out = tmp_path / "rank.json"
    assert main(["rank-systems", "--run", str(files["run_a"]), "--run", str(files["run_b"]), "--human",
                 str(files["human"]), "--judge", str(files["judge"]), "--metric", "ndcg@5", "--metric", "mrr",
                 "--n-boot", "100", "--json", str(out)]) == 0
    data = json.loads(out.read_text())["metrics"]
    assert set(data) == {"ndcg@5", "mrr"}
    assert set(data["ndcg@5"]["rankings"]) == {"human", "judge", "ppi"}
    assert data["ndcg@5"]["rankings"]["human"][0] == "run_a"
    assert "human vs judge" in data["ndcg@5"]["kendall_tau"]
    # the tau CI is labeled for what it is, in the JSON and the printed table
    assert data["ndcg@5"]["kendall_tau"]["human vs judge"]["interval"].startswith("descriptive")
    assert "(tau CIs are descriptive" in capsys.readouterr().out


def test_cli_user_errors_exit_2_with_one_line(files, tmp_path, capsys):
    one = tmp_path / "one.csv"
    one.write_text("query_id,doc_id,grade\nq0,q0d0,1\n")
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(one), "--judge", str(files["judge"])]) == 2
    assert main(["rank-systems", "--run", str(files["run_a"]), "--human", str(files["human"]),
                 "--judge", str(files["judge"])]) == 2
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(files["human"]), "--judge",
                 str(files["judge"]), "--metric", "bogus@3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("relgrade: error:") for line in err)
    assert "at least 2" in err[0]
