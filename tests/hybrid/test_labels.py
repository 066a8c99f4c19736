"""Hybrid label sets: provenance, human beats judge, stale labels, mapping, coverage, evaluate integration."""

from __future__ import annotations

import json

import pytest

from relgrade._errors import InputError
from relgrade.cli import main
from relgrade.hybrid import (
    Label, coverage, merge_labels, read_human_labels, read_hybrid, read_judge_labels, read_mapping, text_sha256,
    write_hybrid,
)
from relgrade.io import Qrels, Run, read_qrels


def test_human_beats_judge_and_stale_labels_are_set_apart():
    texts = {"d1": "one", "d2": "two", "d3": "three"}
    human = [Label("q", "d1", 3, "human", annotator="alice", text_sha256=text_sha256("one"))]
    judge = [Label("q", "d1", 0, "judge", model="m", text_sha256=text_sha256("one")),
             Label("q", "d2", 2, "judge", model="m", text_sha256=text_sha256("two (old)")),
             Label("q", "d3", 1, "judge", model="m"),
             Label("q", "gone", 1, "judge", model="m", text_sha256=text_sha256("x"))]
    merged = merge_labels(human, judge, texts=texts)
    assert merged.to_qrels().labels == {"q": {"d1": 3, "d3": 1}}
    assert merged.sources() == {("q", "d1"): "human", ("q", "d3"): "judge"}
    assert {(s.label.doc_id, s.reason.split()[0]) for s in merged.stale} == {("d2", "chunk"), ("gone", "document")}
    assert merged.overridden == 1 and merged.unstamped == 1
    # issue 16: a label without a hash is unchecked, never stamped with the current text (that made it "fresh")
    unstamped = next(lab for lab in merged.labels if lab.doc_id == "d3")
    assert unstamped.text_sha256 is None and merged.unchecked == 1
    assert "1 labels unchecked for staleness (1 without a recorded text hash" in merged.summary()


def test_a_run_without_a_doc_text_does_not_make_it_stale():
    lab = Label("q", "d9", 1, "judge", text_sha256=text_sha256("x"))
    merged = merge_labels([], [lab], texts={"other": "t"}, missing_is_stale=False)
    assert merged.labels == (lab,) and merged.unchecked == 1 and not merged.stale


def test_round_trip_and_read_qrels_reads_the_same_labels(tmp_path):
    labels = [Label("q1", "a", 2, "human", annotator="alice", time="2024-01-01", text_sha256="ab"),
              Label("q1", "b", 1, "judge", model="m", prompt_hash="p", judge_grade=2, mapped=True, time="t")]
    stale = merge_labels([], [Label("q2", "c", 3, "judge", text_sha256="old")], texts={"c": "new"}).stale
    hybrid = merge_labels(labels[:1], labels[1:])
    out = write_hybrid(type(hybrid)(hybrid.labels, stale), tmp_path / "h.jsonl")
    back = read_hybrid(out)
    assert back.labels == tuple(labels)
    assert [s.label.doc_id for s in back.stale] == ["c"]
    assert read_qrels(out).labels == {"q1": {"a": 2, "b": 1}}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["source"] == "human" and rows[1]["prompt_hash"] == "p" and rows[1]["mapped"] is True


def test_human_reader_keeps_annotators_time_and_text_hash(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("query_id,doc_id,grade,annotator,time,text\n"
                 "q,d,1,alice,2024-01-01T00:00:00,hello\nq,d,3,bob,2024-02-01T00:00:00,hello\nq,e,,carol,,x\n")
    (lab,) = read_human_labels(p)
    assert lab.grade == 1 and lab.annotator == "alice,bob" and lab.annotations == {"alice": 1, "bob": 3}
    assert lab.time == "2024-02-01T00:00:00" and lab.text_sha256 == text_sha256("hello")


def test_mapping_is_applied_only_when_adopted(tmp_path, files):
    table = tmp_path / "m.json"
    table.write_text(json.dumps({"mapping": {"adopted": True, "table": {"0": 0, "1": 0, "2": 1, "3": 2}}}))
    mapped = read_judge_labels(files["judge"], mapping=read_mapping(table))
    raw = read_judge_labels(files["judge"])
    assert raw.n_unjudged == 1 and raw.model == "fake/judge"
    by_raw = {(lab.query_id, lab.doc_id): lab.grade for lab in raw.labels}
    for lab in mapped.labels:
        assert lab.grade == {0: 0, 1: 0, 2: 1, 3: 2}[by_raw[(lab.query_id, lab.doc_id)]]
        assert lab.mapped and lab.judge_grade == by_raw[(lab.query_id, lab.doc_id)]
    table.write_text(json.dumps({"adopted": False, "table": {"0": 3}}))
    assert [lab.grade for lab in read_judge_labels(files["judge"], mapping=read_mapping(table)).labels] == \
        [lab.grade for lab in raw.labels]


def test_calibration_mapping_json_is_accepted(tmp_path, world, files):
    from relgrade.calibration import fit_mapping

    truth, human, judge, _, _ = world
    lenient = {q: {d: min(3, g + 1) for d, g in docs.items()} for q, docs in judge.items()}
    gm = fit_mapping(lenient, truth, n_boot=200, seed=0)
    p = tmp_path / "cal.json"
    p.write_text(json.dumps({"judge": "x", "mapping": gm.to_dict()}))
    m = read_mapping(p)
    assert m.adopted == gm.adopted
    for g in range(4):
        assert m.apply(g) == (gm.apply(g) if gm.adopted else g)
    p.write_text("{}")
    with pytest.raises(InputError, match="no mapping found"):
        read_mapping(p)


def _trec_top(run: dict, k: int) -> list[str]:
    """trec_eval order written out plainly: score desc, then doc id desc."""
    return [d for d, _ in sorted(run.items(), key=lambda x: (-x[1], tuple(-ord(c) for c in x[0])))][:k]


def test_coverage_counts_the_top_k_by_source(world):
    _, human, judge, _, runs = world
    sources = {(q, d): "judge" for q, docs in judge.items() for d in list(docs)[:5]}
    sources.update({(q, d): "human" for q, docs in human.items() for d in list(docs)[:3]})
    labels = {}
    for (q, d) in sources:
        labels.setdefault(q, {})[d] = 1
    cov = coverage(Qrels(labels), Run.from_dict(runs["b"]),
                   sources, ["ndcg@4", "mrr"])
    for name, k in (("ndcg@4", 4), ("mrr", 8)):
        counts = {"human": 0, "judge": 0, "none": 0}
        for q in labels:
            for d in _trec_top(runs["b"][q], k):
                counts[sources.get((q, d), "none")] += 1
        total = sum(counts.values())
        c = cov[name]
        assert (c.human, c.judge, c.none, c.n_docs) == pytest.approx(
            (counts["human"] / total, counts["judge"] / total, counts["none"] / total, total))
        assert abs(sum(c.per_query["q0"][s] for s in ("human", "judge", "none")) - 1) < 1e-12


def test_hybrid_cli_then_evaluate_shows_coverage(files, capsys):
    out = files["dir"] / "hy.jsonl"
    assert main(["hybrid", "--human", str(files["human"]), "--judge", str(files["judge"]),
                 "--corpus", str(files["corpus"]), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "96 judge labels overridden by humans" in text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 40 * 8
    assert sum(r["source"] == "human" for r in rows) == 12 * 8
    assert all(r["text_sha256"] for r in rows)
    human_row = next(r for r in rows if r["source"] == "human")
    assert human_row["annotator"] == "alice" and human_row["time"].startswith("2024-05-01")

    # the corpus changes one chunk: its label is stale at evaluate time (the run carries the new text)
    run_path = files["run_a"]
    lines = run_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["results"][0]["text"] = "rewritten chunk"
    lines[0] = json.dumps(first)
    run_path.write_text("\n".join(lines) + "\n")
    report = files["dir"] / "ev.json"
    assert main(["evaluate", "--run", str(run_path), "--qrels", str(out), "--k", "5", "--n-boot", "50",
                 "--json", str(report)]) == 0
    text = capsys.readouterr().out
    assert "judged@k" in text and "1 stale labels not used" in text
    data = json.loads(report.read_text())
    cov = data["coverage"]["ndcg@5"]
    assert cov["human"] == pytest.approx((12 * 5 - 1) / (40 * 5))  # q0 is human-labeled: its stale label was human
    assert cov["none"] == pytest.approx(1 / (40 * 5))
    assert data["labels"]["stale"] == 1 and data["stale"][0]["doc_id"] == first["results"][0]["doc_id"]
    assert data["coverage_per_query"]["ndcg@5"]["q0"]["none"] == pytest.approx(1 / 5)


def test_plain_qrels_evaluate_is_unchanged(files, capsys, tmp_path):
    from relgrade.io import write_qrels

    q = write_qrels({"q0": {"q0d0": 1}}, tmp_path / "plain.txt")
    report = tmp_path / "r.json"
    assert main(["evaluate", "--run", str(files["run_a"]), "--qrels", str(q), "--json", str(report)]) == 0
    assert "judged@k" not in capsys.readouterr().out
    assert "coverage" not in json.loads(report.read_text())


def test_hybrid_cli_errors_are_one_line(files, capsys):
    assert main(["hybrid", "--out", str(files["dir"] / "x.jsonl")]) == 2
    assert main(["hybrid", "--human", str(files["human"]), "--out", str(files["dir"] / "x.txt")]) == 2
    bad = files["dir"] / "bad.csv"
    bad.write_text("query_id,doc_id,grade\nq,d,high\n")
    assert main(["hybrid", "--human", str(bad), "--out", str(files["dir"] / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("relgrade: error:") for line in err)
    assert "bad.csv:2" in err[2]
