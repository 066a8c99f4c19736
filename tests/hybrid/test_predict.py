"""predict(): cross-fitted soft predictions for PPI, several judges at once, and how estimate / rank-systems use them."""

from __future__ import annotations

import json

import numpy as np
import ppi_py
import pytest

from relgrade.cli import main
from relgrade.hybrid import estimate, human_only_means, per_query_values, ppi_means, predict, rank_systems
from relgrade.io import Qrels, Run
from relgrade.metrics import parse_metrics

METRICS = parse_metrics(["ndcg@5", "recall@3", "precision@5", "mrr", "frac_recall@3"])


def jury(seed: int, *, Q: int = 40, D: int = 8, n_human: int = 12, keep=(0.5, 0.5)):
    """Truth grades, judges that keep each grade with probability ``keep[j]`` and else draw one at random
    (independently of each other), humans on the first ``n_human`` queries, a random run."""
    rng = np.random.default_rng(seed)
    truth, run = {}, {}
    judges = [{} for _ in keep]
    for i in range(Q):
        q = f"q{i}"
        g = rng.choice(4, size=D, p=[0.5, 0.2, 0.2, 0.1])
        truth[q] = {f"{q}d{j}": int(x) for j, x in enumerate(g)}
        for judge, k in zip(judges, keep):
            noisy = np.where(rng.random(D) < k, g, rng.integers(0, 4, D))
            judge[q] = {f"{q}d{j}": int(x) for j, x in enumerate(noisy)}
        run[q] = {f"{q}d{j}": float(s) for j, s in enumerate(rng.random(D))}
    human = {q: truth[q] for q in list(truth)[:n_human]}
    return truth, human, judges, Run.from_dict(run)


def test_a_labeled_querys_own_labels_never_move_its_prediction():
    truth, human, (judge, _), run = jury(1)
    before = predict(run, human, judge, METRICS)
    q = "q3"
    changed = dict(human, **{q: {d: 3 - g for d, g in human[q].items()}})  # its human labels turned upside down
    after = predict(run, changed, judge, METRICS)
    i = before.queries.index(q)
    assert after.values[0, i] == pytest.approx(before.values[0, i], abs=0) and after.answerable[i] == before.answerable[i]
    # the labels did go somewhere: the other folds' labeled queries and every unlabeled query moved
    moved = np.abs(after.values[0] - before.values[0]).max(axis=1) > 1e-9
    assert moved[before.n_labeled:].all() and moved[:before.n_labeled].sum() >= before.n_labeled // 2
    assert before.description["folds"] == 5 and before.description["kind"] == "soft"


def test_ppi_point_estimates_with_soft_predictions_equal_ppi_python():
    truth, human, judges, run = jury(2)
    for judge in (judges[0], judges):  # one judge, then both together
        report = estimate(run, human, judge, METRICS, no_answer="zero")
        pred = predict(run, human, judge, METRICS)
        labeled, queries = list(report.labeled), list(report.labeled + report.unlabeled)
        Y = np.array([[report.per_query["human"][q][m.name] for m in METRICS] for q in labeled])
        J = np.array([[report.per_query["judge"][q][m.name] for m in METRICS] for q in queries])
        assert J == pytest.approx(pred.values[0], abs=1e-12)  # estimate uses predict's values, nothing else
        assert Y == pytest.approx(per_query_values(Qrels(human), run, METRICS, labeled))
        n = len(labeled)
        for j, m in enumerate(METRICS):
            lam = report.estimates[m.name].lam  # tuned by relgrade.stats._augmented; the point is ppi-python's at it
            want = float(np.ravel(ppi_py.ppi_mean_pointestimate(Y[:, j], J[:n, j], J[n:, j], lam=lam))[0])
            assert report.estimates[m.name].ppi == pytest.approx(want, abs=1e-12)
        assert report.settings["prediction"]["kind"] == "soft"


def test_two_independent_judges_predict_better_than_either_alone():
    """A jury: two judges with independent errors carry more information than one; the joint fit uses it."""
    r = {"a": [], "b": [], "both": []}
    width = {"a": [], "both": []}
    m = METRICS[0]  # ndcg@5
    for seed in range(6):
        truth, human, (a, b), run = jury(10 + seed, Q=60, n_human=15, keep=(0.45, 0.45))
        for name, judge in (("a", a), ("b", b), ("both", [a, b])):
            pred = predict(run, human, judge, [m])
            t = per_query_values(Qrels(truth), run, [m], pred.queries)[:, 0]
            r[name].append(np.corrcoef(t, pred.values[0, :, 0])[0, 1])
            if name in width:
                n = pred.n_labeled
                est = ppi_means(t[:n], pred.values[0, :n, 0], pred.values[0, n:, 0])
                width[name].append(float(est.width[0]) / float(human_only_means(t[:n]).width[0]))
    mean = {k: float(np.mean(v)) for k, v in r.items()}
    print(f"ndcg@5 correlation with the truth: judge a {mean['a']:.3f}, judge b {mean['b']:.3f}, both "
          f"{mean['both']:.3f}; PPI width / human-only: a {np.mean(width['a']):.3f}, both {np.mean(width['both']):.3f}")
    assert mean["both"] > max(mean["a"], mean["b"]) + 0.05
    assert np.mean(width["both"]) < np.mean(width["a"])


def test_pairs_no_judge_graded_get_the_fitted_base_rate():
    truth, human, (judge, _), run = jury(3)
    half = {q: {d: g for d, g in docs.items() if int(d.rsplit("d", 1)[1]) % 2 == 0} for q, docs in judge.items()}
    del half["q0"]  # a labeled query the judge never saw: its pool is the run's documents, all unjudged
    pred = predict(run, human, half, parse_metrics(["recall@3", "precision@3"]))
    recall, precision = pred.values[0, pred.queries.index("q0")]
    assert 0 < precision < 1 and recall == pytest.approx(1 - (1 - precision) ** 3)  # one base rate p, never 0
    assert pred.description["retrieved_pairs_no_judge_graded"] == sum(len(d) - len(half.get(q, {}))
                                                                    for q, d in judge.items())
    assert "judge did not grade" in pred.description["features"]


def test_hard_prediction_is_the_metric_on_the_judges_grades():
    truth, human, (judge, _), run = jury(4)
    pred = predict(run, human, judge, METRICS, prediction="hard")
    assert pred.values[0] == pytest.approx(per_query_values(Qrels(judge), run, METRICS, pred.queries))
    assert pred.description["kind"] == "hard" and pred.description["folds"] is None


def test_rank_systems_uses_one_model_and_pool_for_every_run():
    truth, human, judges, run = jury(5)
    other = Run.from_dict({q: {d: -s for d, s in docs.items()} for q, docs in run.to_dict().items()}, name="rev")
    runs = {"fwd": Run.from_dict(run.to_dict(), name="fwd"), "rev": other}
    rep = rank_systems(runs, human, judges, "ndcg@5", n_boot=20, n_perm=50)
    pred = predict(list(runs.values()), human, judges, parse_metrics(["ndcg@5"]))
    A = pred.answerable > 0.5
    for r, name in enumerate(runs):
        assert rep.values["judge"][name] == pytest.approx(pred.values[r, A, 0].mean())
    assert rep.settings["prediction"]["judges"] == ["judge", "judge (2)"]


def _details(path, labels, *, scale=None, expected=False):
    rows = []
    for q, docs in labels.items():
        for d, g in docs.items():
            row = {"query_id": q, "doc_id": d, "query": q, "text": d, "grade": g, "model": "fake/judge"}
            if scale:
                row["scale"] = scale
            if expected:
                row["expected_grade"] = g + 0.3 * np.sin(len(d) + g)
            rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.fixture()
def jury_files(tmp_path):
    truth, human, (a, b), run = jury(6)
    paths = {"a": _details(tmp_path / "a.details.jsonl", a, expected=True), "b": _details(tmp_path / "b.details.jsonl", b)}
    (tmp_path / "human.tsv").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in human.items() for d, g in docs.items()))
    (tmp_path / "run.tsv").write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.to_dict().items()
                                              for d, s in docs.items()))
    paths.update(human=str(tmp_path / "human.tsv"), run=str(tmp_path / "run.tsv"), dir=tmp_path, labels=(human, a, b))
    return paths


def test_estimate_cli_takes_several_judges_and_records_the_prediction(jury_files, capsys):
    f = jury_files
    out = f["dir"] / "est.json"
    assert main(["estimate", "--run", f["run"], "--human", f["human"], "--judge", f["a"], "--judge", f["b"],
                 "--metric", "ndcg@5,recall@3", "--folds", "4", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "prediction: soft" in printed and "4-fold cross-fit" in printed
    settings = json.loads(out.read_text())["settings"]
    desc = settings["prediction"]
    assert desc["kind"] == "soft" and desc["judges"] == [f["a"], f["b"]] and desc["folds"] == 4
    assert f"{f['a']} expected grade - grade" in desc["features"]  # the details' expected grades are used
    assert len(settings["judge_labels"]) == 2
    rank = f["dir"] / "rank.json"
    other = f["dir"] / "other.tsv"
    other.write_text(f["dir"].joinpath("run.tsv").read_text().replace(" r\n", " s\n"))  # a second system
    assert main(["rank-systems", "--run", f["run"], "--run", str(other), "--human", f["human"], "--judge", f["a"],
                 "--judge", f["b"], "--metric", "ndcg@5", "--n-boot", "20", "--json", str(rank)]) == 0
    assert json.loads(rank.read_text())["metrics"]["ndcg@5"]["settings"]["prediction"]["judges"] == [f["a"], f["b"]]


@pytest.mark.parametrize("case, words", [
    ("other scale", "grades on 0-1 but"),
    ("no labeled query", "grades none of the 12 human-labeled queries"),
    ("folds", "--folds 13 is more than the 12 human-labeled queries"),
    ("no pair in common", "have no (query, doc) pair in common"),
    ("hard with two", "--prediction hard computes the metric on one judge's grades"),
])
@pytest.mark.parametrize("command", ["estimate", "rank-systems"])
def test_bad_input_exits_2_with_one_line(jury_files, tmp_path, capsys, case, words, command):
    f = jury_files
    human, a, b = f["labels"]
    judges, extra = [f["a"], f["b"]], []
    if case == "other scale":
        binary = {q: {d: int(g >= 2) for d, g in docs.items()} for q, docs in b.items()}
        judges = [f["a"], _details(tmp_path / "binary.details.jsonl", binary, scale=[0, 1])]
    elif case == "no labeled query":
        judges = [_details(tmp_path / "unlabeled.details.jsonl", {q: d for q, d in b.items() if q not in human})]
    elif case == "folds":
        extra = ["--folds", "13"]
    elif case == "no pair in common":
        renamed = {q: {f"{d}x": g for d, g in docs.items()} for q, docs in b.items()}
        judges = [f["a"], _details(tmp_path / "renamed.details.jsonl", renamed)]
    else:
        extra = ["--prediction", "hard"]
    runs = ["--run", f["run"]] if command == "estimate" else ["--run", f["run"], "--run", f["run"] + ".2"]
    if command == "rank-systems":
        (tmp_path / "run.tsv.2").write_text((tmp_path / "run.tsv").read_text())
    args = [command, *runs, "--human", f["human"], *[x for j in judges for x in ("--judge", j)], *extra,
            "--metric", "ndcg@5"]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("relgrade: error:") and words in err[0], err


def test_gate_records_which_prediction_each_report_used():
    from relgrade import gate

    truth, human, (judge, _), run = jury(7)
    other = Run.from_dict({q: {d: -s for d, s in docs.items()} for q, docs in run.to_dict().items()})
    soft = estimate(run, human, judge, ["recall@5"], forbidden={})
    hard = estimate(other, human, judge, ["recall@5"], forbidden={}, prediction="hard")
    recorded = gate(soft, hard, metrics=["recall@5"]).to_dict()["settings"]["prediction"]
    assert recorded["baseline"]["kind"] == "soft" and recorded["current"]["kind"] == "hard"
    assert recorded["baseline"]["folds"] == 5 and recorded["current"]["folds"] is None


def test_soft_prediction_blends_the_calibrated_expectation_with_each_judges_own_metric(monkeypatch):
    """The default prediction is half the calibrated expectation and half the metric on the judges' own grades,
    over the judges that graded the query, each weighted by r^2 / (1 - r^2) with r the correlation of its own metric
    with the calibrated expectation (issue 35); a query no judge graded keeps the expectation alone."""
    import relgrade.hybrid._soft as soft

    truth, human, judges, run = jury(7)
    judges[1].pop("q30")  # an unlabeled query only the first judge graded
    for j in judges:
        j.pop("q2")  # a labeled query no judge graded
    blended = predict(run, human, judges, METRICS)
    monkeypatch.setattr(soft, "_blend", lambda values, ans, *args: (values, ans))
    calibrated = predict(run, human, judges, METRICS)
    hard = [per_query_values(Qrels(j), run, METRICS, blended.queries) for j in judges]
    graded = np.array([[q in j for q in blended.queries] for j in judges], dtype=float)  # judges x queries
    weight = np.zeros((len(judges), len(METRICS)))
    for k in range(len(judges)):
        at = graded[k] > 0
        for m in range(len(METRICS)):
            r = np.clip(np.corrcoef(hard[k][at, m], calibrated.values[0][at, m])[0, 1], 0, 0.99)
            weight[k, m] = r * r / (1 - r * r)
    wq = graded[:, :, None] * weight[:, None, :]  # judges x queries x metrics
    mean_hard = (wq * np.stack(hard)).sum(axis=0) / np.maximum(wq.sum(axis=0), 1e-300)
    want = np.where(graded.any(axis=0)[:, None], (calibrated.values[0] + mean_hard) / 2, calibrated.values[0])
    assert blended.values[0] == pytest.approx(want, abs=1e-12)
    assert (weight > 0).all() and not np.allclose(weight[0], weight[1])  # two judges of different quality
    i30, i2 = blended.queries.index("q30"), blended.queries.index("q2")
    assert blended.values[0, i30] == pytest.approx((calibrated.values[0, i30] + hard[0][i30]) / 2)
    assert blended.values[0, i2] == pytest.approx(calibrated.values[0, i2])
    assert "r^2 / (1 - r^2)" in blended.description["blend"]
