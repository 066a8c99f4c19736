"""The audit's verdict travels like the calibration verdict (issue 37): estimate, compare and rank-systems record it
(``--audit AUDIT.json``, or the audit a ``--mapping CAL.json`` made with ``calibrate --audit`` carries), print it, and
gate prints it and warns without failing; calibrate's HTML report gets a section. End to end through the CLI: the
judge and the audit run against the fake server with a planted length bias."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sys
from pathlib import Path

import pytest

from relgrade.cli import main

MODEL = "openai/gpt-4o-mini"
WORDS = "amber birch cedar delta ember fjord grove heron inlet juniper kestrel lagoon meadow nectar orchid".split()


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def world(tmp_path_factory, fakes_module):
    """Runs a and b (b ranks each query's docs in reverse), the judge's details on both, human labels on 6 random
    whole queries, and the audit of the judge (which shows the planted length bias)."""
    tmp = tmp_path_factory.mktemp("travel")
    rng = random.Random(7)
    spec = {f"q{q}": (f"topic {q}", [(f"q{q}d{d}", " ".join(rng.choice(WORDS) for _ in range(12))) for d in range(5)])
            for q in range(12)}
    for name, flip in (("a", False), ("b", True)):
        with open(tmp / f"{name}.jsonl", "w") as fh:
            for qid, (query, docs) in spec.items():
                docs = list(reversed(docs)) if flip else docs
                fh.write(json.dumps({"query_id": qid, "query": query,
                                     "results": [{"doc_id": d, "text": t} for d, t in docs]}) + "\n")
    with open(tmp / "human.csv", "w") as fh:
        fh.write("query_id,doc_id,grade\n")
        for qid in sorted(rng.sample(sorted(spec), 6)):
            for d, _ in spec[qid][1]:
                fh.write(f"{qid},{d},{rng.randint(0, 3)}\n")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-7Qm3xZ9pL2vR8tK4nW6yB1cD5")
    with fakes_module.FakeOpenAIServer(grade_by="query", length_bonus=120) as server:
        common = ["--model", MODEL, "--api-base", server.base_url, "--store", str(tmp / "s.sqlite")]
        assert main(["judge", "--run", str(tmp / "a.jsonl"), "--run", str(tmp / "b.jsonl"), *common, "--out",
                     str(tmp / "judged.qrels")]) == 0
        assert main(["audit", "--run", str(tmp / "a.jsonl"), *common, "--n", "30", "--json",
                     str(tmp / "audit.json")]) == 1
    return tmp


@pytest.fixture(scope="module")
def fakes_module():
    """The fake server module for a module-scoped world (the ``fakes`` fixture is per test): the one conftest loaded."""
    name = "relgrade_fake_openai_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "fakes" / "openai_server.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def _estimate(capsys, w, run, *extra):
    return _cli(capsys, "estimate", "--run", w / f"{run}.jsonl", "--human", w / "human.csv", "--judge",
                w / "judged.qrels.details.jsonl", "--k", "5", *extra)


LINE = f"judge {MODEL} audited ("


def test_estimate_records_and_prints_the_audit_and_gate_warns(world, capsys):
    for run in ("a", "b"):
        code, out, err = _estimate(capsys, world, run, "--audit", world / "audit.json", "--json",
                                   world / f"est_{run}.json")
        assert code == 0, err
        assert f"{LINE}{world / 'audit.json'}, 30 pairs of " in out and "bias: length +1.00" in out
    block = json.loads((world / "est_b.json").read_text())["judge"]["audit"]
    assert block["biased"] and [b["probe"] for b in block["biases"]] == ["length", "duplication"]
    assert block["model"] == MODEL and block["n_pairs"] == 30 and block["source"] == str(world / "audit.json")
    code, out, err = _cli(capsys, "gate", "--baseline", world / "est_a.json", "--current", world / "est_b.json",
                          "--max-drop", "1", "--no-tenants", "--json", world / "gate.json")
    assert code == 0, out  # a bias warns: PPI++ estimates stay unbiased whatever the judge's bias
    assert out.count("bias: length +1.00") == 1 and "PPI++ estimates stay unbiased" in out
    gate = json.loads((world / "gate.json").read_text())
    assert gate["judge"]["reports"][str(world / "est_b.json")]["audit"]["biased"]


def test_a_report_without_an_audit_records_null(world, capsys):
    code, out, err = _estimate(capsys, world, "a", "--json", world / "plain.json")
    assert code == 0 and "audited" not in out
    assert json.loads((world / "plain.json").read_text())["judge"]["audit"] is None


def test_calibrate_puts_the_audit_in_its_report_and_the_mapping_carries_it(world, capsys):
    code, out, err = _cli(capsys, "calibrate", "--judge", world / "judged.qrels.details.jsonl", "--human",
                          world / "human.csv", "--n-boot", "50", "--audit", world / "audit.json", "--json",
                          world / "cal.json", "--report", world / "cal.html")
    assert code == 0, err
    assert LINE in out
    page = (world / "cal.html").read_text()
    assert "Judge audit: biases" in page and "bias: grades rise by 1.00 when off-topic text pads the passage" in page
    assert json.loads((world / "cal.json").read_text())["audit"]["biased"]
    code, out, err = _estimate(capsys, world, "a", "--mapping", world / "cal.json", "--json", world / "mapped.json")
    assert code == 0, err
    block = json.loads((world / "mapped.json").read_text())["judge"]["audit"]
    assert block["biased"] and block["source"] == str(world / "audit.json") and LINE in out


def test_compare_and_rank_systems_record_it_and_gate_paired_prints_it(world, capsys):
    code, out, err = _cli(capsys, "compare", "--run-a", world / "a.jsonl", "--run-b", world / "b.jsonl", "--human",
                          world / "human.csv", "--judge", world / "judged.qrels.details.jsonl", "--k", "5",
                          "--audit", world / "audit.json", "--json", world / "ab.json")
    assert code == 0, err
    assert json.loads((world / "ab.json").read_text())["judge"]["audit"]["biased"] and LINE in out
    code, out, err = _cli(capsys, "gate", "--paired", world / "ab.json", "--max-drop", "1", "--no-tenants")
    assert code == 0 and "bias: length +1.00" in out
    code, out, err = _cli(capsys, "rank-systems", "--run", world / "a.jsonl", "--run", world / "b.jsonl", "--human",
                          world / "human.csv", "--judge", world / "judged.qrels.details.jsonl", "--n-boot", "50",
                          "--audit", world / "audit.json", "--json", world / "rank.json")
    assert code == 0, err
    assert json.loads((world / "rank.json").read_text())["judge"]["audit"]["biased"] and LINE in out


def test_an_audit_of_another_judge_or_no_audit_is_refused(world, capsys):
    data = json.loads((world / "audit.json").read_text())
    (world / "other.json").write_text(json.dumps({**data, "model": "openai/gpt-4o"}))
    (world / "other_prompt.json").write_text(json.dumps({**data, "prompt": {"name": "x", "hash": "0123456789ab"}}))
    (world / "empty.json").write_text("{}")
    (world / "broken.json").write_text(json.dumps({**data, "n_pairs": "many"}))
    for name, fragment in (("other.json", "this audit is of the judge openai/gpt-4o, the judge labels are of "),
                           ("other_prompt.json", "this audit is of the prompt 0123456789ab"),
                           ("empty.json", "not an audit: give the JSON of 'relgrade audit --json'"),
                           ("broken.json", "malformed audit (ValueError")):
        code, out, err = _estimate(capsys, world, "a", "--audit", world / name)
        assert code == 2 and fragment in err and err.count("\n") == 1, err
    report = json.loads((world / "est_a.json").read_text())
    report["judge"]["audit"]["biases"] = "length"
    (world / "bad_report.json").write_text(json.dumps(report))
    code, out, err = _cli(capsys, "gate", "--baseline", world / "est_a.json", "--current", world / "bad_report.json",
                          "--max-drop", "1", "--no-tenants")
    assert code == 2 and "the judge's audit recorded in the report is malformed" in err and err.count("\n") == 1
