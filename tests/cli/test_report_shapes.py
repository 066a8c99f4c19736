"""Tracebacks of issue 34 item 6, each fixed at its cause and now one line, exit 2: a paired report whose
``settings.runs`` is not two run names, a report whose ``judge`` block is of the wrong shape (a list, a string, a
verdict with a text kappa), and ``sample --target-halfwidth`` so small that the pairs it needs overflow a float."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main


@pytest.fixture(scope="module")
def world(tmp_path_factory, fuzz_world):
    root = tmp_path_factory.mktemp("shapes")
    f = fuzz_world.write_world(root)
    for name, argv in {
        "paired": ["compare", "--run-a", str(f["run"]), "--run-b", str(f["run_b"]), "--human", str(f["human"]),
                   "--judge", str(f["judge"]), "--forbidden", str(f["qrels"])],
        "estimate": ["estimate", "--run", str(f["run"]), "--human", str(f["human"]), "--judge", str(f["judge"]),
                     "--forbidden", str(f["qrels"])],
    }.items():
        assert main([*argv, "--json", str(root / f"{name}.json")]) == 0
    return root, f


def _edited(world, kind, edit, name="edited"):
    root, _ = world
    data = json.loads((root / f"{kind}.json").read_text())
    edit(data)
    path = root / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def _one_line(capsys, argv, *words):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith("relgrade: error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in out + err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("runs", ["AB", ["A"], 5, ["A", "B", "C"], [1, 2], {"a": "A"}])
def test_paired_runs_of_the_wrong_shape_are_one_line(world, capsys, runs):
    bad = _edited(world, "paired", lambda d: d["settings"].update(runs=runs))
    _one_line(capsys, ["gate", "--paired", str(bad), "--accept-judge"], "edited.json", "settings.runs")


@pytest.mark.parametrize("kind", ["paired", "estimate"])
@pytest.mark.parametrize("block", [
    {"labels": 30, "calibration": [1, 2]},
    {"labels": 30, "calibration": "slight"},
    {"labels": 30, "calibration": {"band": "slight", "kappa": "0.05", "text": "do not use"}},
    {"labels": 30, "calibration": {"band": ["slight"], "text": "x"}},
    {"labels": 30, "calibration": {"band": "slight", "ci95": "wide", "text": "x"}},
    {"labels": "thirty", "calibration": None},
    [1, 2],
    "judge",
], ids=["calibration-list", "calibration-string", "kappa-string", "band-list", "ci-string", "labels-string",
        "block-list", "block-string"])
def test_a_judge_block_of_the_wrong_shape_is_one_line(world, capsys, kind, block):
    bad = _edited(world, kind, lambda d: d.update(judge=block))
    argv = (["gate", "--paired", str(bad)] if kind == "paired"
            else ["gate", "--baseline", str(world[0] / "estimate.json"), "--current", str(bad)])
    _one_line(capsys, [*argv, "--accept-judge"], "edited.json", "'judge")


@pytest.mark.parametrize("halfwidth", ["1e-300", "1e-6"])
def test_a_target_halfwidth_beyond_any_labeling_is_one_line(world, capsys, halfwidth):
    root, f = world
    _one_line(capsys, ["sample", "--judge", str(f["judge"]), "--target-halfwidth", halfwidth,
                       "--out", str(root / "items.csv")], f"--target-halfwidth {float(halfwidth):g}", "0.05")
    assert not (root / "items.csv").exists()


def test_a_target_halfwidth_within_reach_still_plans(world, capsys):
    root, f = world
    assert main(["sample", "--judge", str(f["judge"]), "--target-halfwidth", "0.05", "--out",
                 str(root / "items.csv")]) == 0
    assert "target half-width ±0.05: about" in capsys.readouterr().out
