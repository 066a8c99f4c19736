"""Small items of issue 34 (item 10): ann-recall says when the exact search covers only some queries and when --k is
deeper than the exact lists (the metric is named by the k used, never a k that was not); --n-boot's limit holds on
every path of evaluate and compare (repeats and the PPI++ comparison included), and the PPI++ comparison says that
an --n-boot given does not apply to it."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main


def _trec(path, queries, docs):
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {20 - i} sys\n" for q in queries for i, d in enumerate(docs)))
    return path


QUERIES = [f"q{i}" for i in range(56)]


def test_ann_recall_says_the_exact_search_covers_3_of_56_queries(tmp_path, capsys):
    ann = _trec(tmp_path / "ann.txt", QUERIES, ["d1", "d2", "d3", "d4"])
    exact = _trec(tmp_path / "exact.txt", QUERIES[:3], ["d1", "d2", "d5", "d4"])
    out_json = tmp_path / "r.json"
    assert main(["ann-recall", "--run", str(ann), "--exact", str(exact), "--k", "4", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert ("note: 53 of the ANN run's 56 queries have no exact search (e.g. q3, q4, q5) and are not scored: the value "
            "is over 3 queries; run the exact search over every query") in out
    data = json.loads(out_json.read_text())
    assert data["n_queries"] == 3 and len(data["ignored_queries"]) == 53 and len(data["notes"]) == 1


def test_ann_recall_k_deeper_than_every_exact_list_is_the_k_used(tmp_path, capsys):
    ann = _trec(tmp_path / "ann.txt", QUERIES[:4], ["d1", "d2", "d3", "d4"])
    exact = _trec(tmp_path / "exact.txt", QUERIES[:4], ["d1", "d2", "d5", "d4"])
    out_json = tmp_path / "r.json"
    assert main(["ann-recall", "--run", str(ann), "--exact", str(exact), "--k", "99999999999999999999",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "neighbour recall@4 (|ANN top 4 ∩ exact top 4| / 4) over 4 queries: 0.7500" in out
    assert "note: k 99999999999999999999 is deeper than every exact list (the longest holds 4 documents)" in out
    assert "99999999999999999999" not in out.split("note:")[0]  # nothing printed as if it were used
    data = json.loads(out_json.read_text())
    assert list(data["aggregate"]) == ["neighbour_recall@4"] and data["settings"]["k"] == 4
    assert main(["gate", "--current", str(out_json), "--min", "0.7"]) == 0  # the gate reads the k used
    capsys.readouterr()


def test_ann_recall_says_when_some_exact_lists_are_shorter_than_k(tmp_path, capsys):
    ann = _trec(tmp_path / "ann.txt", QUERIES[:2], ["d1", "d2", "d3"])
    exact = tmp_path / "exact.txt"
    exact.write_text("q0 Q0 d1 1 9 s\nq0 Q0 d2 2 8 s\nq0 Q0 d3 3 7 s\nq1 Q0 d1 1 9 s\n")
    assert main(["ann-recall", "--run", str(ann), "--exact", str(exact), "--k", "3"]) == 0
    assert "note: 1 of 2 exact lists hold fewer than 3 documents (e.g. q1): those queries' recall is over their own " \
           "list" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["evaluate", "--run", "{run}", "--qrels", "{qrels}"],
    ["evaluate", "--run", "{run}", "--run", "{run_b}", "--qrels", "{qrels}"],
    ["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--qrels", "{qrels}"],
    ["compare", "--run-a", "{run}", "--run-a", "{run}", "--run-b", "{run_b}", "--run-b", "{run_b}", "--qrels", "{qrels}"],
    ["compare", "--run-a", "{run}", "--run-b", "{run_b}", "--human", "{human}", "--judge", "{judge}"],
], ids=["evaluate", "evaluate-repeats", "compare", "compare-repeats", "compare-ppi"])
def test_n_boot_over_the_limit_is_refused_on_every_path(tmp_path, capsys, fuzz_world, argv):
    files = {k: str(v) for k, v in fuzz_world.write_world(tmp_path).items()}
    assert main([a.format(**files) for a in argv] + ["--n-boot", "100000000"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "relgrade: error: --n-boot: 100,000,000 resamples, over the limit of 100,000; give at most " \
                          "100,000"


def test_n_boot_given_to_the_ppi_comparison_is_said_not_to_apply(tmp_path, capsys, fuzz_world):
    f = {k: str(v) for k, v in fuzz_world.write_world(tmp_path).items()}
    argv = ["compare", "--run-a", f["run"], "--run-b", f["run_b"], "--human", f["human"], "--judge", f["judge"]]
    assert main([*argv, "--n-boot", "500"]) == 0
    assert "note: --n-boot does not apply to the PPI++ comparison" in capsys.readouterr().out
    assert main(argv) == 0
    assert "--n-boot" not in capsys.readouterr().out  # not given: nothing said
