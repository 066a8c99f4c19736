"""The sample and the perturbations of an audit, and the model families behind the circularity warning."""

from __future__ import annotations

import pytest

from relgrade import InputError
from relgrade.audit import design_audit, family, perturb
from relgrade.audit._family import circularity
from relgrade.judge import Pair


def _pairs(n_queries=6, n_docs=5):
    return [Pair(f"q{q}", f"q{q}d{d}", f"what about topic {q}?", f"passage {d} of query {q} with words w{q}x{d} end")
            for q in range(n_queries) for d in range(n_docs)]


def test_each_probe_changes_the_passage_as_it_says():
    pair = Pair("q", "d", "who wrote the iliad?", "Homer wrote the Iliad and the Odyssey.")
    assert perturb(pair, "identity") == pair.text
    assert perturb(pair, "keywords") == pair.text + "\n\nwho wrote the iliad"
    assert perturb(pair, "truncation") == "Homer wrote the"  # the first 3 of 7 words
    assert perturb(pair, "duplication") == pair.text + "\n\n" + pair.text
    assert perturb(pair, "length", padding="x y") == pair.text + "\n\nx y"
    assert perturb(pair, "position", padding="x y") == "x y\n\n" + pair.text
    assert perturb(Pair("q", "d", "?!", "one"), "keywords") is None
    assert perturb(Pair("q", "d", "q", "one"), "truncation") is None


def test_padding_comes_from_other_queries_and_has_the_passage_length():
    pairs = _pairs()
    design = design_audit(pairs, n=12, seed=4)
    words_of = {}
    for p in pairs:
        for w in p.text.split():
            words_of.setdefault(w, set()).add(p.query_id)
    for pair, padded, first in zip(design.pairs, design.texts["length"], design.texts["position"]):
        pad = padded[len(pair.text) + 2:]
        assert padded == f"{pair.text}\n\n{pad}" and first == f"{pad}\n\n{pair.text}"
        assert len(pad.split()) == len(pair.text.split())
        own = {w for w in pad.split() if words_of[w] == {pair.query_id}}
        assert not own  # no word only this query's passages hold: the padding is off-topic text


def test_the_sample_is_a_prefix_of_one_permutation_and_deterministic():
    pairs = _pairs(10, 10)
    small, large = design_audit(pairs, n=20, seed=1), design_audit(pairs, n=40, seed=1)
    assert set(small.pairs) <= set(large.pairs) and len(large.pairs) == 40
    for probe in small.probes:  # the same pair gets the same perturbation: its judgments come from the store
        same = dict(zip(large.pairs, large.texts[probe]))
        assert all(same[p] == t for p, t in zip(small.pairs, small.texts[probe]))
    assert design_audit(pairs, n=20, seed=1) == small and design_audit(pairs, n=20, seed=2).pairs != small.pairs
    assert len(design_audit(pairs, n=500, seed=1).pairs) == 100  # fewer pairs than --n: all of them


def test_duplicate_pairs_count_once():
    pairs = _pairs(3, 2)
    twice = pairs + [Pair(p.query_id, p.doc_id + "-copy", p.query, p.text) for p in pairs]
    assert design_audit(twice, n=100).population == 6


@pytest.mark.parametrize("model, expected", [
    ("openai/gpt-4o-mini", "OpenAI GPT and o-series"), ("o3-mini", "OpenAI GPT and o-series"),
    ("azure/my-gpt4-deployment", "OpenAI GPT and o-series"), ("anthropic/claude-haiku-4-5", "Anthropic Claude"),
    ("bedrock/anthropic.claude-3-sonnet", "Anthropic Claude"), ("local/gemma3-270m", "Google Gemini and Gemma"),
    ("gemini/gemini-1.5-pro", "Google Gemini and Gemma"), ("ollama/llama3", "Meta Llama"),
    ("together_ai/meta-llama/Llama-3-70b", "Meta Llama"), ("ollama/qwen2.5:7b", "Alibaba Qwen"),
    ("mistral/mistral-large", "Mistral"), ("cohere/rerank-english-v3.0", "Cohere Command"),
    ("ollama/phi3", "Microsoft Phi"), ("ollama/my-own-model", None), ("ollama/olmo2", None),
])
def test_model_families(model, expected):
    assert family(model) == expected


def test_circularity_shares_a_family_or_the_model():
    found = circularity("openai/gpt-4o-mini", ["openai/gpt-4o", "anthropic/claude-haiku-4-5", "my-model",
                                               "openai/gpt-4o-mini"])
    assert [c.shared for c in found] == [True, False, False, True]
    assert "is the judge itself" in found[3].line() and found[2].line().startswith("note: the family of")


@pytest.mark.parametrize("kwargs, fragment", [
    ({"n": 0}, "--n must be a positive number of pairs"),
    ({"probes": ["length", "bogus"]}, "--probe 'bogus': not a probe"),
    ({"seed": True}, "--seed must be a non-negative integer"),
])
def test_bad_designs_are_input_errors(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        design_audit(_pairs(), **kwargs)
