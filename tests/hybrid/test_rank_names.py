"""rank_systems refuses a list of runs where two share a name (a dict would silently keep only one)."""

from __future__ import annotations

import pytest

from relgrade import InputError
from relgrade.hybrid import rank_systems
from relgrade.io import Run

HUMAN = {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"d3": 0, "d1": 3}}
JUDGE = {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"d1": 3}, "q4": {"d4": 1}}


def _run(name: str, order: list[str]) -> Run:
    return Run.from_dict({q: {d: float(10 - i) for i, d in enumerate(order)} for q in ("q1", "q2", "q3", "q4")},
                         name=name)


def test_two_runs_with_one_name_are_refused():
    runs = [_run("bm25", ["d1", "d2", "d3", "d4"]), _run("bm25", ["d4", "d3", "d2", "d1"]),
            _run("dense", ["d2", "d1", "d4", "d3"])]
    with pytest.raises(InputError, match=r"two runs share a name \(\['bm25'\]\)"):
        rank_systems(runs, HUMAN, JUDGE, "ndcg@5", n_boot=20, n_perm=50)


def test_distinct_names_rank_every_run():
    runs = [_run("bm25", ["d1", "d2", "d3", "d4"]), _run("dense", ["d4", "d3", "d2", "d1"])]
    report = rank_systems(runs, HUMAN, JUDGE, "ndcg@5", n_boot=20, n_perm=50)
    data = report.to_dict()
    assert data["systems"] == ["bm25", "dense"]
    # human labels: bm25 puts the relevant doc first on q1 and q3, dense last; bm25 ranks first
    assert data["rankings"]["human"] == ["bm25", "dense"]
