"""Valid but odd inputs give the right numbers: NA-like ids, BOM, CRLF, CR-only, cells over 128 KiB (issue 15)."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main

pytrec_eval = pytest.importorskip("pytrec_eval")

ODD_IDS = ["NA", "NULL", "None", "nan", "N/A", "<NA>"]


def _evaluate_json(tmp_path, run, qrels, name):
    out = tmp_path / f"{name}.json"
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--metric", "mrr", "--metric", "ndcg@3",
                 "--no-answer", "zero", "--n-boot", "20", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_evaluate_with_na_ids_bom_and_crlf_equals_trec_eval(tmp_path):
    qrels = {q: {q: 1, "x": 2 if i % 2 else 0} for i, q in enumerate(ODD_IDS)}
    run = {q: {"x": 3.0, "NA" if q != "NA" else "y": 2.0, q: 1.0} for q in ODD_IDS}
    (tmp_path / "q.txt").write_bytes(("\ufeff" + "".join(f"{q} 0 {d} {g}\r\n" for q, docs in qrels.items()
                                                         for d, g in docs.items())).encode("utf-8"))
    (tmp_path / "r.txt").write_bytes(("\ufeff" + "".join(f"{q} Q0 {d} 1 {s} t\r\n" for q, docs in run.items()
                                                         for d, s in docs.items())).encode("utf-8"))
    report = _evaluate_json(tmp_path, tmp_path / "r.txt", tmp_path / "q.txt", "odd")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.3"}).evaluate(run)
    assert set(report["per_query"]) == set(ODD_IDS)
    for q in ODD_IDS:
        assert report["per_query"][q]["mrr"] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)
        assert report["per_query"][q]["ndcg@3"] == pytest.approx(theirs[q]["ndcg_cut_3"], abs=1e-12)


def _human(rows, newline="\n", bom=""):
    return bom + "query_id,doc_id,grade,text" + newline + "".join(
        f"{q},{d},{g},{t}{newline}" for q, d, g, t in rows)


def _calibrate(tmp_path, human_text, name):
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "grade": (i * 7) % 4, "model": "m"}) + "\n"
                             for i, (q, d) in enumerate((q, d) for q in ODD_IDS for d in ("a", "b", "NA"))))
    human = tmp_path / f"{name}.csv"
    human.write_bytes(human_text.encode("utf-8"))
    out = tmp_path / f"{name}.json"
    assert main(["calibrate", "--judge", str(judge), "--human", str(human), "--n-boot", "20", "--no-mapping",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    return data["n_pairs"], data["kappa"]["value"], data["confusion"] if "confusion" in data else None


def test_calibrate_reads_bom_crlf_cr_only_and_huge_cells_the_same(tmp_path):
    rows = [(q, d, (i * 5) % 4, f"text {i}") for i, (q, d) in enumerate((q, d) for q in ODD_IDS for d in ("a", "b", "NA"))]
    plain = _calibrate(tmp_path, _human(rows), "plain")
    assert plain[0] == len(rows) == 18
    assert _calibrate(tmp_path, _human(rows, "\r\n", "\ufeff"), "bom_crlf") == plain
    assert _calibrate(tmp_path, _human(rows, "\r"), "cr_only") == plain
    huge = [(q, d, g, t + " " + "x" * 200_000 if i == 3 else t) for i, (q, d, g, t) in enumerate(rows)]
    assert _calibrate(tmp_path, _human(huge), "huge_cell") == plain


def test_hybrid_keeps_na_ids_and_spreadsheet_formula_ids(tmp_path):
    ids = [*ODD_IDS, "=1+1", "-3", "@home", "+x"]
    human = tmp_path / "h.csv"
    from relgrade.io import Label, write_labels

    write_labels([Label(q, q, 2, "human", annotator="a") for q in ids], human)
    cells = human.read_text().splitlines()[1:]
    assert all(not c.startswith(("=", "+", "-", "@")) for c in cells)  # neutralised for spreadsheets
    out = tmp_path / "hy.jsonl"
    assert main(["hybrid", "--human", str(human), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["query_id"], r["doc_id"], r["grade"]) for r in rows) == sorted((q, q, 2) for q in ids)
