"""The probes of an audit and the sample they run on: which pairs, and what each probe does to their passages.

A probe is a controlled perturbation of a pair's passage, judged by the same judge beside an unperturbed answer
(its *baseline*):

* ``identity``: the same pair asked again, past the store (the store key of the judge's second sample, so a
  re-run of the audit reuses it), against the stored answer: the judge's own noise, and whether it still grades
  as it did (a model changed behind the same name drifts here);
* ``length``: the passage followed by as many words of off-topic text, taken from passages the run retrieved for
  *other* queries, against the re-asked original;
* ``keywords``: the query's terms appended to the passage, against the re-asked original;
* ``truncation``: the passage cut to its first half (in words), against the re-asked original. Half a passage
  can hold less of the answer but never more, so only a *rise* is a bias; a fall is what a judge that reads the
  whole passage does (or a length bias: see the length probe);
* ``duplication``: the passage twice, against the re-asked original;
* ``position``: the off-topic text of the length probe *before* the passage instead of after it, against the
  length probe's answer (same words, same length: only where the relevant text sits changes).

relgrade's judge is pointwise: each prompt holds one passage (:mod:`relgrade.judge.engine._engine`), so the position
bias of a prompt listing several passages (the first or last one favoured) cannot arise. What can is the pointwise
analogue, where in a long chunk the relevant text sits (at its start or its end); the position probe measures
that.

The perturbed passages are deterministic: the same ``seed`` gives the same sample and the same padding, so every
judgment of a re-run comes from the store. The sample is a prefix of one permutation of the distinct (query,
passage) pairs, and each pair's padding depends only on the seed and the pair, so ``--n 400`` after ``--n 200``
(same seed) reuses the first 200 pairs' judgments.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from relgrade._errors import InputError
from relgrade._words import plural
from relgrade.judge import Pair

__all__ = ["DEFAULT_N", "MAX_PAIRS", "PROBES", "Design", "Probe", "design_audit", "perturb"]

DEFAULT_N = 200
"""Pairs an audit samples by default (``--n``)."""
MAX_PAIRS = 100_000
"""Most pairs an audit samples (``--n``)."""
_WORD = re.compile(r"\S+")
_TERM = re.compile(r"\w+")


@dataclass(frozen=True)
class Probe:
    """One probe: its ``name``, the answer it is compared with (``baseline``: ``original``, the stored answer;
    ``identity``, the re-asked original; ``length``), what it changes, which direction of shift is a bias
    (``sides``: ``both`` or ``up``), and how a shift reads (``rise``/``fall``: "grades rise when ...")."""

    name: str
    baseline: str
    what: str
    sides: str
    when: str


PROBES = (
    Probe("identity", "original", "the same pair asked again, past the store", "both",
          "the same pair is asked again"),
    Probe("length", "identity", "the passage padded with as much off-topic text from other queries' passages", "both",
          "off-topic text pads the passage"),
    Probe("keywords", "identity", "the query's terms appended to the passage", "both",
          "the query's terms are appended"),
    Probe("truncation", "identity", "the passage cut to its first half (only a rise is a bias)", "up",
          "the passage is cut to its first half"),
    Probe("duplication", "identity", "the passage twice", "both", "the passage is repeated"),
    Probe("position", "length", "the off-topic text before the passage instead of after it", "both",
          "the off-topic padding comes before the passage instead of after it"),
)
PROBE = {p.name: p for p in PROBES}


@dataclass(frozen=True)
class Design:
    """What an audit judges: the sampled pairs and, per probe, each pair's perturbed passage (None where the
    perturbation does not apply: a one-word passage cannot be halved, a query without a word has no terms)."""

    pairs: tuple[Pair, ...]
    texts: dict[str, tuple[str | None, ...]]
    probes: tuple[str, ...]
    seed: int
    population: int
    added: tuple[str, ...] = ()
    """Probes run because another probe is compared with them (identity always; length for position)."""

    @property
    def n_queries(self) -> int:
        return len({p.query_id for p in self.pairs})

    def perturbed(self, probe: str) -> list[Pair]:
        """The perturbed pairs of ``probe`` (those that apply), ids of their originals."""
        return [Pair(p.query_id, p.doc_id, p.query, t) for p, t in zip(self.pairs, self.texts[probe]) if t is not None]

    @property
    def n_judgments(self) -> int:
        """Judgments the audit reads: the originals, their re-asks and every perturbed passage."""
        return 2 * len(self.pairs) + sum(len(self.perturbed(p)) for p in self.probes if p != "identity")


def _probes(names: Sequence[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(probes in canonical order, those added as baselines)``."""
    if not names:
        return tuple(p.name for p in PROBES), ()
    wanted = set()
    for name in names:
        for part in str(name).split(","):
            part = part.strip()
            if part not in PROBE:
                raise InputError(f"--probe {part!r}: not a probe; choose from {', '.join(PROBE)}")
            wanted.add(part)
    added = set()
    for name in list(wanted):
        base = PROBE[name].baseline
        while base in PROBE and base not in wanted:
            added.add(base)
            wanted.add(base)
            base = PROBE[base].baseline
    if "identity" not in wanted:
        added.add("identity")
        wanted.add("identity")
    order = tuple(p.name for p in PROBES if p.name in wanted)
    return order, tuple(p for p in order if p in added)


def _pair_rng(seed: int, pair: Pair) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join((pair.query_id, pair.doc_id, pair.query, pair.text)).encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def _padding(pair: Pair, words: int, others: Sequence[tuple[str, str]], rng: np.random.Generator) -> str | None:
    """``words`` words of passages the run retrieved for other queries than ``pair``'s (never the passage itself),
    drawn at random; None when there is none."""
    pool = [text for qid, text in others if qid != pair.query_id and text != pair.text]
    if not pool:
        return None
    out: list[str] = []
    while len(out) < words:
        out.extend(_WORD.findall(pool[int(rng.integers(len(pool)))])[: words - len(out)])
    return " ".join(out)


def perturb(pair: Pair, probe: str, *, padding: str | None = None) -> str | None:
    """``pair``'s passage as ``probe`` changes it (None where it does not apply); ``padding`` for length and
    position (:func:`design_audit` draws it)."""
    text = pair.text
    if probe == "identity":
        return text
    if probe == "length":
        return f"{text}\n\n{padding}" if padding else None
    if probe == "position":
        return f"{padding}\n\n{text}" if padding else None
    if probe == "keywords":
        terms = list(dict.fromkeys(_TERM.findall(pair.query)))
        return f"{text}\n\n{' '.join(terms)}" if terms else None
    if probe == "truncation":
        words = list(_WORD.finditer(text))
        return text[: words[len(words) // 2 - 1].end()] if len(words) >= 2 else None
    if probe == "duplication":
        return f"{text}\n\n{text}"
    raise InputError(f"unknown probe {probe!r}; choose from {', '.join(PROBE)}")


def design_audit(pairs: Sequence[Pair], *, n: int = DEFAULT_N, seed: int = 0,
                 probes: Sequence[str] | None = None) -> Design:
    """Sample ``n`` distinct (query, passage) pairs of ``pairs`` (all of them when fewer) and perturb them.

    ``pairs``: e.g. :func:`relgrade.judge.pool` of the user's runs; pairs with the same query and passage text count
    once. ``probes``: names of :data:`PROBES` (default all); the baselines they are compared with are added.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"--n must be a positive number of pairs, got {n!r}")
    if n > MAX_PAIRS:
        raise InputError(f"--n: {n:,} pairs, over the limit of {MAX_PAIRS:,}; give at most {MAX_PAIRS:,}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed!r}")
    order, added = _probes(probes)
    distinct: dict[tuple[str, str], Pair] = {}
    for pair in pairs:
        if not isinstance(pair, Pair):
            raise InputError(f"an audit samples Pair objects (relgrade.judge.pool), got {type(pair).__name__}")
        distinct.setdefault((pair.query, pair.text), pair)
    units = list(distinct.values())
    if len({p.query_id for p in units}) < 2:
        raise InputError(f"the runs hold {plural(len(units), 'pair')} of "
                         f"{plural(len({p.query_id for p in units}), 'query', 'queries')}; an audit needs pairs of at "
                         "least 2 queries (its intervals are clustered by query, and the padding comes from other "
                         "queries' passages)")
    perm = np.random.default_rng(seed).permutation(len(units))[:n]
    chosen = tuple(units[i] for i in sorted(perm))
    if len({p.query_id for p in chosen}) < 2:
        raise InputError(f"the sample of {plural(len(chosen), 'pair')} holds one query; an audit needs pairs of at "
                         "least 2 queries: raise --n")
    others = [(p.query_id, p.text) for p in units]
    texts: dict[str, list[str | None]] = {name: [] for name in order}
    for pair in chosen:
        pad = None
        if "length" in order or "position" in order:
            pad = _padding(pair, len(_WORD.findall(pair.text)), others, _pair_rng(seed, pair))
        for name in order:
            text = perturb(pair, name, padding=pad)
            texts[name].append(None if text is not None and name != "identity" and text == pair.text else text)
    return Design(chosen, {k: tuple(v) for k, v in texts.items()}, order, seed, len(units), added)
