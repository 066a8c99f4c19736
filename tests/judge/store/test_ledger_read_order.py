"""A pair that leaves an online claim or an open batch while a batch is being opened is never put in that batch.

On PostgreSQL (read committed) each query of the batch's check sees what was committed before it, and an online
judge's answer (the judgment and its claim's removal, one commit) or a batch's collection (answers, then the close)
does not wait for the ledger's lock. So the check reads what holds a key (open batches, live claims) before the
answers: a key that moves between the two reads is seen in its new state. The move is made to happen at the worst
moment, right after the first of the check's reads, by a second connection (a real second process would commit
the same rows).
"""

from __future__ import annotations

import pytest

from relgrade.judge.store import _ledger

KEYS = ["k1", "k2"]


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request, tmp_path):
    return str(tmp_path / "s.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _after_first_read(monkeypatch, move):
    """Run ``move`` once, right after the first query the batch's check makes (whichever function that is)."""
    done = []
    for name in ("answered", "in_open_batches", "held_online"):
        real = getattr(_ledger, name)

        def wrapped(*args, _real=real, **kwargs):
            out = _real(*args, **kwargs)
            if not done:
                done.append(True)
                move()
            return out

        monkeypatch.setattr(_ledger, name, wrapped)


def test_an_online_answer_committed_during_the_check_keeps_its_pair_out_of_the_batch(spec, monkeypatch):
    from relgrade.judge import JudgmentStore

    with JudgmentStore(spec, lease_s=3600) as online, JudgmentStore(spec) as batcher:
        owner = "elsewhere:1:online"  # another host's live claim: held by lease, never taken over as gone
        assert online.claim(KEYS, owner)[0] == set(KEYS)

        def answer():  # the online judge's answer to k1 lands: judgment written and claim removed, one commit
            assert online.put("k1", model="m", prompt_hash="p", status="judged", grade=2, record={"reason": "r"},
                              owner=owner)

        ledger = batcher.batch_ledger()
        _after_first_read(monkeypatch, answer if spec.startswith("postgresql") else lambda: None)
        kept = ledger.open("b1", provider="openai", model="m", items=[("c1", "k1", "first"), ("c2", "k2", "first")])
        assert kept == []  # k1 answered, k2 still claimed online: nothing is left to pay for


def test_a_batch_collected_during_a_claim_keeps_its_pairs_from_the_online_judge(spec, monkeypatch):
    from relgrade.judge import JudgmentStore
    from relgrade.judge.store import _postgres

    with JudgmentStore(spec) as first, JudgmentStore(spec) as online:
        ledger = first.batch_ledger()
        assert ledger.open("b1", provider="openai", model="m", items=[("c1", "k1", "first")])
        ledger.submitted("b1", "batch_1")

        def collect():  # the batch's collection: its answer stored, then the batch closed
            assert first.put("k1", model="m", prompt_hash="p", status="judged", grade=1, record={"reason": "r"})
            ledger.close("b1", "completed")

        if spec.startswith("postgresql"):
            real = _postgres.in_open_batches

            def wrapped(*args, **kwargs):  # the collection lands just before the claim reads the open batches:
                collect()  # after the answers were read, had the claim read them first
                return real(*args, **kwargs)

            monkeypatch.setattr(_postgres, "in_open_batches", wrapped)
        free, busy = online.claim(["k1"], "here:1:online")
        assert free == set() and not busy
