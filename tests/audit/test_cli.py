"""``relgrade audit`` end to end against the fake OpenAI-compatible server (a real HTTP server on 127.0.0.1,
tests/fakes/openai_server.py): a planted length bias, fair judges over seeds, the store (reuse, the identity re-ask
past it), the dry run, the budget, circularity and the user errors."""

from __future__ import annotations

import json
import os

import pytest

from relgrade.cli import main

MODEL = "openai/gpt-4o-mini"
KEY = "sk-fake-7Qm3xZ9pL2vR8tK4nW6yB1cD5"
WORDS = ("amber birch cedar delta ember fjord grove heron inlet juniper kestrel lagoon meadow nectar orchid prairie "
         "quartz raven summit tundra").split()
LONG = 120  # the planted bias: a passage over 120 characters gets one grade more


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _run(tmp_path, make_run, n_queries=12, n_docs=5):
    """Queries "topic N"; passages of 10 words of 4-7 letters (under 80 characters), so padding or repeating one passes
    LONG and appending the query's two terms does not."""
    spec = {}
    for q in range(n_queries):
        docs = [(f"q{q}d{d}", " ".join(WORDS[(3 * q + 7 * d + i * i) % len(WORDS)] for i in range(10)))
                for d in range(n_docs)]
        assert all(len(t) < 80 for _, t in docs)
        spec[f"q{q}"] = (f"topic {q}", docs)
    return make_run(tmp_path / "run.jsonl", spec)


def _audit(server, run, store, *extra):
    return main(["audit", "--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--store", str(store),
                 *extra])


def test_a_planted_length_bias_fails_the_audit_and_is_named(fakes, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run)
    with fakes.FakeOpenAIServer(grade_by="query", length_bonus=LONG) as server:
        code = _audit(server, run, tmp_path / "s.sqlite", "--n", "40", "--json", str(tmp_path / "audit.json"))
        out = capsys.readouterr().out
        assert server.stats()["requests"] == 40 * 7  # original, its re-ask and 5 perturbed passages per pair
    assert code == 1
    report = json.loads((tmp_path / "audit.json").read_text())
    assert "length" in report["biases"] and "BIAS: length" in out
    length = report["probes"]["length"]
    assert length["shift"] == 1.0 and length["ci95"][0] > 0.5 and length["changed"] == 1.0
    assert "bias: grades rise by 1.00 when off-topic text pads the passage" in out
    assert report["biases"] == ["length", "duplication"]  # a repeated passage is longer too; the rest hold 0
    identity = report["probes"]["identity"]
    assert identity["shift"] == 0 and identity["ci95"][0] < 0 < identity["ci95"][1]  # a deterministic judge
    assert report["n_pairs"] == 40 and report["settings"]["family_size"] == 6


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_fair_noisy_judge_passes(fakes, tmp_path, make_run, capsys, seed):
    """The judge grades by the query alone and moves 20% of its answers one grade at random: no perturbation can
    move it on average, but every answer is noisy (the identity probe shows it)."""
    run = _run(tmp_path, make_run)
    with fakes.FakeOpenAIServer(grade_by="query", noise=0.2, noise_seed=seed) as server:
        code = _audit(server, run, tmp_path / "s.sqlite", "--n", "40", "--seed", str(seed), "--json",
                      str(tmp_path / "audit.json"))
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads((tmp_path / "audit.json").read_text())
    assert report["biases"] == [] and report["complete"]
    assert 0 < report["probes"]["identity"]["changed"] < 0.5  # the judge's own noise, measured


def test_the_store_serves_a_rerun_and_the_identity_reask_passes_it(fakes, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run, n_queries=6, n_docs=4)
    store = tmp_path / "s.sqlite"
    with fakes.FakeOpenAIServer(grade_by="query") as server:
        base = ["--run", str(run), "--model", MODEL, "--api-base", server.base_url, "--store", str(store)]
        assert main(["judge", *base, "--out", str(tmp_path / "j.qrels")]) == 0  # the user's judge run: 24 pairs
        server.reset()
        assert main(["audit", *base, "--n", "10", "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert "calls per answer kind (the rest are in the store): original 0 of 10, identity 10, length 10" in out
        assert server.stats()["requests"] == 0
        assert main(["audit", *base, "--n", "10"]) == 0
        first = server.stats()
        assert first["requests"] == 10 * 6  # the originals came from the store; each is asked once more
        assert all(row["requests"] == 1 for row in first["by_pair"].values())
        server.reset()
        assert main(["audit", *base, "--n", "10"]) == 0  # the re-ask has a key of its own: a re-run pays nothing
        assert server.stats()["requests"] == 0
        assert main(["audit", *base, "--n", "14"]) == 0  # the same seed keeps the first 10 pairs
        assert server.stats()["requests"] == 4 * 6
    out = capsys.readouterr().out
    assert "this run: 0 calls, $0.0000" in out


def test_position_brings_length_and_identity_always_runs(fakes, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run, n_queries=4, n_docs=3)
    with fakes.FakeOpenAIServer(grade_by="query") as server:
        code = _audit(server, run, tmp_path / "s.sqlite", "--probe", "position", "--json", str(tmp_path / "a.json"))
        assert server.stats()["requests"] == 12 * 4
    report = json.loads((tmp_path / "a.json").read_text())
    assert code == 0 and list(report["probes"]) == ["identity", "length", "position"]
    assert report["settings"]["added"] == ["identity", "length"]
    assert "identity, length ran as the baseline of the probes asked for" in capsys.readouterr().out


def test_max_cost_bounds_the_whole_audit(fakes, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run)
    with fakes.FakeOpenAIServer(grade_by="query") as server:
        code = _audit(server, run, tmp_path / "s.sqlite", "--n", "30", "--max-cost", "0.006", "--json",
                      str(tmp_path / "a.json"))
        paid = server.stats()["paid"]
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "a.json").read_text())
    assert code == 0 and "stopped before --max-cost $0.006" in out and not report["complete"]
    assert report["this_run"]["cost_usd"] <= 0.006 and 0 < paid < 30 * 7
    assert report["this_run"]["calls"] == paid


def test_circularity_warns(fakes, tmp_path, make_run, capsys):
    run = _run(tmp_path, make_run, n_queries=3, n_docs=2)
    with fakes.FakeOpenAIServer(grade_by="query") as server:
        code = _audit(server, run, tmp_path / "s.sqlite", "--system-model", "openai/gpt-4o", "--system-model",
                      "cohere/rerank-english-v3.0", "--json", str(tmp_path / "a.json"), "--dry-run")
    out = capsys.readouterr().out
    assert code == 0
    assert ("warning: circularity: the system model openai/gpt-4o shares the judge's family (OpenAI GPT and o-series)"
            in out)
    assert "system model cohere/rerank-english-v3.0 (Cohere Command): not the judge's family" in out


@pytest.mark.parametrize("argv, fragment", [
    (["--n", "0"], "--n must be a positive number of pairs"),
    (["--n", "1000001"], "--n: 1,000,001 pairs, over the limit of 100,000"),
    (["--probe", "lenght"], "--probe 'lenght': not a probe; choose from identity, length"),
    (["--min-shift", "-1"], "--min-shift must be a finite number of grades >= 0"),
    (["--min-shift", "nan"], "--min-shift must be a finite number of grades >= 0"),
    (["--seed", "-3"], "--seed must be a non-negative integer"),
    (["--system-model", " "], "--system-model must name a model"),
    (["--latency", "1"], "--latency 1.0: give the seconds per call"),
    (["--json", "RUN"], "--json"),
    (["--api-base", "localhost:8000"], "--api-base must be a URL"),
    (["--prompt", "nonsense"], "--prompt nonsense: not 'graded', 'binary', 'local' or an existing prompt file"),
    (["--max-grade", "12"], "max grade must be an integer from 1 to 9"),
])
def test_user_errors_exit_2_with_one_line(tmp_path, make_run, capsys, argv, fragment):
    run = _run(tmp_path, make_run, n_queries=3, n_docs=2)
    argv = [str(run) if a == "RUN" else a for a in argv]
    code = main(["audit", "--run", str(run), "--model", MODEL, "--store", str(tmp_path / "s.sqlite"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err, err
    assert err.count("\n") == 1 and err.startswith("relgrade: error: ") and "Traceback" not in err
    assert not os.path.exists(tmp_path / "s.sqlite")


def test_one_query_is_a_user_error(tmp_path, make_run, capsys):
    run = make_run(tmp_path / "one.jsonl", {"q": ("topic", [("a", "some text here"), ("b", "other text")])})
    assert main(["audit", "--run", str(run), "--model", MODEL, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "an audit needs pairs of at least 2 queries" in err and err.count("\n") == 1
