"""Issue 39.4: calibrate's jackknife without the (queries x queries) matrix gives the intervals it gave."""

from __future__ import annotations

import numpy as np
import pytest

import relgrade.calibration._agreement as agreement_module
from relgrade.calibration import _stats as S
from relgrade.calibration._agreement import agreement
from relgrade.calibration._intervals import JackknifeRows, jackknife_weights


def _world(seed: int, n_queries: int = 140):
    rng = np.random.default_rng(seed)
    human, judge, expected, weights = {}, {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        g = rng.choice(4, size=int(rng.integers(2, 9)), p=[0.4, 0.3, 0.2, 0.1])
        j = np.where(rng.random(len(g)) < 0.6, g, rng.integers(0, 4, len(g)))
        human[q] = {f"d{k}": int(x) for k, x in enumerate(g)}
        judge[q] = {f"d{k}": int(x) for k, x in enumerate(j)}
        expected[q] = {f"d{k}": float(np.clip(x + rng.normal(0, 0.6), 0, 3)) for k, x in enumerate(j)}
        weights.update({(q, f"d{k}"): float(rng.choice([1.0, 2.5, 4.0])) for k in range(len(g))})
    return human, judge, expected, weights


def _agreements(report):
    out = {name: getattr(report, name) for name in ("kappa", "kappa_linear", "kappa_quadratic", "binary_kappa",
                                                     "krippendorff_alpha", "accuracy", "leniency")}
    out.update({f"{g} {k}": a for g, d in report.per_grade.items() for k, a in d.items()})
    out.update({f"continuous {k}": a for k, a in report.continuous.items()})
    return out


def test_jackknife_rows_are_the_matrix_rows():
    rows = JackknifeRows(7)
    assert rows.shape == (7, 7)
    assert (np.vstack([rows[0:3], rows[3:5], rows[5:100]]) == jackknife_weights(7)).all()


@pytest.mark.parametrize("weighted", [False, True])
def test_calibrate_intervals_are_the_matrix_ones(monkeypatch, weighted):
    human, judge, expected, weights = _world(3)
    kwargs = dict(expected=expected, weights=weights if weighted else None, n_boot=300, seed=5)
    fast = _agreements(agreement(judge, human, **kwargs))
    monkeypatch.setattr(agreement_module, "JackknifeRows", jackknife_weights)
    monkeypatch.setattr(agreement_module, "leave_one_out", lambda pq: S.resample(pq, jackknife_weights(len(pq))))
    plain = _agreements(agreement(judge, human, **kwargs))
    assert fast.keys() == plain.keys() and len(fast) > 15
    for name, a in fast.items():
        b = plain[name]
        assert a.value == b.value or (np.isnan(a.value) and np.isnan(b.value)), name
        assert (a.ci95 is None) == (b.ci95 is None), name
        if a.ci95 is not None:
            tol = 1e-12 if weighted else 0.0  # integer counts: the same sums exactly
            assert abs(a.ci95[0] - b.ci95[0]) <= tol and abs(a.ci95[1] - b.ci95[1]) <= tol, name
