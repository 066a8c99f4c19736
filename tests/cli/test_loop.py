"""The guide's loop from the command line on real files: check (golden set vs corpus), corpus fingerprints in
reports and the gate's refusal, ann-recall and gate --min, repeats in evaluate/compare/gate, history; every bad
input is exit 2 with one line naming the file or option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from relgrade import ann_recall, evaluate, evaluate_repeats, read_golden, read_run
from relgrade.cli import main
from relgrade.io import text_sha256

DOCS = {f"d{i}": f"document number {i} about topic {i % 5}" for i in range(20)}


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def corpus_file(tmp_path: Path, docs=DOCS, name="corpus.jsonl") -> Path:
    return write_jsonl(tmp_path / name, [{"doc_id": d, "text": t} for d, t in docs.items()])


def golden_file(tmp_path: Path, n: int = 12) -> Path:
    rows = [{"query_id": f"q{i}", "query": f"question {i}", "relevant_doc_ids": [f"d{i}"],
             "forbidden_doc_ids": [f"d{(i + 10) % 20}"] if i == 3 else []} for i in range(n)]
    return write_jsonl(tmp_path / "golden.jsonl", rows)


def run_file(path: Path, tops: dict[str, list[str]]) -> Path:
    return write_jsonl(path, [{"query_id": q, "results": [{"doc_id": d, "score": len(docs) - i} for i, d in enumerate(docs)]}
                              for q, docs in tops.items()])


def one_line_error(capsys, argv, *needles) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("relgrade: error: ") and "\n" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# ------------------------------------------------------------------------------------------------ check
def test_check_lists_deleted_and_changed_documents_and_duplicate_queries(tmp_path, capsys):
    golden = golden_file(tmp_path)
    corpus = corpus_file(tmp_path)
    stamped = tmp_path / "stamped.jsonl"
    assert main(["check", "--golden", str(golden), "--corpus", str(corpus), "--stamp", str(stamped)]) == 0
    cases = read_golden(stamped).cases
    assert cases[0].text_sha256 == {"d0": text_sha256(DOCS["d0"])}
    # the corpus moves on: d1 deleted, d2 edited; a duplicate query is added to the golden set
    docs = {d: t for d, t in DOCS.items() if d != "d1"}
    docs["d2"] = "document number 2, rewritten"
    rows = [json.loads(x) for x in stamped.read_text().splitlines()]
    rows.append({"query_id": "q99", "query": "  Question 5 ", "relevant_doc_ids": ["d5"]})
    write_jsonl(stamped, rows)
    labels = write_jsonl(tmp_path / "human.jsonl", [
        {"query_id": "q7", "doc_id": "d7", "grade": 2, "text_sha256": text_sha256("an older text")},
        {"query_id": "q8", "doc_id": "gone", "grade": 1}])
    capsys.readouterr()
    code = main(["check", "--golden", str(stamped), "--corpus", str(corpus_file(tmp_path, docs, "new.jsonl")),
                 "--labels", str(labels), "--json", str(tmp_path / "check.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "2 missing from the corpus (deleted documents):" in out and "q1 relevant d1" in out and "q8 label gone" in out
    assert "2 text changed since labeled (stale labels):" in out and "q2 d2" in out and "q7 d7" in out
    assert "1 duplicate queries:" in out and "q5, q99" in out
    data = json.loads((tmp_path / "check.json").read_text())
    assert data["ok"] is False and data["corpus"]["n_docs"] == 19
    assert {(m["query_id"], m["doc_id"]) for m in data["missing"]} == {("q1", "d1"), ("q8", "gone")}


def test_corpus_fingerprint_is_in_reports_and_gate_refuses_a_corpus_change(tmp_path, capsys):
    golden, corpus = golden_file(tmp_path), corpus_file(tmp_path)
    changed = corpus_file(tmp_path, {**DOCS, "d19": "edited"}, "corpus2.jsonl")
    reordered = write_jsonl(tmp_path / "corpus3.jsonl", [{"doc_id": d, "text": DOCS[d]} for d in reversed(DOCS)])
    run = run_file(tmp_path / "run.jsonl", {f"q{i}": [f"d{i}", "d19"] for i in range(12)})
    for name, c in (("a", corpus), ("b", changed), ("c", reordered)):
        assert main(["evaluate", "--run", str(run), "--qrels", str(golden), "--corpus", str(c),
                     "--json", str(tmp_path / f"{name}.json")]) == 0
    a, c = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ac")
    assert a["settings"]["corpus"]["sha256"] == c["settings"]["corpus"]["sha256"]  # same documents, another order
    assert a["recorded"]["time"] and "corpus_check" in a
    one_line_error(capsys, ["gate", "--baseline", str(tmp_path / "a.json"), "--current", str(tmp_path / "b.json")],
                   "computed over different corpora", "--allow-corpus-change")
    gate_json = tmp_path / "gate.json"
    assert main(["gate", "--baseline", str(tmp_path / "a.json"), "--current", str(tmp_path / "b.json"),
                 "--allow-corpus-change", "--json", str(gate_json)]) == 0
    record = json.loads(gate_json.read_text())["settings"]["corpus"]
    assert record["changed"] is True and record["allowed"] is True


def test_evaluate_with_a_corpus_reads_trec_and_csv_qrels_too(tmp_path):
    """--corpus checks the labels against the corpus whatever their format (issue 36: TREC qrels were read as JSON
    after the table was printed, exit 2)."""
    corpus = corpus_file(tmp_path)
    run = run_file(tmp_path / "run.jsonl", {f"q{i}": [f"d{i}", "d19"] for i in range(3)})
    trec = tmp_path / "qrels.txt"
    trec.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(3)) + "q0 0 gone 1\n")
    csv = tmp_path / "qrels.csv"
    csv.write_text("query_id,doc_id,grade\n" + "".join(f"q{i},d{i},1\n" for i in range(3)))
    for labels, missing in ((trec, 1), (csv, 0)):
        out = tmp_path / f"{labels.suffix[1:]}.json"
        assert main(["evaluate", "--run", str(run), "--qrels", str(labels), "--corpus", str(corpus),
                     "--json", str(out)]) == 0
        check = json.loads(out.read_text())["corpus_check"]
        assert check["ok"] is (missing == 0) and json.dumps(check).count("gone") == missing


# ------------------------------------------------------------------------------------------------ ANN
def test_ann_recall_cli_matches_the_library_and_gates_on_a_floor(tmp_path, capsys):
    rng = np.random.default_rng(3)
    exact_tops = {f"q{i}": list(rng.permutation(list(DOCS))[:10]) for i in range(12)}
    ann_tops = {q: top[:8] + ["d_x", "d_y"] if q in ("q0", "q1") else list(top) for q, top in exact_tops.items()}
    exact = run_file(tmp_path / "exact.jsonl", exact_tops)
    ann = run_file(tmp_path / "ann.jsonl", ann_tops)
    report_path = tmp_path / "ann.json"
    assert main(["ann-recall", "--run", str(ann), "--exact", str(exact), "--k", "10", "--json", str(report_path)]) == 0
    out = capsys.readouterr().out
    lib = ann_recall(read_run(ann), read_run(exact), 10)
    assert lib.per_query["q0"] == 0.8 and lib.per_query["q5"] == 1.0
    assert lib.value == pytest.approx((10 * 1.0 + 2 * 0.8) / 12)
    assert f"over 12 queries: {lib.value:.4f} [{lib.aggregate[lib.name].ci95[0]:.4f}" in out
    assert "q0      0.800" in out and "queries that lose most (2 lose any)" in out
    data = json.loads(report_path.read_text())
    assert data["aggregate"]["neighbour_recall@10"]["value"] == pytest.approx(lib.value)
    assert main(["gate", "--current", str(report_path), "--min", "0.95"]) == 0
    assert main(["gate", "--current", str(report_path), "--min", "0.99"]) == 1
    assert "FAIL: below the minimum: neighbour_recall@10" in capsys.readouterr().out


def test_ann_recall_with_labels_gives_deltas_and_leaks(tmp_path):
    golden = read_golden(golden_file(tmp_path))
    exact = {f"q{i}": {f"d{i}": 2.0, "d19": 1.0} for i in range(12)}
    ann = {q: {"d19": 2.0, "d13": 1.0} if q in ("q0", "q3") else dict(docs) for q, docs in exact.items()}
    report = ann_recall(ann, exact, 2, qrels=golden, metrics=["recall@1", "recall@5"])
    d = report.deltas.differences["recall@1"]
    assert (d.a, d.b, d.diff) == (1.0, pytest.approx(10 / 12), pytest.approx(-2 / 12))
    assert report.leaks == [{"query_id": "q3", "query": "question 3", "doc_id": "d13", "rank": 2}]


def test_ann_recall_bad_inputs_are_one_line(tmp_path, capsys):
    exact = run_file(tmp_path / "exact.jsonl", {"q1": ["d1"]})
    other = run_file(tmp_path / "other.jsonl", {"z1": ["d1"]})
    one_line_error(capsys, ["ann-recall", "--run", str(other), "--exact", str(exact)], "share no query", "other.jsonl")
    one_line_error(capsys, ["ann-recall", "--run", str(other), "--exact", str(exact), "--k", "0"], "--k must be")
    one_line_error(capsys, ["ann-recall", "--run", str(other), "--exact", str(exact), "--metric", "mrr"], "--metric needs --labels")
    one_line_error(capsys, ["gate", "--current", str(exact)], "--baseline", "--min")  # --current: --candidate's old name


# ------------------------------------------------------------------------------------------------ repeats
def _repeat_runs(tmp_path: Path, misses: list[set[int]], prefix: str) -> list[Path]:
    """One run per repeat: query i finds d_i at rank 1 unless i is in that repeat's misses (then at rank 7)."""
    paths = []
    for r, miss in enumerate(misses):
        tops = {f"q{i}": ([f"d{(i + j) % 20}" for j in range(1, 7)] + [f"d{i}"] if i in miss else
                          [f"d{i}"] + [f"d{(i + j) % 20}" for j in range(1, 7)]) for i in range(12)}
        paths.append(run_file(tmp_path / f"{prefix}{r}.jsonl", tops))
    return paths


def test_repeats_report_mean_spread_stability_and_the_cli_json(tmp_path, capsys):
    golden = golden_file(tmp_path)
    paths = _repeat_runs(tmp_path, [{0}, {0, 1}, set()], "r")
    rep = evaluate_repeats(read_golden(golden), [read_run(p) for p in paths], ["recall@5"])
    singles = [evaluate(read_golden(golden), read_run(p), ["recall@5"]).value("recall@5") for p in paths]
    assert rep.repeats["metrics"]["recall@5"]["values"] == pytest.approx(singles)
    assert rep.value("recall@5") == pytest.approx(np.mean(singles))
    assert rep.per_query["q0"]["recall@5"] == pytest.approx(1 / 3)
    # top-5 sets: q0 differs in 2 of 3 repeats, q1 in 1; Jaccard of {d0..d4} vs {d1..d5} is 4/6
    st = rep.repeats["stability"]
    assert st["per_query"]["q1"] == pytest.approx((4 / 6 + 1 + 4 / 6) / 3)
    assert st["per_query"]["q0"] == pytest.approx((1 + 4 / 6 + 4 / 6) / 3) and st["n_unstable"] == 2
    lo, hi = rep.aggregate["recall@5"].ci95
    assert lo < rep.value("recall@5") < hi
    out_json = tmp_path / "rep.json"
    args = ["evaluate", "--qrels", str(golden), "--metric", "recall@5", "--json", str(out_json)]
    assert main(args + sum((["--run", str(p)] for p in paths), [])) == 0
    out = capsys.readouterr().out
    assert "3 repeats vs" in out and "top-5 stability" in out
    data = json.loads(out_json.read_text())
    assert data["aggregate"]["recall@5"]["repeats"]["values"] == pytest.approx(singles)


def test_gate_allows_repeat_noise_but_not_a_real_drop(tmp_path, capsys):
    golden = golden_file(tmp_path)

    def report(name, misses):
        paths = _repeat_runs(tmp_path, misses, name)
        path = tmp_path / f"{name}.json"
        assert main(["evaluate", "--qrels", str(golden), "--metric", "recall@5", "--json", str(path)]
                    + sum((["--run", str(p)] for p in paths), [])) == 0
        return str(path)

    base = report("main", [set(), {0}, {1, 2}])
    noisy = report("pr", [{3}, {4, 5}, {6, 7}])  # the same noise level, 1/12 lower on average
    broken = report("bad", [set(range(6)), set(range(7)), set(range(5))])
    capsys.readouterr()
    assert main(["gate", "--baseline", base, "--current", noisy, "--metric", "recall@5", "--max-drop", "0"]) == 0
    assert "repeat noise" in capsys.readouterr().out
    assert main(["gate", "--baseline", base, "--current", broken, "--metric", "recall@5", "--max-drop", "0.02"]) == 1
    assert "FAIL: regression (repeat noise" in capsys.readouterr().out


def test_repeats_of_different_query_sets_and_compare_with_repeats(tmp_path, capsys):
    golden = golden_file(tmp_path)
    a = _repeat_runs(tmp_path, [set(), {0}], "a")
    short = run_file(tmp_path / "short.jsonl", {f"q{i}": [f"d{i}"] for i in range(10)})
    one_line_error(capsys, ["evaluate", "--qrels", str(golden), "--run", str(a[0]), "--run", str(short)],
                   "short.jsonl lacks 2 queries", "same queries")
    b = _repeat_runs(tmp_path, [{0, 1, 2}, {0, 1}], "b")
    assert main(["compare", "--qrels", str(golden), "--metric", "recall@5", "--run-a", str(a[0]), "--run-a", str(a[1]),
                 "--run-b", str(b[0]), "--run-b", str(b[1])]) == 0
    out = capsys.readouterr().out
    assert "recall@5  0.9583  0.7917  -0.1667" in out and "A: 2 repeats" in out and "B: 2 repeats" in out


# ------------------------------------------------------------------------------------------------ history
def test_history_orders_by_recorded_time_draws_the_threshold_and_counts(tmp_path, capsys):
    golden = golden_file(tmp_path)
    paths = []
    for n, (when, misses) in enumerate([("2024-05-03T10:00:00+00:00", {0, 1, 2}), ("2024-05-01T10:00:00+00:00", set()),
                                        ("2024-05-02T10:00:00+00:00", {0})]):
        run = _repeat_runs(tmp_path, [misses], f"h{n}")[0]
        path = tmp_path / f"build{n}.json"
        assert main(["evaluate", "--run", str(run), "--qrels", str(golden), "--json", str(path)]) == 0
        data = json.loads(path.read_text())
        data["recorded"] = {"time": when, "commit": f"{n}abcdef0123"}
        path.write_text(json.dumps(data))
        paths.append(str(path))
    capsys.readouterr()
    html = tmp_path / "trend.html"
    assert main(["history", *paths, "--metric", "recall@5", "--baseline", paths[1], "--max-drop", "0.1",
                 "--html", str(html), "--json", str(tmp_path / "h.json")]) == 1  # the newest (by time) is below
    out = capsys.readouterr().out
    assert "gate: FAIL: the newest report 0abcdef0: recall@5 0.7500 is below the threshold 0.9000" in out
    lines = [x for x in out.splitlines() if x.startswith(("1abcdef0", "2abcdef0", "0abcdef0"))]
    assert [x[:8] for x in lines] == ["1abcdef0", "2abcdef0", "0abcdef0"]  # time order, not argument order
    assert "0.7500 [0.416, 1.000] *" in lines[2] and "gate: at most 0.1 below the baseline" in out
    series = json.loads((tmp_path / "h.json").read_text())
    assert series["thresholds"]["recall@5"] == pytest.approx(0.9)
    assert [p["leaks"] for p in series["points"]] == [0, 0, 0] and [p["failures"] for p in series["points"]] == [0, 1, 3]
    page = html.read_text()
    assert page.count('class="point') == 3 and page.count('class="point below"') == 1 and "<script" not in page


def test_history_bad_inputs_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    one_line_error(capsys, ["history", str(bad)], "bad.json", "no 'aggregate'")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"aggregate": {"recall@5": {"value": 0.5, "ci95": [0.4, 0.6]}}}))
    one_line_error(capsys, ["history", str(good), "--metric", "mrr"], "metric 'mrr' is not in this report")
    one_line_error(capsys, ["history", str(good), "--min", "2"], "--min must be a number in [0, 1]")
