"""relgrade sample: the queries and strata designs are probability samples with the inclusion weights they claim.

Library tests check the designs' probabilities over many seeds (exact frequencies, chi-square); a simulation
shows the weights make a stratified sample's kappa estimate the population kappa (and that without them it is
biased); CLI tests run the real entry point on real files.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import os
import subprocess
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from relgrade import InputError
from relgrade.calibration import (
    Sample,
    query_pool,
    queries_needed,
    read_human,
    read_judge,
    sample_pairs,
    sample_size,
)
from relgrade.calibration._sample import COLUMNS, JUDGE_COLUMNS
from relgrade.cli import main
from relgrade.io import Run, read_qrels


def _kappa(cm: np.ndarray) -> float:
    """Cohen's kappa of a (weighted) confusion matrix: (p_o - p_e) / (1 - p_e)."""
    cm = cm / cm.sum()
    p_o, p_e = np.trace(cm), cm.sum(0) @ cm.sum(1)
    return float((p_o - p_e) / (1 - p_e))


# -- design queries -------------------------------------------------------------------------------------------

def _judge_of_varied_pools():
    """8 queries with 1..8 judged pairs each (so a draw that favoured big pools would show)."""
    return {f"q{i}": {f"d{j}": j % 4 for j in range(i + 1)} for i in range(8)}


def test_queries_design_takes_every_pooled_pair_judged_unjudged_and_run_top_k():
    judge = {"NA": {"d1": 2, "d2": 0}, "q2": {"d1": 1}, "q3": {"x": 3}}
    run = Run.from_dict({"NA": ["d9", "d1", "d8", "d7"], "q2": ["d5"], "q4": ["d6", "d4"]})
    pool = query_pool(judge, unjudged=[("q2", "dx"), ("q5", "dz")], runs=[run], depth=2)
    assert pool == {"NA": ("d1", "d2", "d9"), "q2": ("d1", "dx", "d5"), "q3": ("x",), "q4": ("d6", "d4"),
                    "q5": ("dz",)}
    drawn = sample_pairs(judge, n=3, pool=pool, seed=1)
    assert isinstance(drawn, Sample) and drawn.design == "queries"
    chosen = list(dict.fromkeys(it.query_id for it in drawn.items))
    assert len(chosen) == 3 and drawn.population_queries == 5
    for q in chosen:  # every pooled pair of a chosen query, none of another
        assert [it.doc_id for it in drawn.items if it.query_id == q] == list(pool[q])
    assert {it.weight for it in drawn.items} == {5 / 3}
    assert all(it.stratum is None and it.design == "queries" for it in drawn.items)
    grades = {(it.query_id, it.doc_id): it.judge_grade for it in drawn.items}
    assert all(grades[(q, d)] == judge.get(q, {}).get(d) for q, d in grades)  # None where pooled but not judged


def test_queries_design_is_uniform_over_subsets_whatever_the_pool_sizes():
    judge = _judge_of_varied_pools()
    pool = query_pool(judge)
    counts: Counter = Counter()
    hits: Counter = Counter()
    draws = 56 * 60
    for seed in range(draws):
        chosen = frozenset(it.query_id for it in sample_pairs(judge, n=3, pool=pool, seed=seed).items)
        counts[chosen] += 1
        hits.update(chosen)
    subsets = [frozenset(c) for c in itertools.combinations(sorted(judge), 3)]
    assert set(counts) == set(subsets)  # all 56 subsets of 3 of the 8 queries occur
    assert chisquare([counts[s] for s in subsets]).pvalue > 1e-3  # equally often
    sigma = math.sqrt(3 / 8 * 5 / 8 / draws)
    assert all(abs(hits[q] / draws - 3 / 8) < 4.5 * sigma for q in judge)  # pi = n / N for every query


def test_queries_design_is_reproducible_and_exclusion_drops_whole_queries():
    judge = _judge_of_varied_pools()
    a, b = (sample_pairs(judge, n=4, seed=7) for _ in range(2))
    assert a == b
    assert any(sample_pairs(judge, n=4, seed=s).items != a.items for s in range(1, 5))
    done = {"q7": {"d3": 1}, "q2": {"d0": 0}}
    drawn = sample_pairs(judge, n=10, exclude=done, seed=0)
    assert {it.query_id for it in drawn.items} == set(judge) - {"q7", "q2"}
    assert drawn.population_queries == 6 and {it.weight for it in drawn.items} == {1.0}


def test_queries_needed_converts_pairs_at_the_pool_mean():
    pool = {"a": ("1", "2"), "b": ("1", "2", "3", "4")}  # 3 pairs per query
    assert queries_needed(10, pool) == 4 and queries_needed(9, pool) == 3 and queries_needed(1, pool) == 1


# -- design strata --------------------------------------------------------------------------------------------

def _judge_of_strata(sizes):
    """Grade g on sizes[g] pairs, spread over a few queries."""
    judge: dict[str, dict[str, int]] = {}
    i = 0
    for g, size in enumerate(sizes):
        for _ in range(size):
            judge.setdefault(f"q{i % 4}", {})[f"d{i}"] = g
            i += 1
    return judge


def test_strata_inclusion_probabilities_are_n_h_over_N_h():
    judge = _judge_of_strata([15, 10, 5, 2])
    # equal shares of 12: 3 each, grade 3 capped at 2, its slack of 1 goes to the first open stratum
    first = sample_pairs(judge, n=12, design="strata", seed=0)
    assert [(s.name, s.size, s.drawn) for s in first.strata] == [
        ("grade=0", 15, 4), ("grade=1", 10, 3), ("grade=2", 5, 3), ("grade=3", 2, 2)]
    expected = {s.name: s.drawn / s.size for s in first.strata}
    draws = 3000
    seen: Counter = Counter()
    joint: Counter = Counter()
    for seed in range(draws):
        drawn = sample_pairs(judge, n=12, design="strata", seed=seed)
        keys = [(it.query_id, it.doc_id) for it in drawn.items]
        assert len(set(keys)) == 12  # without replacement
        seen.update(keys)
        joint.update(itertools.combinations(sorted(k for k, it in zip(keys, drawn.items)
                                                   if it.stratum == "grade=2"), 2))
        for s in drawn.strata:  # weights of a stratum sum to its size, of the sample to the population
            total = math.fsum(it.weight for it in drawn.items if it.stratum == s.name)
            assert total == pytest.approx(s.size, rel=1e-12)
        assert math.fsum(it.weight for it in drawn.items) == pytest.approx(32, rel=1e-12)
    for q, docs in judge.items():
        for d, g in docs.items():
            p = expected[f"grade={g}"]
            sigma = math.sqrt(p * (1 - p) / draws)
            assert abs(seen[(q, d)] / draws - p) <= 4.5 * sigma + 1e-12, (q, d, g)
    # simple random sampling within the stratum: every two pairs of grade 2 together with n(n-1)/(N(N-1))
    p2 = 3 * 2 / (5 * 4)
    assert len(joint) == 10
    assert all(abs(c / draws - p2) < 4.5 * math.sqrt(p2 * (1 - p2) / draws) for c in joint.values())


def test_strata_split_grades_into_entropy_terciles_and_need_a_pair_each():
    rng = np.random.default_rng(2)
    judge, dist = {}, {}
    for i in range(60):
        q, d, g = f"q{i % 5}", f"d{i}", i % 2
        p = rng.dirichlet(np.ones(4))
        judge.setdefault(q, {})[d] = g
        dist[(q, d)] = {k: float(p[k]) for k in range(4)}
    drawn = sample_pairs(judge, n=60, design="strata", distribution=dist, seed=0)  # n = N: every pair
    names = [s.name for s in drawn.strata]
    assert names == [f"grade={g}/entropy={b}" for g in (0, 1) for b in ("low", "mid", "high")]
    assert all(s.size == 10 and s.drawn == 10 and s.weight == 1.0 for s in drawn.strata)
    for g in (0, 1):  # the bands are ordered by entropy
        bands = [[it.uncertainty for it in drawn.items if it.stratum == f"grade={g}/entropy={b}"]
                 for b in ("low", "mid", "high")]
        assert max(bands[0]) < min(bands[1]) and max(bands[1]) < min(bands[2])
    flat = {k: {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25} for k in dist}  # ties stay together: one band per grade
    assert len(sample_pairs(judge, n=6, design="strata", distribution=flat, seed=0).strata) == 2
    with pytest.raises(InputError, match=r"--n 5 is fewer than the 6 strata \(judge grades x entropy terciles\)"):
        sample_pairs(judge, n=5, design="strata", distribution=dist)


def _population(seed=1, size=2400):
    """Judged pairs with known human grades: the judge is less reliable on rare grades and when uncertain."""
    rng = np.random.default_rng(seed)
    judge, human, dist = {}, {}, {}
    for i in range(size):
        q, d = f"q{i // 20}", f"d{i % 20}"
        j = int(rng.choice(4, p=[0.6, 0.22, 0.12, 0.06]))
        u = rng.random()
        accuracy = [0.85, 0.5, 0.6, 0.8][j] * (1 - 0.6 * u)
        judge.setdefault(q, {})[d] = j
        human[(q, d)] = j if rng.random() < accuracy else int(rng.integers(0, 4))
        p = np.full(4, u / 4)
        p[j] += 1 - u
        dist[(q, d)] = {g: float(p[g]) for g in range(4)}
    return judge, human, dist


@pytest.mark.parametrize("bands", [False, True], ids=["grades", "grades-x-entropy"])
def test_weighted_confusion_matrix_recovers_the_population_kappa_unweighted_does_not(bands):
    from sklearn.metrics import cohen_kappa_score

    judge, human, dist = _population()
    population = np.zeros((4, 4))
    for q, docs in judge.items():
        for d, j in docs.items():
            population[human[(q, d)], j] += 1
    truth = _kappa(population)
    weighted, unweighted = [], []
    for seed in range(40):
        drawn = sample_pairs(judge, n=240, design="strata", distribution=dist if bands else None, seed=seed)
        cw, cu = np.zeros((4, 4)), np.zeros((4, 4))
        for it in drawn.items:
            cw[human[(it.query_id, it.doc_id)], it.judge_grade] += it.weight
            cu[human[(it.query_id, it.doc_id)], it.judge_grade] += 1
        weighted.append(_kappa(cw))
        unweighted.append(_kappa(cu))
    items = drawn.items  # oracle: the weighted matrix's kappa is sklearn's kappa with sample weights
    assert weighted[-1] == pytest.approx(cohen_kappa_score(
        [human[(it.query_id, it.doc_id)] for it in items], [it.judge_grade for it in items],
        sample_weight=[it.weight for it in items]))
    assert abs(np.mean(weighted) - truth) <= 0.02
    assert np.mean(unweighted) - truth > 0.04  # the weights matter: without them kappa is inflated


def test_design_and_n_are_validated():
    judge = _judge_of_varied_pools()
    with pytest.raises(InputError, match="--design 'random' is not a design; use one of queries, strata"):
        sample_pairs(judge, n=3, design="random")
    for bad in (0, -1, True, 2.5):
        with pytest.raises(InputError, match="--n must be a positive integer"):
            sample_pairs(judge, n=bad)
    with pytest.raises(InputError, match="pool= applies to design 'queries'"):
        sample_pairs(judge, n=3, design="strata", pool=query_pool(judge))
    with pytest.raises(InputError, match="--depth"):
        query_pool(judge, runs=[Run.from_dict({"q0": ["d0"]})])


# -- planning size --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shares,kappa0,h", [([0.25] * 4, 0.5, 0.05), ([0.6, 0.22, 0.12, 0.06], 0.3, 0.1),
                                             ([0.9, 0.1], 0.7, 0.08), ([0.5, 0.3, 0.2], 0.0, 0.2)])
def test_sample_size_is_the_fleiss_cohen_everitt_variance(shares, kappa0, h):
    from statsmodels.stats.inter_rater import cohens_kappa

    counts = [round(s * 1000) for s in shares]
    judge = {"q": {f"d{g}-{i}": g for g, c in enumerate(counts) for i in range(c)}}
    p = np.array(counts) / sum(counts)
    big = 1e6
    table = big * ((1 - kappa0) * np.outer(p, p) + kappa0 * np.diag(p))  # the table the plan assumes
    res = cohens_kappa(table)
    assert res.kappa == pytest.approx(kappa0, abs=1e-12)
    assert sample_size(judge, h, assumed_kappa=kappa0) == math.ceil((1.96 / h) ** 2 * res.var_kappa * big - 1e-9)
    with pytest.raises(InputError, match="--assumed-kappa must be in"):
        sample_size(judge, h, assumed_kappa=-0.2)


# -- through the CLI, on real files ---------------------------------------------------------------------------

@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    human_lines, details = [], []
    for q in range(12):
        for d in range(10):
            h = int(rng.integers(0, 4))
            j = h if rng.random() < 0.6 else int(rng.integers(0, 4))
            human_lines.append(f"q{q} 0 d{d} {h}")
            p = np.full(4, 0.1)
            p[j] = 0.7
            details.append({"query_id": f"q{q}", "doc_id": f"d{d}", "grade": j,
                            "distribution": {str(i): float(p[i]) for i in range(4)},
                            "query": f"question {q}", "text": f"chunk {d} seen by query {q}", "reason": "r",
                            "model": "judge-model"})
    details.append({"query_id": "q0", "doc_id": "dx", "grade": None, "reason": "unparseable", "model": "judge-model"})
    (tmp_path / "human.txt").write_text("\n".join(human_lines) + "\n")
    (tmp_path / "details.jsonl").write_text("".join(json.dumps(o) + "\n" for o in details))
    return tmp_path


def _error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("relgrade: error:") and "\n" not in err and "Traceback" not in err
    return err


def test_cli_queries_design_writes_the_columns_and_every_pooled_pair(tmp_path, capsys):
    # hostile ids and texts: a query 'NA', one doc id with a different text under each query
    details = [{"query_id": q, "doc_id": "NA", "grade": g, "reason": "r", "query": f"what is {q}",
                "text": f"text of NA for {q} é"} for q, g in (("NA", 2), ("q1", 0), ("q2", 1))]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(o) + "\n" for o in details), encoding="utf-8")
    run = [{"query_id": q, "query": f"what is {q}",
            "results": [{"doc_id": "NA", "text": "run text"}, {"doc_id": f"r-{q}", "text": f"run chunk {q}"},
                        {"doc_id": "deep", "text": "never pooled"}]} for q in ("NA", "q1", "q2", "q3")]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(o) + "\n" for o in run), encoding="utf-8")
    out = tmp_path / "items.csv"
    code = main(["sample", "--judge", str(tmp_path / "d.jsonl"), "--run", str(tmp_path / "run.jsonl"), "--depth",
                 "2", "--n", "4", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "design queries: 4 of 4 queries" in printed and "all 8 of their pooled pairs" in printed
    with out.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    # the annotators' file is blind to the judge (issue 25): no judge grade, no stratum named after one
    assert tuple(reader.fieldnames) == COLUMNS == ("query_id", "query", "doc_id", "text", "text_sha256",
                                                   "grade", "design", "weight")
    got = {(r["query_id"], r["doc_id"]): r for r in rows}
    assert set(got) == {(q, d) for q in ("NA", "q1", "q2", "q3") for d in ("NA", f"r-{q}")}  # not "deep"
    assert got[("NA", "NA")]["text"] == "text of NA for NA é" and got[("q1", "NA")]["text"] == "text of NA for q1 é"
    assert got[("q3", "NA")]["text"] == "run text"
    for r in rows:
        assert r["text_sha256"] == hashlib.sha256(r["text"].encode("utf-8")).hexdigest()
        assert r["grade"] == "" and r["design"] == "queries" and float(r["weight"]) == 1.0
    # ...and the judge's grades are kept beside it, row for row, for later
    beside = tmp_path / "items.judge.csv"
    assert f"the judge's grades to {beside} (keep it from the annotators)" in printed
    with beside.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        judged = {(r["query_id"], r["doc_id"]): r for r in reader}
    assert tuple(reader.fieldnames) == JUDGE_COLUMNS and set(judged) == set(got)
    assert judged[("NA", "NA")]["grade"] == "2" and judged[("NA", "r-NA")]["grade"] == ""
    assert judged[("q3", "NA")]["grade"] == "" and all(r["source"] == "judge" and r["stratum"] == ""
                                                        for r in judged.values())


def test_cli_strata_design_then_calibrate_reads_the_filled_file_back(files, capsys):
    items = files / "items.csv"
    code = main(["sample", "--judge", str(files / "details.jsonl"), "--design", "strata", "--n", "20", "--out",
                 str(items), "--seed", "3"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "design strata: 20 pairs from 4 strata" in printed
    assert "relgrade calibrate uses the 'weight' column" in printed and "cannot feed relgrade estimate" in printed
    rows = list(csv.DictReader(items.open()))
    assert len(rows) == 20 and list(rows[0]) == list(COLUMNS)
    assert all(r["grade"] == "" and r["design"] == "strata" for r in rows)
    # the strata (named after the judge's grades) are kept beside the blind file, with the judge's grades
    beside = {(r["query_id"], r["doc_id"]): r for r in csv.DictReader((files / "items.judge.csv").open())}
    stratum = {(r["query_id"], r["doc_id"]): beside[(r["query_id"], r["doc_id"])]["stratum"] for r in rows}
    assert all(b["stratum"] == f"grade={b['grade']}" for b in beside.values())
    # the flat-ish distributions all have the same entropy: one band per grade, every grade represented
    assert Counter(stratum.values()) == {f"grade={g}": 5 for g in range(4)}
    sizes = Counter(f"grade={g}" for docs in read_judge(files / "details.jsonl").labels.values() for g in docs.values())
    for name, size in sizes.items():
        assert math.fsum(float(r["weight"]) for r in rows
                         if stratum[(r["query_id"], r["doc_id"])] == name) == pytest.approx(size, rel=1e-12)
    with pytest.raises(InputError):
        read_qrels(items)  # an empty grade is an error for the plain qrels reader...
    human = {tuple(l.split()[0::2]): l.split()[3] for l in (files / "human.txt").read_text().splitlines()}
    for r in rows[:15]:  # humans filled 15 of the 20
        r["grade"] = human[(r["query_id"], r["doc_id"])]
    with items.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert read_human(items).n_empty == 5  # ...but calibrate's reader skips and counts it
    code = main(["calibrate", "--judge", str(files / "details.jsonl"), "--human", str(items), "--n-boot", "50",
                 "--json", str(files / "o.json")])
    assert code == 0
    assert "skipped 5 rows with an empty grade" in capsys.readouterr().out
    assert json.loads((files / "o.json").read_text())["n_pairs"] == 15


def test_cli_jsonl_output_and_target_halfwidth_in_queries(files, capsys):
    out = files / "items.jsonl"
    code = main(["sample", "--judge", str(files / "details.jsonl"), "--target-halfwidth", "0.3", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    jl = read_judge(files / "details.jsonl")
    pairs = sample_size(jl.labels, 0.3)
    n = math.ceil(pairs / (121 / 12))  # 120 judged pairs + 1 unjudged over 12 queries
    assert f"about {pairs} pairs (assuming kappa 0.5), i.e. {n} queries at the observed 10.1 pooled pairs" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(tuple(r) == COLUMNS for r in rows)
    assert len({r["query_id"] for r in rows}) == n
    assert all(r["grade"] is None and r["weight"] == 12 / n for r in rows)
    beside = {(r["query_id"], r["doc_id"]): r for r in map(json.loads, (files / "items.judge.jsonl").read_text().splitlines())}
    assert set(beside) == {(r["query_id"], r["doc_id"]) for r in rows}
    assert all(b["stratum"] is None and b["model"] == "judge-model" for b in beside.values())
    unjudged = [r for r in rows if r["doc_id"] == "dx"]
    assert all(beside[(r["query_id"], "dx")]["grade"] is None and r["text"] == "" and r["text_sha256"] is None
               for r in unjudged)
    if unjudged:
        assert "1 pair has no chunk text" in printed


def test_cli_user_errors_exit_2_with_one_line(files, capsys):
    judge = str(files / "details.jsonl")
    out = files / "s.csv"
    assert "--design 'uniform' is not a design; use one of queries, strata" in _error(
        capsys, ["sample", "--judge", judge, "--design", "uniform", "--n", "3", "--out", str(out)])
    assert "--n must be a positive integer, got 0" in _error(capsys, ["sample", "--judge", judge, "--n", "0",
                                                                      "--out", str(out)])
    assert "--n 3 is fewer than the 4 strata" in _error(capsys, ["sample", "--judge", judge, "--design", "strata",
                                                                 "--n", "3", "--out", str(out)])
    assert "--depth" in _error(capsys, ["sample", "--judge", judge, "--depth", "5", "--n", "3", "--out", str(out)])
    assert "exactly one of --n" in _error(capsys, ["sample", "--judge", judge, "--out", str(out)])
    assert "--out must end in .csv or .jsonl" in _error(capsys, ["sample", "--judge", judge, "--n", "3", "--out",
                                                                 str(files / "s.txt")])
    assert not out.exists()


def test_cli_excluding_every_labeled_pair_leaves_nothing(files, capsys):
    for design, message in (("queries", "no query left to sample"), ("strata", "no judged pair left")):
        assert message in _error(capsys, ["sample", "--judge", str(files / "details.jsonl"), "--design", design,
                                          "--n", "20", "--exclude", str(files / "human.txt"), "--out",
                                          str(files / "s.csv")])


def test_cli_unwritable_output_exits_2_before_anything_is_read_or_written(files, capsys):
    judge = str(files / "details.jsonl")
    missing = files / "no-such-folder" / "items.csv"
    assert "does not exist" in _error(capsys, ["sample", "--judge", judge, "--n", "3", "--out", str(missing)])
    (files / "afile").write_text("x")
    assert "is not a folder" in _error(capsys, ["sample", "--judge", judge, "--n", "3", "--out",
                                                str(files / "afile" / "items.csv")])
    (files / "x.csv").mkdir()
    assert "is a directory" in _error(capsys, ["sample", "--judge", judge, "--n", "3", "--out", str(files / "x.csv")])
    # the output is checked first: a bad judge file is not even read
    assert "does not exist" in _error(capsys, ["sample", "--judge", str(files / "nope.jsonl"), "--n", "3", "--out",
                                               str(missing)])
    assert not missing.parent.exists()


@pytest.fixture()
def read_only_dir(tmp_path):
    """A folder nobody can write to: chmod for a normal user; a read-only bind mount for root, who ignores modes."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    ok = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode == 0
    if ok and subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True).returncode != 0:
        subprocess.run(["umount", str(folder)], capture_output=True)
        ok = False
    if not ok:
        pytest.skip("running as root without permission to mount a read-only folder")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, check=True)


def test_cli_read_only_output_folder_exits_2_and_writes_nothing(files, read_only_dir, capsys):
    out = read_only_dir / "items.csv"
    err = _error(capsys, ["sample", "--judge", str(files / "details.jsonl"), "--n", "3", "--out", str(out)])
    assert "cannot write here" in err and str(out) in err
    assert not out.exists() and list(read_only_dir.iterdir()) == []
