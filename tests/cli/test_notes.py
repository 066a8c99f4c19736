"""A note is printed only when it changes a number (issue 36, item 3): the walkthrough's every estimate, compare and
rank-systems said that --mapping's table is used by --prediction hard only although the calibration kept the
identity, and calibrate said its statistics were weighted by one weight shared by every pair."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgrade.calibration import agreement
from relgrade.cli import main

MAPPING_NOTE = "--mapping's adopted grade table is not applied"


@pytest.fixture
def world(tmp_path, fuzz_world):
    return fuzz_world.write_world(tmp_path)


def _mapping(tmp_path, table: dict, adopted: bool = True):
    path = tmp_path / f"map-{adopted}-{''.join(map(str, table.values()))}.json"
    path.write_text(json.dumps({"adopted": adopted, "table": {str(k): v for k, v in table.items()}}))
    return str(path)


@pytest.mark.parametrize("command", ["estimate", "compare", "rank-systems"])
def test_the_soft_prediction_notes_a_mapping_only_when_it_would_change_grades(world, tmp_path, capsys, command):
    files = {k: str(v) for k, v in world.items()}
    argv = {"estimate": ["estimate", "--run", files["run"]],
            "compare": ["compare", "--run-a", files["run"], "--run-b", files["run_b"]],
            "rank-systems": ["rank-systems", "--run", files["run"], "--run", files["run_b"], "--n-boot", "50"]}[command]
    argv += ["--human", files["human"], "--judge", files["judge"]]
    said = {}
    for name, mapping in (("identity", _mapping(tmp_path, {0: 0, 1: 1, 2: 2, 3: 3})),
                          ("not adopted", _mapping(tmp_path, {0: 0, 1: 0, 2: 2, 3: 3}, adopted=False)),
                          ("changes", _mapping(tmp_path, {0: 0, 1: 0, 2: 2, 3: 3}))):
        assert main([*argv, "--mapping", mapping]) == 0
        said[name] = capsys.readouterr().out
    assert MAPPING_NOTE not in said["identity"] and MAPPING_NOTE not in said["not adopted"]
    assert f"note: {MAPPING_NOTE}" in said["changes"]
    assert main([*argv, "--mapping", _mapping(tmp_path, {0: 0, 1: 0, 2: 2, 3: 3}), "--prediction", "hard"]) in (0, 2)
    assert MAPPING_NOTE not in capsys.readouterr().out  # hard applies the table: nothing left aside to note


def test_one_weight_for_every_pair_is_no_weighting_and_no_note():
    rng = np.random.default_rng(5)
    human = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(6)} for q in range(12)}
    judge = {q: {d: g if rng.random() < 0.6 else int(rng.integers(0, 4)) for d, g in docs.items()}
             for q, docs in human.items()}
    keys = [(q, d) for q, docs in human.items() for d in docs]
    plain = agreement(judge, human, n_boot=200, seed=1)
    same = agreement(judge, human, n_boot=200, seed=1, weights={k: 3.3333 for k in keys})
    assert not same.weighted and not any("weighted by" in n for n in same.notes)
    assert same.kappa == plain.kappa and same.accuracy == plain.accuracy
    varied = agreement(judge, human, n_boot=200, seed=1, weights={k: 1.0 + (i % 3) for i, k in enumerate(keys)})
    assert varied.weighted and any(n.startswith("weighted by the pairs' inclusion weights") for n in varied.notes)
    assert varied.kappa.value != plain.kappa.value  # unequal weights change the numbers: the note says so
