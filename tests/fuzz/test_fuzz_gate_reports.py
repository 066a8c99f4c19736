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
