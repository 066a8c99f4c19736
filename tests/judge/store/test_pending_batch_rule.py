"""One rule for an online judge that meets pairs held by a provider batch still pending (issue 34): found at start-up
or during the run (a batch submitted by another process after the start-up check), on SQLite or PostgreSQL, the
judge pays nothing for those pairs, writes no outputs (they would lack those pairs) and exits 2 with one line that
says how many pairs a batch holds and how to collect them; what it paid meanwhile is kept in the store.
"""

from __future__ import annotations

import pytest

from relgrade.cli import main

MODEL = "openai/gpt-4o-mini"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    return request.getfixturevalue("pg_url")


def _keys(run) -> list[str]:
    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, load_prompt, pool
    from relgrade.judge.engine._engine import make_units

    return [u.keys[0] for u in make_units(pool([read_run(run)], 10), MODEL, load_prompt("graded"), JudgeConfig())]


def _open_batch(db, keys: list[str]) -> None:
    """A batch another process submitted for ``keys``, still pending at the provider."""
    from relgrade.judge import load_prompt

    ledger = db.batch_ledger()
    kept = ledger.open("elsewhere", provider="openai", model=MODEL, items=[(f"c{i}", k, "first")
                                                                          for i, k in enumerate(keys)],
                       detail={"prompt_hash": load_prompt("graded").hash})
    assert len(kept) == len(keys)
    ledger.submitted("elsewhere", "batch_elsewhere")


@pytest.mark.parametrize("when", ["start_up", "during_the_run"])
@pytest.mark.parametrize("held", ["all", "half"])
def test_pairs_held_by_a_pending_batch_are_one_rule(server, tmp_path, make_run, store, capsys, monkeypatch, fake_key,
                                                    when, held):
    from relgrade.judge import JudgmentStore
    from relgrade.judge.batch import _run

    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    run = make_run(tmp_path / "run.jsonl", {"q1": ("a question", [(f"d{i}", f"passage {i} [[grade={i % 4}]]")
                                                                  for i in range(6)])})
    keys = _keys(run)
    batched = keys if held == "all" else keys[::2]
    if when == "start_up":
        with JudgmentStore(store) as db:
            _open_batch(db, batched)
    else:  # submitted by another process right after this judge's start-up check
        real = _run.in_pending_batches

        def then_a_batch(pairs, **kw):
            n = real(pairs, **kw)
            _open_batch(kw["store"], batched)
            return n

        monkeypatch.setattr(_run, "in_pending_batches", then_a_batch)
    out = tmp_path / "o.qrels"
    code = main(["judge", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--store", store,
                 "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("relgrade: error:"), (code, err)
    assert f"{len(batched)} of these pairs are in provider batches still pending" in err[0] and "--batch" in err[0]
    assert not out.exists() and not (tmp_path / "o.qrels.details.jsonl").exists()
    paid = server.stats()["paid"]
    with JudgmentStore(store) as db:
        stored = db.get_many(keys)
    assert not set(batched) & set(stored)  # nothing held by the batch was paid online
    if when == "during_the_run":  # the rest was judged and kept
        assert set(stored) == set(keys) - set(batched) and paid == len(keys) - len(batched)
        if paid:
            assert f"what this run paid ({paid} calls) is kept in the store" in err[0]
    else:
        assert paid == 0 and not stored
