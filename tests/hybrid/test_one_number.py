"""issue 36, one number per thing: a system's PPI++ estimate is the number ``estimate`` gives wherever it is shown;
``rank-systems`` and ``compare`` print it beside their shared-lam values and say in one line why theirs differ."""

from __future__ import annotations

import json

import pytest

from relgrade.cli import main
from relgrade.hybrid import estimate, rank_systems
from relgrade.hybrid._ab import OWN_NOTE as PAIR_NOTE, compare_runs
from relgrade.hybrid._rank import OWN_NOTE as RANK_NOTE
from relgrade.io import Run


@pytest.mark.parametrize("rule", ["exclude", "zero"])
def test_each_systems_own_estimate_is_estimates_number_in_every_report(world, rule):
    _, human, judge, _, runs_raw = world
    a, b = (Run.from_dict(runs_raw[x], name=x) for x in "ab")
    own = {r.name: estimate(r, human, judge, ["ndcg@5"], no_answer=rule).estimates["ndcg@5"].ppi for r in (a, b)}
    ranked = rank_systems([a, b], human, judge, "ndcg@5", no_answer=rule, n_boot=20, n_perm=0)
    assert ranked.own == pytest.approx(own, abs=1e-12)
    paired = compare_runs(a, b, human, judge, ["ndcg@5"], no_answer=rule).differences["ndcg@5"]
    assert paired.own == pytest.approx((own["a"], own["b"]), abs=1e-12)
    # the shared-lam values differ (one lam and one pool for both), and the reports say why, beside the own numbers
    assert RANK_NOTE in ranked.table() and f"a {own['a']:.4f}" in ranked.table()
    assert PAIR_NOTE in compare_runs(a, b, human, judge, ["ndcg@5"], no_answer=rule).table()
    data = ranked.to_dict()
    assert data["own_estimates"] == pytest.approx(own) and data["why_ppi_differs_from_own"] == RANK_NOTE


def test_the_commands_print_the_estimate_commands_number(files, tmp_path, capsys):
    args = ["--human", str(files["human"]), "--judge", str(files["judge"]), "--metric", "ndcg@10"]
    assert main(["estimate", "--run", str(files["run_a"]), *args, "--json", str(tmp_path / "a.json")]) == 0
    value = json.loads((tmp_path / "a.json").read_text())["aggregate"]["ndcg@10"]["ppi"]["value"]
    capsys.readouterr()
    assert main(["rank-systems", "--run", str(files["run_a"]), "--run", str(files["run_b"]), *args,
                 "--n-boot", "20"]) == 0
    assert f"run_a {value:.4f}" in capsys.readouterr().out
    assert main(["compare", "--run-a", str(files["run_a"]), "--run-b", str(files["run_b"]), *args,
                 "--json", str(tmp_path / "ab.json")]) == 0
    assert f"A {value:.4f}" in capsys.readouterr().out
    assert json.loads((tmp_path / "ab.json").read_text())["aggregate"]["ndcg@10"]["ppi"]["own"]["a"] == \
        pytest.approx(value, abs=1e-12)
