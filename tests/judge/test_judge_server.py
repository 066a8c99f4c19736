"""The judge against a real HTTP server on 127.0.0.1 speaking the OpenAI API, with injected faults."""

from __future__ import annotations

import sqlite3

import pytest

from relgrade import InputError
from relgrade.io import read_run
from relgrade.judge import JudgmentStore, Pair, judge_pairs, load_prompt, pool

MODEL = "openai/gpt-4o-mini"  # in litellm's price table, so costs are real numbers


def _pairs(spec):
    """[(doc_id, grade, faults)] -> Pairs for one query, with markers the fake server reads."""
    out = []
    for doc, grade, faults in spec:
        text = f"passage {doc} [[grade={grade}]]" + (f" [[faults={faults}]]" if faults else "")
        out.append(Pair("q1", doc, "how do tides work", text))
    return out


def _key_of(fakes, pair, prompt="graded"):
    messages = load_prompt(prompt).render(pair.query, pair.text)
    return fakes.pair_key(messages)


FAULTS = [
    ("ok", 2, ""),
    ("r429", 3, "429:0.3"),
    ("r500", 1, "500;503"),
    ("r502", 0, "502"),
    ("drop", 2, "drop;drop"),
    ("hang", 3, "hang"),
    ("r408", 1, "408;409"),
    ("garbage", 2, "garbage"),
    ("offscale", 1, "offscale"),
]


def test_every_pair_ends_judged_correctly_and_is_paid_once_beyond_retries(server, fakes, tmp_path, config, fake_key):
    pairs = _pairs(FAULTS)
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                         api_key=fake_key, config=config(timeout=0.7), handle_sigint=False)
    got = {j.doc_id: j for j in result.judgments}
    assert {d: got[d].grade for d in got} == {d: g for d, g, _ in FAULTS}
    assert all(j.status == "judged" for j in got.values())
    stats = server.stats()["by_pair"]
    for pair, (doc, _, faults) in zip(pairs, FAULTS):
        row = stats[_key_of(fakes, pair)]
        n_faults = len([f for f in faults.split(";") if f])
        # Transport faults cost a retry each, never a payment; an unreadable answer costs
        # exactly one repair; nothing else is ever paid twice.
        repaired = faults in {"garbage", "offscale"}
        assert row["requests"] == n_faults + 1, doc
        assert row["paid"] == (2 if repaired else 1), doc
    assert result.n_calls == server.stats()["paid"]
    # The 429 told us to wait 0.3 s and we did (instead of the exponential backoff).
    assert ("429", pytest.approx(0.3)) in [(c, s) for c, s in result.retries]
    assert sorted(c for c, _ in result.retries).count("429") == 1
    assert result.cost_usd > 0 and result.cost_unknown == 0
    # Logprobs were returned by the server: distributions sum to one with the mode on the grade.
    for j in got.values():
        assert sum(j.distribution.values()) == pytest.approx(1.0)
        assert max(j.distribution, key=j.distribution.get) == str(j.grade)


def test_rerun_pays_nothing_whatever_the_retry_settings(server, tmp_path, config, fake_key):
    pairs = _pairs([(f"d{i}", i % 4, "") for i in range(12)])
    store = tmp_path / "s.sqlite"
    first = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                        config=config(), handle_sigint=False)
    paid = server.stats()["paid"]
    assert paid == 12 and first.n_calls == 12
    again = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                        config=config(concurrency=2, timeout=9.0, max_attempts=2), handle_sigint=False)
    assert server.stats()["paid"] == paid and again.n_calls == 0
    assert all(j.cached for j in again.judgments)
    assert again.qrels() == first.qrels()
    # What changes the answer is in the key: another temperature or prompt is a new judgment.
    judge_pairs(pairs[:2], model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                config=config(temperature=0.5), handle_sigint=False)
    judge_pairs(pairs[:2], model=MODEL, prompt="binary", store=store, api_base=server.base_url, api_key=fake_key,
                config=config(), handle_sigint=False)
    assert server.stats()["paid"] == paid + 4


def test_store_is_wal_and_each_judgment_is_committed_on_arrival(server, tmp_path, config, fake_key):
    store = tmp_path / "s.sqlite"
    seen_during_run = []

    def on_progress(stats):
        # Read the store from a second connection while the run is still going.
        with sqlite3.connect(store) as other:
            seen_during_run.append(other.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    pairs = _pairs([(f"d{i}", 1, "") for i in range(6)])
    judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                config=config(concurrency=1), on_progress=on_progress, handle_sigint=False)
    assert seen_during_run == [1, 2, 3, 4, 5, 6]
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = db.execute("SELECT status, grade, model FROM judgments").fetchall()
    assert rows == [("judged", 1, MODEL)] * 6


def test_identical_query_and_chunk_text_is_judged_once(server, tmp_path, config, fake_key, make_run):
    run_a = make_run(tmp_path / "a.jsonl", {
        "q1": ("what causes tides", [("d1", "the moon [[grade=3]]"), ("d2", "waves [[grade=1]]"), ("d3", "x [[grade=0]]")]),
        "q2": ("what causes tides", [("d9", "the moon [[grade=3]]")]),  # same query text, same chunk text
    })
    run_b = make_run(tmp_path / "b.jsonl", {
        "q1": ("what causes tides", [("d4", "the moon [[grade=3]]"), ("d1", "the moon [[grade=3]]"), ("d5", "sun [[grade=2]]")]),
    })
    pairs = pool([read_run(run_a), read_run(run_b)], depth=2)
    expected = {("q1", "d1"), ("q1", "d2"), ("q1", "d4"), ("q2", "d9")}
    assert {(p.query_id, p.doc_id) for p in pairs} == expected
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                         api_key=fake_key, config=config(), handle_sigint=False)
    assert server.stats()["paid"] == 2  # "the moon" once for q1/d1, q1/d4, q2/d9; "waves" once
    assert result.qrels() == {"q1": {"d1": 3, "d2": 1, "d4": 3}, "q2": {"d9": 3}}
    assert sum(not j.cached for j in result.judgments) == 2


def test_unreadable_twice_is_unjudged_with_raw_answer_never_zero(server, tmp_path, config, fake_key):
    pairs = _pairs([("bad", 2, "garbage;garbage"), ("off", 2, "offscale;offscale"), ("ok", 0, "")])
    store = tmp_path / "s.sqlite"
    result = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                         config=config(), handle_sigint=False)
    by = {j.doc_id: j for j in result.judgments}
    assert by["ok"].grade == 0
    for doc, fragment in (("bad", "no JSON object"), ("off", "off the scale 0-3")):
        j = by[doc]
        assert j.grade is None and j.status == "unjudged" and j.distribution is None
        assert fragment in j.error and "after one repair" in j.error
        assert j.raw_answer and "---- repair ----" in j.raw_answer
    assert result.qrels() == {"q1": {"ok": 0}}
    assert result.counts()["unjudged"] == 2
    # Stored: a re-run does not pay for them again; --retry-unjudged does.
    paid = server.stats()["paid"]
    judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key, config=config(),
                handle_sigint=False)
    assert server.stats()["paid"] == paid
    judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                config=config(retry_unjudged=True), handle_sigint=False)
    assert server.stats()["paid"] == paid + 2  # the fault scripts are spent: one good answer each


def test_pair_with_no_answer_after_retries_is_failed_and_not_stored(server, tmp_path, config, fake_key):
    pairs = _pairs([("down", 1, "503;503;503"), ("ok", 2, "")])
    store = tmp_path / "s.sqlite"
    result = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                         config=config(max_attempts=3), handle_sigint=False)
    by = {j.doc_id: j for j in result.judgments}
    assert by["down"].status == "failed" and by["down"].grade is None
    assert "no answer after 3 attempts" in by["down"].error
    assert by["ok"].grade == 2
    with JudgmentStore(store) as db:
        assert len(db) == 1
    again = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                        config=config(max_attempts=3), handle_sigint=False)
    assert {j.doc_id: j.grade for j in again.judgments} == {"down": 1, "ok": 2}


@pytest.mark.parametrize("status, fragment", [
    ("401", "authentication failed for openai: set OPENAI_API_KEY"),
    ("403", "permission denied by openai"),
    ("400", "openai rejected the request"),
])
def test_fail_fast_on_client_errors(server, fakes, tmp_path, config, fake_key, status, fragment):
    pairs = _pairs([("a", 1, status)])
    with pytest.raises(InputError, match=fragment):
        judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url, api_key=fake_key,
                    config=config(), handle_sigint=False)
    assert server.stats()["requests"] == 1  # no retry


def test_max_cost_stops_before_the_budget_and_keeps_everything(server, tmp_path, config, fake_key):
    import litellm

    pairs = _pairs([(f"d{i}", i % 4, "") for i in range(20)])
    store = tmp_path / "s.sqlite"
    full = judge_pairs(pairs[:1], model=MODEL, store=tmp_path / "probe.sqlite", api_base=server.base_url,
                       api_key=fake_key, config=config(), handle_sigint=False)
    one = full.cost_usd
    cin, cout = litellm.cost_per_token(model=MODEL, prompt_tokens=1000, completion_tokens=1000)
    budget = one * 6  # room for a few judgments, given the worst-case reservation of 256 output tokens
    server.reset()
    result = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                         config=config(concurrency=3, max_cost=budget), handle_sigint=False)
    assert result.stopped == "max_cost"
    assert 0 < len(result.judgments) < 20 and len(result.remaining) == 20 - len(result.judgments)
    assert result.cost_usd <= budget
    assert server.stats()["paid"] == len(result.judgments) == result.n_calls
    assert cin > 0 and cout > 0
    rest = judge_pairs(pairs, model=MODEL, store=store, api_base=server.base_url, api_key=fake_key,
                       config=config(), handle_sigint=False)
    assert rest.stopped is None and len(rest.judgments) == 20
    assert server.stats()["paid"] == 20  # nothing paid twice


def test_max_cost_needs_a_known_price(server, tmp_path, config, fake_key):
    with pytest.raises(InputError, match="no price for openai/no-such-model"):
        judge_pairs(_pairs([("a", 1, "")]), model="openai/no-such-model", store=tmp_path / "s.sqlite",
                    api_base=server.base_url, api_key=fake_key, config=config(max_cost=1.0), handle_sigint=False)
    assert server.stats()["requests"] == 0


def test_samples_record_majority_mean_and_spread(server, tmp_path, config, fake_key):
    pairs = _pairs([("a", 2, ""), ("b", 1, "")])
    result = judge_pairs(pairs, model=MODEL, store=tmp_path / "s.sqlite", api_base=server.base_url,
                         api_key=fake_key, config=config(samples=3, temperature=0.7), handle_sigint=False)
    by = {j.doc_id: j for j in result.judgments}
    assert server.stats()["paid"] == 6
    for doc, grade in (("a", 2), ("b", 1)):
        assert by[doc].samples == (grade,) * 3 and by[doc].grade == grade
        assert by[doc].mean_grade == grade and by[doc].spread == 0.0


def test_server_without_logprobs_gives_no_distribution(server, tmp_path, config, fake_key):
    result = judge_pairs(_pairs([("a", 3, "")]), model=MODEL, store=tmp_path / "s.sqlite",
                         api_base=server.base_url, api_key=fake_key, config=config(logprobs=False),
                         handle_sigint=False)
    (j,) = result.judgments
    assert j.grade == 3 and j.distribution is None and j.expected_grade is None
