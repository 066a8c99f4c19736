"""The interval functions against ppi-python and scipy called directly (the oracles)."""

from __future__ import annotations

import numpy as np
import ppi_py
import pytest
from scipy import stats

from relgrade._errors import InputError
from relgrade.hybrid import effective_n, human_only_means, ppi_means, ppi_pvalues


@pytest.fixture()
def data():
    rng = np.random.default_rng(3)
    Y = rng.random((40, 3))
    Yhat = Y + rng.normal(0, [0.05, 0.3, 2.0], (40, 3))
    Yu = rng.random((400, 3)) + rng.normal(0, [0.05, 0.3, 2.0], (400, 3))
    return Y, Yhat, Yu


def _documented_ppi_interval(y, yh, yu, alpha=0.05):
    """The interval of relgrade.hybrid._ppi written out: PPI++ lam (ppi-python's element mode), Student t."""
    n, N = len(y), len(yu)
    lam = np.clip(np.mean((y - y.mean()) * (yh - yh.mean())) / ((1 + n / N) * np.var(np.r_[yh, yu], ddof=1)), 0, 1)
    value = lam * yu.mean() + np.mean(y - lam * yh)
    half = stats.t.ppf(1 - alpha / 2, n - 1) * np.sqrt(lam ** 2 * np.var(yu, ddof=1) / N
                                                      + np.var(y - lam * yh, ddof=1) / n)
    return value, value - half, value + half


def test_point_estimates_match_ppi_py_and_intervals_the_documented_formula(data):
    Y, Yhat, Yu = data
    lower, upper = -10.0, 10.0  # these synthetic values are not in [0, 1]
    est = ppi_means(Y, Yhat, Yu, alpha=0.05, lower=lower, upper=upper)
    for j in range(3):
        point = ppi_py.ppi_mean_pointestimate(Y[:, j], Yhat[:, j], Yu[:, j], lam_optim_mode="element")
        assert est.value[j] == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
        value, lo, hi = _documented_ppi_interval(Y[:, j], Yhat[:, j], Yu[:, j])
        assert est.value[j] == pytest.approx(value, abs=1e-12)
        assert (est.lo[j], est.hi[j]) == pytest.approx((lo, hi), abs=1e-12)
        # t with n - 1 df and ddof 1 make it wider than ppi-python's normal interval, never narrower
        plo, phi = ppi_py.ppi_mean_ci(Y[:, j], Yhat[:, j], Yu[:, j], alpha=0.05, lam_optim_mode="element")
        assert est.width[j] > float(phi[0] - plo[0])
    p = ppi_pvalues(Y, Yhat, Yu, null=0.5, lower=lower, upper=upper)
    n = Y.shape[0]
    se = est.half / stats.t.ppf(0.975, n - 1)  # the interval's standard error
    assert p == pytest.approx(2 * stats.t.sf(np.abs(est.value - 0.5) / se, n - 1))
    # p < 0.05 exactly when 0.5 lies outside the interval centred on the estimate
    assert ((p < 0.05) == (np.abs(est.value - 0.5) > est.half)).all()


def test_ppi_pvalue_is_ppi_pythons_at_large_n():
    rng = np.random.default_rng(8)
    n, N = 4000, 20000
    y = rng.normal(0.3, 1, n)
    yhat = y + rng.normal(0.1, 0.5, n)
    yu = rng.normal(0.4, 1.1, N)
    ours = ppi_pvalues(y, yhat, yu, null=0.33, lower=-10, upper=10)[0]
    theirs = float(np.ravel(ppi_py.ppi_mean_pval(y, yhat, yu, null=0.33))[0])
    assert 0.001 < theirs < 0.999 and ours == pytest.approx(theirs, rel=0.02, abs=0.002)
    assert ours >= theirs * 0.98  # t with ddof 1: never the optimistic one


def test_power_tuning_beats_plain_ppi_for_a_noisy_judge(data):
    Y, Yhat, Yu = data
    tuned = ppi_means(Y[:, 2], Yhat[:, 2], Yu[:, 2], lower=-10, upper=10)
    lo, hi = ppi_py.ppi_mean_ci(Y[:, 2], Yhat[:, 2], Yu[:, 2], alpha=0.05, lam=1)
    assert tuned.width[0] < float(hi[0] - lo[0])


def test_human_only_is_the_student_t_interval(data):
    Y = data[0]
    est = human_only_means(Y)
    for j in range(3):
        half = stats.t.ppf(0.975, len(Y) - 1) * Y[:, j].std(ddof=1) / np.sqrt(len(Y))
        m = Y[:, j].mean()
        assert (est.lo[j], est.hi[j]) == pytest.approx((max(0.0, m - half), min(1.0, m + half)))
        assert est.value[j] == pytest.approx(Y[:, j].mean())


def test_constant_judge_falls_back_to_lam_zero_with_a_note(data):
    Y = data[0][:, 0]
    est = ppi_means(Y, np.ones_like(Y), np.ones(100))
    human = human_only_means(Y)
    point = ppi_py.ppi_mean_pointestimate(Y, np.ones_like(Y), np.ones(100), lam=0)
    assert est.value[0] == pytest.approx(float(np.ravel(point)[0])) == pytest.approx(Y.mean())
    assert (est.lo[0], est.hi[0]) == pytest.approx((human.lo[0], human.hi[0]))
    assert "lam = 0" in est.notes[0]
    assert np.isfinite(est.lo).all()


def test_a_lucky_sample_never_gives_a_zero_width_interval():
    # issue 14: humans and judge agree on all 10 labeled queries (recall@5 = 1), the judge says 0.84 overall
    Y = np.ones(10)
    Yu = np.r_[np.ones(32), np.zeros(8)]
    est = ppi_means(Y, Y.copy(), Yu)
    n = 10
    point = ppi_py.ppi_mean_pointestimate(Y, Y.copy(), Yu, lam=1)  # the fallback: lam = 1, plain PPI
    assert est.value[0] == pytest.approx(float(np.ravel(point)[0]))
    # a 0/1 metric: plus-two, two pseudo-queries (human 0, judge 1) and (human 1, judge 0); with lam = 1 their
    # rectifiers are -1 and 1 beside the ten 0s
    plus = np.r_[np.zeros(n), -1.0, 1.0]
    t = stats.t.ppf(0.975, n - 1)
    half = t * np.sqrt(np.var(Yu, ddof=1) / len(Yu) + np.var(plus, ddof=1) / n)
    centre = Yu.mean() + plus.mean()
    assert (est.lo[0], est.hi[0]) == pytest.approx((centre - half, min(1.0, centre + half)))
    assert est.width[0] > 0.2 and est.floored[0] and "lam = 1" in est.notes[0]
    assert "metric is constant" not in est.notes[0]
    human = human_only_means(Y)
    assert human.width[0] > 0.2 and human.floored[0] and human.hi[0] == 1.0
    hplus = np.r_[Y, 0.0, 1.0]  # plus-two on the human values
    assert human.lo[0] == pytest.approx(hplus.mean() - t * np.sqrt(np.var(hplus, ddof=1) / n))
    assert effective_n(n, human.width[0], est.width[0], floored=True) is None


def test_degenerate_inputs_are_explicit():
    with pytest.raises(InputError, match="at least 2 human-labeled"):
        ppi_means([0.5], [0.5], [0.1, 0.2])
    with pytest.raises(InputError, match="same shape"):
        ppi_means([0.5, 0.2], [0.5], [0.1, 0.2])
    with pytest.raises(InputError, match="NaN"):
        ppi_means([0.5, np.nan], [0.5, 0.1], [0.1, 0.2])
    everyone = ppi_means([0.2, 0.4, 0.9], [0.1, 0.5, 0.7], np.zeros((0, 1)))
    human = human_only_means([0.2, 0.4, 0.9])
    assert (everyone.lo[0], everyone.hi[0]) == (human.lo[0], human.hi[0])
    assert "every query is human-labeled" in everyone.notes[0]
    assert effective_n(10, 0.2, 0.1) == pytest.approx(40.0)
    assert effective_n(10, 0.0, 0.0) is None
    assert effective_n(10, 0.0, 0.1) is None


def test_importing_ppi_leaves_warning_filters_alone():
    import subprocess
    import sys

    code = ("import warnings; from relgrade.hybrid._ppi import ppi_module; before = list(warnings.filters); {imp}; "
            "print(list(warnings.filters) == before)")
    plain = subprocess.run([sys.executable, "-c", code.format(imp="import ppi_py")], capture_output=True, text=True)
    ours = subprocess.run([sys.executable, "-c", code.format(imp="ppi_module()")], capture_output=True, text=True)
    assert plain.stdout.strip() == "False"  # ppi_py itself sets a global "ignore" filter
    assert ours.stdout.strip() == "True", ours.stderr
