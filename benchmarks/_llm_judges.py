"""Synthetic judges whose errors look like real LLM judges', and systems whose mistakes the judges share.

Gaussian noise on the truth, or a grade replaced at random (``_trec_dl.noisy``), makes errors that are
independent of everything else and the same on every query. Real LLM relevance judges (UMBRELA-style
prompts, GPT-4o class, Cohen's kappa 0.2-0.5 against TREC assessors) err differently:

* **lenient on 1, strict on 3**: a passage the assessor called "related" (1) is often graded 2, a "perfectly
  relevant" one (3) is often graded 2; 0s are mostly right. The grade means of the latent below are not
  evenly spaced (``LATENT_MEANS``);
* **some queries much worse than others**: each query has its own bias (a judge that misreads the intent is
  lenient or strict on every passage of that query) and its own noise scale, drawn log-normal so a few
  queries get near-random grades;
* **errors shared with the retrievers**: a passage that matches the query on the surface (a latent
  ``surface`` score per pair) is over-graded by the judge *and* ranked high by lexical/dense systems, so
  judge errors concentrate on the top of the ranking, where the metrics look;
* **a grade distribution**, as logprobs give one: the probabilities of the judge's own ordinal latent
  around its thresholds (the expected grade is a soft prediction a calibrator can use).

A judge is the ordinal model ``latent = LATENT_MEANS[g] + bias_q + scale_q * noise * (rho * surface +
sqrt(1 - rho^2) * eps)``, graded by the thresholds 0.5 / 1.5 / 2.5. :func:`llm_judge` tunes ``noise`` by
bisection so the judge's unweighted Cohen's kappa over all pairs hits the requested value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LATENT_MEANS = np.array([0.0, 1.3, 2.05, 2.7])  # lenient on 1 (pulled up to 2), strict on 3 (pulled down to 2)
THRESHOLDS = np.array([0.5, 1.5, 2.5])


@dataclass(frozen=True)
class Judge:
    """One synthetic judge: hard grades, grade distributions (rows sum to 1) and its kappa over all pairs."""

    grades: dict[str, dict[str, int]]
    dists: dict[str, dict[str, tuple[float, float, float, float]]]
    kappa: float
    noise: float


def surface(labels: dict[str, dict[str, int]], rng) -> dict[str, dict[str, float]]:
    """A surface-match score per pair (standard normal), shared by the judges and the systems."""
    return {q: {d: float(rng.standard_normal()) for d in docs} for q, docs in labels.items()}


def kappa(a: np.ndarray, b: np.ndarray, k: int = 4) -> float:
    """Unweighted Cohen's kappa of two integer grade arrays on 0..k-1."""
    cm = np.zeros((k, k))
    np.add.at(cm, (a, b), 1)
    cm /= cm.sum()
    pe = cm.sum(1) @ cm.sum(0)
    return float((np.trace(cm) - pe) / (1 - pe))


def _latent(labels, surf, noise, rho, query_bias, query_scale, rng_seed):
    rng = np.random.default_rng(rng_seed)
    out = {}
    for q in sorted(labels):
        docs = sorted(labels[q])
        g = np.array([labels[q][d] for d in docs])
        s = np.array([surf[q][d] for d in docs])
        bias = query_bias * rng.standard_normal()
        scale = np.exp(query_scale * rng.standard_normal())
        eps = rng.standard_normal(len(docs))
        out[q] = (docs, g, LATENT_MEANS[g] + bias + scale * noise * (rho * s + np.sqrt(1 - rho ** 2) * eps), scale)
    return out


def _grade(lat: np.ndarray) -> np.ndarray:
    return (lat[:, None] > THRESHOLDS[None, :]).sum(axis=1)


def llm_judge(labels: dict[str, dict[str, int]], target_kappa: float, *, surf=None, rho: float = 0.5,
              query_bias: float = 0.35, query_scale: float = 0.5, confidence: float = 0.6, aware: float = 0.0,
              seed: int = 0) -> Judge:
    """A judge of the module's model whose unweighted kappa against ``labels`` is ``target_kappa`` (+- 0.005).

    ``rho``: how much of its noise is the pairs' surface match (shared with :func:`systems`); ``query_bias``
    and ``query_scale``: spread of the per-query bias and log noise scale; ``confidence``: the spread the
    judge's grade distribution assumes around its own latent (smaller = more peaked logprobs); ``aware``: how far
    that spread follows the query's own noise scale (``confidence * scale_q ** aware``: 0, the default, a judge
    whose logprobs do not know which queries it misreads; 1, logprobs that widen exactly with its noise).
    """
    from scipy.stats import norm

    surf = surf if surf is not None else surface(labels, np.random.default_rng(seed + 1))

    def at(noise):
        lat = _latent(labels, surf, noise, rho, query_bias, query_scale, seed)
        truth = np.concatenate([g for _, g, _, _ in lat.values()])
        return lat, kappa(truth, np.concatenate([_grade(x) for _, _, x, _ in lat.values()]))

    lo, hi = 0.01, 20.0
    for _ in range(60):  # kappa falls as noise grows
        mid = (lo * hi) ** 0.5
        if at(mid)[1] > target_kappa:
            lo = mid
        else:
            hi = mid
    noise = (lo * hi) ** 0.5
    lat, k = at(noise)
    grades, dists = {}, {}
    for q, (docs, _, x, scale) in lat.items():
        cdf = norm.cdf((THRESHOLDS[None, :] - x[:, None]) / (confidence * scale ** aware))  # P(latent < threshold)
        p = np.diff(np.hstack([np.zeros((len(x), 1)), cdf, np.ones((len(x), 1))]), axis=1)
        grades[q] = {d: int(v) for d, v in zip(docs, _grade(x))}
        dists[q] = {d: tuple(float(v) for v in row) for d, row in zip(docs, p)}
    return Judge(grades, dists, k, noise)


def systems(labels: dict[str, dict[str, int]], sigmas, *, surf, rho: float = 0.6, seed: int = 0):
    """Runs that rank each query's judged pool by ``grade + sigma * (rho * surface + sqrt(1 - rho^2) * eps)``:
    one run ``{query: {doc: score}}`` per sigma (small sigma = strong system); their mistakes are the pairs
    that look relevant on the surface, as the judges' are."""
    rng = np.random.default_rng(seed)
    out = []
    for sigma in sigmas:
        run = {}
        for q in sorted(labels):
            docs = sorted(labels[q])
            g = np.array([labels[q][d] for d in docs], dtype=float)
            s = np.array([surf[q][d] for d in docs])
            score = g + sigma * (rho * s + np.sqrt(1 - rho ** 2) * rng.standard_normal(len(docs)))
            run[q] = {d: float(v) for d, v in zip(docs, score)}
        out.append(run)
    return out
