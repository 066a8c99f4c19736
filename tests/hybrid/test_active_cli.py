"""relgrade sample --design active, then estimate / compare / rank-systems / gate on the labeled file: the design
travels in the labels; what cannot be one active sample is one line and exit 2."""

from __future__ import annotations

import csv
import json

import pytest

from relgrade.cli import main


def _details(tmp_path, world):
    """The world's judge with a grade distribution per pair: sure on half the queries, unsure on the others."""
    _, _, judge, texts, _ = world
    path = tmp_path / "judge.details.jsonl"
    with open(path, "w") as fh:
        for i, (q, docs) in enumerate(judge.items()):
            sure = 0.97 if i % 2 else 0.4
            for d, g in docs.items():
                dist = {str(k): (sure if k == g else (1 - sure) / 3) for k in range(4)}
                fh.write(json.dumps({"query_id": q, "doc_id": d, "query": f"query {q}", "text": texts[d], "grade": g,
                                     "distribution": dist, "model": "fake/judge", "prompt_hash": "p1"}) + "\n")
    return path


def _fill(path, truth, out, *, drop_design_of=None):
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        if not row["grade"]:
            row["grade"] = str(truth[row["query_id"]][row["doc_id"]])
        if drop_design_of == row["query_id"]:
            row["design"] = ""
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_sample_active_then_estimate_compare_rank_and_gate(tmp_path, world, files, capsys):
    truth = world[0]
    details = _details(tmp_path, world)
    items = tmp_path / "items.csv"
    assert main(["sample", "--design", "active", "--judge", str(details), "--n", "10", "--seed", "3",
                 "--out", str(items)]) == 0
    out = capsys.readouterr().out
    assert "design active: 10 draws" in out and "over 40 judged queries" in out
    rows = _fill(items, truth, tmp_path / "labeled.csv")
    assert {r["design"] for r in rows} == {"active"} and {r["pool"] for r in rows} == {"40"}
    assert sum(int(r["draws"]) for r in {r["query_id"]: r for r in rows}.values()) == 10
    report = tmp_path / "est.json"
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(tmp_path / "labeled.csv"), "--judge",
                 str(details), "--metric", "ndcg@5", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "design active: 10 draws" in out and "PPI++ active" in out
    data = json.loads(report.read_text())
    assert data["settings"]["design"] == {"name": "active", "draws": 10, "pool": 40}
    assert data["settings"]["interval"]["ppi"] == "PPI++ active ratio"
    assert main(["compare", "--run-a", str(files["run_a"]), "--run-b", str(files["run_b"]), "--human",
                 str(tmp_path / "labeled.csv"), "--judge", str(details), "--metric", "ndcg@5", "--json",
                 str(tmp_path / "ab.json")]) == 0
    assert json.loads((tmp_path / "ab.json").read_text())["settings"]["design"]["name"] == "active"
    assert main(["rank-systems", "--run", str(files["run_a"]), "--run", str(files["run_b"]), "--human",
                 str(tmp_path / "labeled.csv"), "--judge", str(details)]) == 0
    capsys.readouterr()
    code = main(["gate", "--candidate", str(report), "--metric", "ndcg@5", "--min", "0.01", "--no-tenants"])
    assert code == 0 and "gate: pass" in capsys.readouterr().out  # the gate reads an active report as any estimate


def test_a_file_mixing_designs_is_refused_in_one_line(tmp_path, world, files, capsys):
    details = _details(tmp_path, world)
    items = tmp_path / "items.csv"
    assert main(["sample", "--design", "active", "--judge", str(details), "--n", "8", "--out", str(items)]) == 0
    rows = _fill(items, world[0], tmp_path / "mixed.csv", drop_design_of=None)
    _fill(items, world[0], tmp_path / "mixed.csv", drop_design_of=rows[0]["query_id"])
    capsys.readouterr()
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(tmp_path / "mixed.csv"), "--judge",
                 str(details)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lack design 'active'" in err
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(tmp_path / "mixed.csv"), "--judge",
                 str(files["judge"])]) == 2  # also with another judge file: still one line
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_active_options_are_checked_in_one_line(tmp_path, world, files, capsys):
    details = _details(tmp_path, world)
    for args, words in ((["--floor", "0.5"], "--floor applies to --design active only"),
                        (["--design", "active", "--target-halfwidth", "0.1"], "does not apply to --design active"),
                        (["--design", "active", "--n", "5", "--floor", "0"], "--floor must be in (0, 1]")):
        if "--n" not in args and "--target-halfwidth" not in args:
            args = args + ["--n", "5"]
        code = main(["sample", "--judge", str(details), *args, "--out", str(tmp_path / "x.csv")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and words in err, err


def test_a_uniform_pilot_then_an_active_batch(tmp_path, world, files, capsys):
    truth = world[0]
    details = _details(tmp_path, world)
    assert main(["sample", "--judge", str(details), "--n", "5", "--seed", "1", "--out", str(tmp_path / "p.csv")]) == 0
    _fill(tmp_path / "p.csv", truth, tmp_path / "pilot.csv")
    assert main(["sample", "--design", "active", "--judge", str(details), "--n", "6", "--seed", "2", "--pilot",
                 str(tmp_path / "pilot.csv"), "--out", str(tmp_path / "second.csv")]) == 0
    assert "pilot" in capsys.readouterr().out
    with open(tmp_path / "second.csv") as fh:
        rows = list(csv.DictReader(fh))
    pilot_q = {r["query_id"] for r in csv.DictReader(open(tmp_path / "pilot.csv"))}
    kept = [r for r in rows if r["query_id"] in pilot_q]
    assert kept and all(r["grade"] != "" for r in kept)
    assert sum(int(r["draws"]) for r in {r["query_id"]: r for r in rows}.values()) == 11
    _fill(tmp_path / "second.csv", truth, tmp_path / "both.csv")
    assert main(["estimate", "--run", str(files["run_a"]), "--human", str(tmp_path / "both.csv"), "--judge",
                 str(details), "--metric", "ndcg@5"]) == 0
    assert "design active: 11 draws" in capsys.readouterr().out


def test_a_uniform_sample_gives_exactly_the_plain_labels_numbers(tmp_path, world, files, capsys):
    """design 'queries' (weight N/n) takes today's path: the same numbers as the same labels without design columns."""
    truth = world[0]
    details = _details(tmp_path, world)
    assert main(["sample", "--judge", str(details), "--n", "8", "--seed", "4", "--out", str(tmp_path / "u.csv")]) == 0
    rows = _fill(tmp_path / "u.csv", truth, tmp_path / "uniform.csv")
    assert {r["design"] for r in rows} == {"queries"}
    with open(tmp_path / "plain.csv", "w") as fh:
        fh.write("query_id,doc_id,grade\n" + "".join(f"{r['query_id']},{r['doc_id']},{r['grade']}\n" for r in rows))
    for rule in ("zero", "exclude"):
        got = {}
        for name in ("uniform", "plain"):
            out = tmp_path / f"{name}.json"
            assert main(["estimate", "--run", str(files["run_b"]), "--human", str(tmp_path / f"{name}.csv"),
                         "--judge", str(details), "--metric", "ndcg@5", "--metric", "mrr", "--no-answer", rule,
                         "--json", str(out)]) == 0
            got[name] = json.loads(out.read_text())
        capsys.readouterr()
        assert "design" not in got["uniform"]["settings"]
        for metric, entry in got["plain"]["aggregate"].items():
            mine = got["uniform"]["aggregate"][metric]
            for part in ("ppi", "human_only"):
                assert mine[part]["value"] == pytest.approx(entry[part]["value"], abs=1e-12)
                for a, b in zip(mine[part]["ci95"], entry[part]["ci95"]):
                    assert a == pytest.approx(b, abs=1e-12)


def test_the_runs_top_ten_decide_the_uncertainty(tmp_path, world, files):
    """u is the nDCG@10 spread over each --run's top 10: pairs a run ranks below 10 do not count (8 documents per
    query here, so a run changes u only through the discounts of its order)."""
    from relgrade.calibration import query_uncertainty, read_judge
    from relgrade.io import read_run

    details = _details(tmp_path, world)
    jl = read_judge(details)
    pool = {q: tuple(sorted(docs)) for q, docs in jl.labels.items()}
    alone = query_uncertainty([jl], pool)
    with_run = query_uncertainty([jl], pool, runs=[read_run(files["run_b"])])
    assert alone.keys() == with_run.keys()
    assert any(abs(alone[q] - with_run[q]) > 1e-6 for q in alone)  # the run's order moves the discounts
    unsure = [q for i, q in enumerate(jl.labels) if i % 2 == 0]  # the details are unsure on every other query
    sure = [q for q in jl.labels if q not in unsure]
    assert min(with_run[q] for q in unsure) > max(with_run[q] for q in sure)


def test_target_width_on_a_uniform_pilot_plans_an_active_batch(tmp_path, world, files, capsys):
    """estimate --target-width on uniform labels also projects the draws of an active second batch: the PPI++
    half-width scaled by mean(w r_c^2) / mean(r_c^2) over the labeled queries (relgrade.hybrid._active)."""
    truth = world[0]
    details = _details(tmp_path, world)
    assert main(["sample", "--judge", str(details), "--n", "12", "--seed", "2", "--out", str(tmp_path / "p.csv")]) == 0
    _fill(tmp_path / "p.csv", truth, tmp_path / "pilot.csv")
    out = tmp_path / "est.json"
    assert main(["estimate", "--run", str(files["run_b"]), "--human", str(tmp_path / "pilot.csv"), "--judge",
                 str(details), "--metric", "ndcg@5", "--no-answer", "zero", "--target-width", "0.1", "--json",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "draws of relgrade sample --design active" in printed
    plan = json.loads(out.read_text())["aggregate"]["ndcg@5"]["plan"]
    assert plan["active_draws"] >= 2
    from relgrade.hybrid._active import active_factor
    import numpy as np

    Y = np.array([[0.2], [0.8], [0.5]])
    J = np.array([[0.3], [0.6], [0.5], [0.1], [0.9], [0.4]])
    u = {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0, "e": 0.0, "f": 0.0}
    f = active_factor(Y, J, np.array([0.5]), 3, list("abcdef"), u)
    from relgrade.stats._weighted import design_probabilities

    q = design_probabilities([u[x] for x in "abcdef"])
    r = Y[:, 0] - 0.5 * J[:3, 0]
    rc2 = (r - r.mean()) ** 2
    assert f[0] == pytest.approx((rc2 / (6 * q[:3])).mean() / rc2.mean(), rel=1e-12)
