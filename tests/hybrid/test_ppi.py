"""The interval functions against ppi-python and scipy called directly (the oracles)."""

from __future__ import annotations

import numpy as np
import ppi_py
import pytest

from relgrade._errors import InputError
from relgrade.hybrid import effective_n, human_only_means, ppi_means, ppi_pvalues


@pytest.fixture()
def data():
    rng = np.random.default_rng(3)
    Y = rng.random((40, 3))
    Yhat = Y + rng.normal(0, [0.05, 0.3, 2.0], (40, 3))
    Yu = rng.random((400, 3)) + rng.normal(0, [0.05, 0.3, 2.0], (400, 3))
    return Y, Yhat, Yu


def test_columns_match_one_ppi_py_call_per_column(data):
    Y, Yhat, Yu = data
    est = ppi_means(Y, Yhat, Yu, alpha=0.05)
    for j in range(3):
        lo, hi = ppi_py.ppi_mean_ci(Y[:, j], Yhat[:, j], Yu[:, j], alpha=0.05)  # lam=None: PPI++
        point = ppi_py.ppi_mean_pointestimate(Y[:, j], Yhat[:, j], Yu[:, j])
        assert est.lo[j] == pytest.approx(float(lo[0]), abs=1e-12)
        assert est.hi[j] == pytest.approx(float(hi[0]), abs=1e-12)
        assert est.value[j] == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    p = ppi_pvalues(Y, Yhat, Yu, null=0.5)
    assert p[0] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pval(Y[:, 0], Yhat[:, 0], Yu[:, 0], null=0.5))[0]))


def test_power_tuning_beats_plain_ppi_for_a_noisy_judge(data):
    Y, Yhat, Yu = data
    tuned = ppi_means(Y[:, 2], Yhat[:, 2], Yu[:, 2])
    lo, hi = ppi_py.ppi_mean_ci(Y[:, 2], Yhat[:, 2], Yu[:, 2], alpha=0.05, lam=1)
    assert tuned.width[0] < float(hi[0] - lo[0])


def test_human_only_is_ppi_py_classical_interval(data):
    from ppi_py import classical_mean_ci

    Y = data[0]
    est = human_only_means(Y)
    for j in range(3):
        lo, hi = classical_mean_ci(Y[:, j], alpha=0.05)
        assert (est.lo[j], est.hi[j]) == pytest.approx((float(lo), float(hi)))
        assert est.value[j] == pytest.approx(Y[:, j].mean())


def test_constant_judge_falls_back_to_lam_zero_with_a_note(data):
    Y = data[0][:, 0]
    est = ppi_means(Y, np.ones_like(Y), np.ones(100))
    lo, hi = ppi_py.ppi_mean_ci(Y, np.ones_like(Y), np.ones(100), alpha=0.05, lam=0)
    assert (est.lo[0], est.hi[0]) == pytest.approx((float(lo[0]), float(hi[0])))
    assert est.value[0] == pytest.approx(Y.mean())
    assert "lam = 0" in est.notes[0]
    assert np.isfinite(est.lo).all()


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
