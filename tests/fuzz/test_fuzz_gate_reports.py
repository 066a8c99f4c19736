"""``gate`` on malformed reports (issue 24), by class of input: every number of both reports (each metric's value,
interval ends and counts, every per-query value, in an ``evaluate`` and an ``estimate`` report) replaced by each
kind of bad number, every interval reversed or moved off its value, and every compared setting given the wrong
type in both reports. Each is exit 2 with one ``relgrade: error:`` line naming the file, no traceback; the
unchanged reports pass."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main


SENTINEL = "@@BAD@@"
# raw JSON tokens put where a number was (text, so NaN and 5000 digits reach the reader as a file would hold them)
BAD_NUMBERS = {
    "nan": "NaN", "infinity": "Infinity", "minus_infinity": "-Infinity", "overflow": "1e400",
    "digits_5000": "9" * 5000, "float_5000": "0." + "3" * 5000, "negative": "-5", "boolean": "true",
    "string": '"0.5"', "list": "[0.5]",
}
OUT_OF_UNIT = {"seven": "7", "just_above": "1.5"}
NON_FINITE = {"nan", "infinity", "minus_infinity", "overflow", "digits_5000", "float_5000"}


def _checked(path) -> bool:
    """The fields the gate reads: values, interval ends, counts, width ratios, per-query values."""
    last = str(path[-1])
    return (path[0] == "per_query" or last in ("value", "a", "b") or path[-2] == "ci95"
            or last.startswith(("n_", "width_ratio", "effective_")))
SETTINGS = {
    "labels": ["5", "{}", '{"sha256": 5}', '"abc"', "[]"],
    "queries": ["5", '{"n": 3}', '{"sha256": ["x"]}', "true"],
    "rel_threshold": ["true", '"1"', "1.5", "NaN", "9" * 5000],
    "no_answer": ['"maybe"', "5", "null", "true"],
    "metrics": ["5", "[1, 2]", "[\"\"]"],
    "leak_k": ["0", "-1", '"10"', "true"],
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory, fuzz_world):
    root = tmp_path_factory.mktemp("gate-world")
    f = fuzz_world.write_world(root)
    out = {}
    for name, argv in {
        "evaluate": ["evaluate", "--run", str(f["run"]), "--qrels", str(f["qrels"]), "--n-boot", "20"],
        "estimate": ["estimate", "--run", str(f["run"]), "--human", str(f["human"]), "--judge", str(f["judge"]),
                     "--forbidden", str(f["qrels"])],
        "paired": ["compare", "--run-a", str(f["run"]), "--run-b", str(f["run_b"]), "--human", str(f["human"]),
                   "--judge", str(f["judge"]), "--forbidden", str(f["qrels"])],
        "ann-recall": ["ann-recall", "--run", str(f["run"]), "--exact", str(f["run_b"]), "--k", "3", "--qrels",
                       str(f["qrels"])],
    }.items():
        path = root / f"{name}.json"
        assert main([*argv, "--json", str(path)]) == 0
        out[name] = json.loads(path.read_text())
    return out


def _leaves(obj, path=()):
    """Paths of every number under ``obj`` (lists included)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path


def _set(data, path, value):
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _write(tmp_path, name, data, raw=None):
    text = json.dumps(data)
    if raw is not None:
        text = text.replace(json.dumps(SENTINEL), raw)
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    return path


def _gate(capsys, base, cur, *extra):
    """The gate of two reports, or of one paired report (``base`` None)."""
    pair = ["--paired", str(cur)] if base is None else ["--baseline", str(base), "--current", str(cur)]
    code = main(["gate", *pair, "--metric", "recall@5", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _sides(kind, good, bad):
    return [(None, bad)] if kind == "paired" else [(good, bad), (bad, good)]


def _refused(code, out, err, bad):
    lines = err.strip().splitlines()
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and lines[0].startswith("relgrade: error: ") and bad.name in lines[0], err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("kind", ["evaluate", "estimate", "paired"])
def test_the_unchanged_reports_pass(reports, tmp_path, capsys, kind):
    base = None if kind == "paired" else _write(tmp_path, "base", reports[kind])
    cur = _write(tmp_path, "cur", reports[kind])
    for extra in ((), ("--beyond-ci",)):
        code, out, err = _gate(capsys, base, cur, *extra)
        assert code in ((0, 1) if kind == "paired" else (0,)) and not err, err  # a paired B may be worse than A


@pytest.mark.parametrize("bad_name", sorted({**BAD_NUMBERS, **OUT_OF_UNIT}))
@pytest.mark.parametrize("kind", ["evaluate", "estimate", "paired"])
def test_every_number_replaced_by_a_bad_one_is_refused(reports, tmp_path, capsys, kind, bad_name):
    report = reports[kind]
    raw = {**BAD_NUMBERS, **OUT_OF_UNIT}[bad_name]
    leaves = [p for p in _leaves({"aggregate": report["aggregate"], "per_query": report.get("per_query") or {}})]
    if bad_name in OUT_OF_UNIT:  # out of [0, 1] matters for a metric's values, not for a count or a width ratio
        leaves = [p for p in leaves if p[0] == "per_query" or p[-1] in ("value", "a", "b") or p[-2] == "ci95"]
    elif bad_name not in NON_FINITE:  # a type or sign change: in the fields the gate reads and checks (a field
        leaves = [p for p in leaves if _checked(p)]  # a later relgrade adds is held finite, not to a type)
    assert len(leaves) > (1 if kind == "paired" else 40)
    good = _write(tmp_path, "good", report)
    for n, path in enumerate(leaves):
        bad = _write(tmp_path, f"bad{n}", _set(report, path, SENTINEL), raw)
        for base, cur in _sides(kind, good, bad):
            _refused(*_gate(capsys, base, cur), bad)


@pytest.mark.parametrize("kind", ["evaluate", "estimate", "paired"])
def test_every_interval_reversed_or_off_its_value_is_refused(reports, tmp_path, capsys, kind):
    report = reports[kind]
    good = _write(tmp_path, "good", report)
    paths = [p[:-1] for p in _leaves(report["aggregate"]) if len(p) >= 2 and p[-2] == "ci95" and p[-1] == 0]
    assert len(paths) >= (2 if kind == "paired" else 7)
    n = 0
    for path in paths:
        full = ("aggregate", *path)
        entry = report["aggregate"]
        for key in path[:-1]:
            entry = entry[key]
        lo, hi = entry["ci95"]
        value = entry.get("value")
        wrong = [[hi + 0.01, max(0.0, lo - 0.01)] if hi + 0.01 <= 1 else [1.0, 0.0]]
        if value is not None and value > 0.02:
            wrong.append([0.0, value / 2])
        if value is not None and value < 0.98:
            wrong.append([min(1.0, value + 0.01), 1.0])
        for ci in wrong:
            n += 1
            bad = _write(tmp_path, f"bad{n}", _set(report, full, ci))
            for base, cur in _sides(kind, good, bad):
                _refused(*_gate(capsys, base, cur), bad)


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("kind", ["evaluate", "estimate"])
def test_settings_of_the_wrong_type_in_both_reports_are_refused(reports, tmp_path, capsys, kind, setting):
    report = reports[kind]
    for n, raw in enumerate(SETTINGS[setting]):
        data = _set(report, ("settings", setting), SENTINEL)
        base = _write(tmp_path, f"base{n}", data, raw)
        cur = _write(tmp_path, f"cur{n}", data, raw)
        code, out, err = _gate(capsys, base, cur)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (raw, code, err)
        assert base.name in err or cur.name in err, err


def test_a_library_report_dict_with_a_huge_int_is_refused(reports):
    import relgrade

    data = _set(reports["evaluate"], ("aggregate", "recall@10", "n_queries"), 10 ** 5000)
    with pytest.raises(relgrade.InputError, match="n_queries"):
        relgrade.gate(reports["evaluate"], data)


# ------------------------------------------------------------------------------ report consistency (issue 34)
# A report whose parts contradict each other is exit 2, never a pass: relabelled as another kind (with or without
# its leaks), a 'paired' that is not true, a paired difference that is not B - A, an aggregate value that is not
# the mean of its per-query values, metrics listed but not in the aggregate, counts that disagree.
KIND_OF = {"evaluate": "evaluate", "estimate": "estimate", "paired": "compare", "ann-recall": "ann-recall"}
GATES = {"two": lambda good, bad: ["--baseline", str(good), "--current", str(bad)],
         "min": lambda good, bad: ["--current", str(bad), "--min", "0.1"],
         "paired": lambda good, bad: ["--paired", str(bad)]}


def _one_line_refusal(capsys, argv, bad, *words):
    code = main(["gate", *argv, "--no-tenants", "--accept-judge"] if argv[0] != "--current" else ["gate", *argv])
    out, err = capsys.readouterr()
    _refused(code, out, err, bad)
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("drop_leaks", [False, True], ids=["leaks-kept", "leaks-dropped"])
@pytest.mark.parametrize("source,target", [(s, t) for s in sorted(KIND_OF) for t in ("evaluate", "estimate", "compare",
                                                                                  "ann-recall", "regression")
                                           if KIND_OF[s] != t])
def test_a_report_relabelled_as_another_kind_is_refused_by_every_gate(reports, tmp_path, capsys, source, target,
                                                                       drop_leaks):
    data = json.loads(json.dumps(reports[source]))
    data["settings"]["kind"] = target
    data["settings"].pop("paired", None)
    if target == "compare":
        data["settings"]["paired"] = True
    if drop_leaks:
        data.pop("leaks", None)
    bad = _write(tmp_path, "relabelled", data)
    good = _write(tmp_path, "good", reports["evaluate"])
    for gate in GATES.values():
        _one_line_refusal(capsys, gate(good, bad), bad)


@pytest.mark.parametrize("value", ['"no"', '"yes"', '"true"', "1", "0", "false", "null", "[true]"])
def test_a_paired_flag_that_is_not_true_is_refused(reports, tmp_path, capsys, value):
    bad = _write(tmp_path, "paired", _set(reports["paired"], ("settings", "paired"), SENTINEL), value)
    _one_line_refusal(capsys, ["--paired", str(bad)], bad, "paired")


def test_a_paired_difference_that_is_not_b_minus_a_is_refused_and_a_clipped_end_is_not(reports, tmp_path, capsys):
    report = reports["paired"]
    assert len(report["aggregate"]) >= 5
    for n, (metric, entry) in enumerate(report["aggregate"].items()):
        d = entry["ppi"]["value"]
        for shift in (0.15, -0.15):
            a = 0.5 - (d + shift) / 2  # b - a = d + shift, both inside (0, 1)
            data = _set(report, ("aggregate", metric, "ppi", "a"), a)
            data = _set(data, ("aggregate", metric, "ppi", "b"), a + d + shift)
            bad = _write(tmp_path, f"diff{n}{shift > 0}", data)
            _one_line_refusal(capsys, ["--paired", str(bad)], bad, "B - A", metric)
    # both at the top end with a difference (allowed only where the note says a value lay beyond it)
    data = _set(report, ("aggregate", "ndcg@5", "ppi", "a"), 1.0)
    bad = _write(tmp_path, "ends", _set(data, ("aggregate", "ndcg@5", "ppi", "b"), 1.0))
    _one_line_refusal(capsys, ["--paired", str(bad)], bad, "B - A", "ndcg@5")
    # A's PPI++ value 1.02 reported as 1 (the note says so, as compare writes it): b - a is then not d, and passes
    entry = report["aggregate"]["mrr"]
    d = entry["ppi"]["value"]
    note = ("the PPI++ value of A, 1.02, lies outside [0, 1] and is reported as the nearest end (the difference is "
            "not clipped)")
    data = _set(report, ("aggregate", "mrr", "ppi", "a"), 1.0)
    data = _set(data, ("aggregate", "mrr", "ppi", "b"), 1.02 + d)
    clipped = _write(tmp_path, "clipped", _set(data, ("aggregate", "mrr", "note"), note))
    assert main(["gate", "--paired", str(clipped), "--metric", "mrr", "--accept-judge"]) in (0, 1)
    assert not capsys.readouterr().err
    without_note = _write(tmp_path, "no-note", data)
    _one_line_refusal(capsys, ["--paired", str(without_note), "--metric", "mrr"], without_note, "B - A")


@pytest.mark.parametrize("kind", ["evaluate", "ann-recall"])
def test_an_aggregate_value_that_is_not_the_mean_of_its_per_query_values_is_refused(reports, tmp_path, capsys, kind):
    report = reports[kind]
    gate = GATES["min"] if kind == "ann-recall" else GATES["two"]
    good = _write(tmp_path, "good", report)
    moved = 0
    for metric, entry in report["aggregate"].items():
        lo, hi = entry["ci95"]
        new = (lo + hi) / 2 if abs((lo + hi) / 2 - entry["value"]) > 1e-3 else (lo + entry["value"]) / 2
        if abs(new - entry["value"]) < 1e-6:
            continue
        moved += 1
        bad = _write(tmp_path, f"mean{moved}", _set(report, ("aggregate", metric, "value"), new))
        _one_line_refusal(capsys, gate(good, bad), bad, "mean of its", metric)
        bad = _write(tmp_path, f"count{moved}", _set(report, ("aggregate", metric, "n_queries"),
                                                      entry["n_queries"] + 1))
        _one_line_refusal(capsys, gate(good, bad), bad, "n_queries")
    assert moved >= (1 if kind == "ann-recall" else 5)


@pytest.mark.parametrize("kind", sorted(KIND_OF))
def test_metrics_listed_but_not_in_the_aggregate_are_refused(reports, tmp_path, capsys, kind):
    report = reports[kind]
    data = json.loads(json.dumps(report))
    data["settings"]["metrics"] = [*data["settings"]["metrics"], "recall@7"]
    bad = _write(tmp_path, "listed", data)
    gate = {"paired": GATES["paired"], "ann-recall": GATES["min"]}.get(kind, GATES["two"])
    good = _write(tmp_path, "good", report)
    _one_line_refusal(capsys, gate(good, bad), bad, "settings.metrics", "recall@7")


@pytest.mark.parametrize("part", ["human_only", "judge_only"])
def test_estimate_counts_that_disagree_with_the_report_are_refused(reports, tmp_path, capsys, part):
    report = reports["estimate"]
    good = _write(tmp_path, "good", report)
    for n, metric in enumerate(report["aggregate"]):
        count = report["aggregate"][metric][part]["n_queries"]
        bad = _write(tmp_path, f"n{n}", _set(report, ("aggregate", metric, part, "n_queries"), count + 1))
        _one_line_refusal(capsys, GATES["two"](good, bad), bad, f"{part}.n_queries")


@pytest.mark.parametrize("kind,gate", [("paired", "two"), ("paired", "min"), ("ann-recall", "two"),
                                       ("evaluate", "paired"), ("estimate", "paired")])
def test_a_report_given_to_a_gate_that_does_not_read_its_kind_is_refused(reports, tmp_path, capsys, kind, gate):
    """A paired report's values are differences: read by the two-report gate they would be taken as metric values."""
    bad = _write(tmp_path, "other", reports[kind])
    _one_line_refusal(capsys, GATES[gate](bad, bad), bad, "is gated with")
