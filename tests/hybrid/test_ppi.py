"""The PPI++ interval against ppi-python (point estimates) and the documented formula written out here."""

from __future__ import annotations

import numpy as np
import ppi_py
import pytest
from scipy import optimize, stats

from relgrade._errors import InputError
from relgrade.hybrid import human_only_means, judge_worth, plan_labels, ppi_means, ppi_pvalues
from relgrade.hybrid._plan import human_half
from relgrade.stats import mean_intervals


def _augmented(y, yh, lower, upper):
    """The labeled rows plus the documented pseudo-rows: (human, judge, weight, counts in the centre)."""
    rows = [(a, b, 1.0, True) for a, b in zip(y, yh)]
    at = np.isin(y, (lower, upper))
    share = 1.0 if at.all() else at.mean() ** 10  # of the plus-two: all of it for a 0/1 column
    if share > 0:  # share / 2 of a pseudo-query in each (human, judge) cell, in the centre for a 0/1 column only
        rows += [(a, b, share / 2, bool(at.all())) for a in (lower, upper) for b in (lower, upper)]
    elif np.ptp(y) == 0:  # constant: one far-bound row with the neutral judge value, variance only
        far = lower if y.mean() - lower >= upper - y.mean() else upper
        rows.append((far, yh.mean(), 1.0, False))
    Y, H, w, c = (np.array(col) for col in zip(*rows))
    return Y, H, w, c.astype(bool)


def _moments_by_hand(y, yh, lower=0.0, upper=1.0):
    Y, H, w, c = _augmented(y, yh, lower, upper)
    nv, yv, hv = w.sum(), np.average(Y, weights=w), np.average(H, weights=w)
    Syy, Syh, Shh = (w * (Y - yv) ** 2).sum(), (w * (Y - yv) * (H - hv)).sum(), (w * (H - hv) ** 2).sum()
    return Y, H, w, c, nv, Syy, Syh, Shh


def _tuned_by_hand(y, yh, yu, *, lower=0.0, upper=1.0, prior=1.0, tau2=0.1):
    """(lam, e) of the documented rule: the fitted slope shrunk toward ``prior`` with weight tau^2 / (tau^2 + v),
    tau^2 = max(0.1, (slope - prior)^2 - v), times N / (N + n), in [0, 1]; e = (N / (N + n)) * weight."""
    n, N = len(y), len(yu)
    _, _, _, _, nv, Syy, Syh, Shh = _moments_by_hand(y, yh, lower, upper)
    if N == 0 or np.ptp(np.r_[yh, yu]) == 0:
        return 0.0, 0.0
    c = N / (N + n)
    if Shh <= 0 or nv <= 2:
        return min(1.0, c * prior), 0.0
    slope, v = Syh / Shh, (Syy - Syh ** 2 / Shh) / (nv - 2) / Shh
    t2 = max(tau2, (slope - prior) ** 2 - v)
    weight = t2 / (t2 + v)
    lam = float(np.clip(c * (weight * slope + (1 - weight) * prior), 0.0, 1.0))
    return lam, (c * weight if lam > 0 else 0.0)


def _by_hand(y, yh, yu, lam, *, alpha=0.05, lower=0.0, upper=1.0, skew=True, e=None):
    """(value, lo, hi, unclipped half-width) of the documented construction at ``lam`` (``e``: the labels' share in
    choosing it; default: the share of the fitted slope ``lam`` uses)."""
    n, N = len(y), len(yu)
    Y, H, w, c, nv, Syy, Syh, Shh = _moments_by_hand(y, yh, lower, upper)
    yv, hv = np.average(Y, weights=w), np.average(H, weights=w)
    ols = Syh / Shh if Shh > 0 else 0.0
    if e is None:
        e = 0.0 if lam == 0 else (min(1.0, lam / ols) if ols > 0 else 1.0)
    e = e if lam > 0 else 0.0
    d = yu.mean() - np.average(H[c], weights=w[c]) if N else 0.0
    d2 = Shh / (nv - 1) / n + (yu.var(ddof=1) / N if N else 0.0)  # the mean shift's expected square
    slope = e ** 2 * (Syy - Syh ** 2 / Shh) / (nv - 2) * d2 / Shh if lam > 0 and e > 0 else 0.0
    V = (lam ** 2 * yu.var(ddof=1) / N if N else 0.0) + (Syy - 2 * lam * Syh + lam ** 2 * Shh) / ((nv - 1 - e) * n) + slope
    t = stats.t.ppf(1 - alpha / 2, n - 1 - e)
    s = 0.0
    if skew and not np.isin(y, (lower, upper)).all() and np.ptp(y) > 0:  # graded: Hall's correction
        R = Y - lam * H  # unbiased third cumulant of the augmented rows (kstat without pseudo-rows)
        k3_rows = nv * nv / ((nv - 1) * (nv - 2)) * (w * (R - np.average(R, weights=w)) ** 3).sum() / nv
        k3 = lam ** 3 * (stats.kstat(yu, 3) if N > 2 else 0.0) / max(N, 1) ** 2 + k3_rows / n ** 2
        s = float(np.clip(k3 / V ** 1.5, -0.75 / t, 0.75 / t))
    a, b = s / 3, s / 6
    g = lambda x: x + a * x * x + a * a * x ** 3 / 3 + b  # noqa: E731 - Hall (1992)
    ginv = (lambda q: optimize.brentq(lambda x: g(x) - q, -60, 60)) if s else (lambda q: q)
    se = np.sqrt(V)
    centre = np.average(Y[c], weights=w[c]) + lam * d
    value = y.mean() + lam * ((yu.mean() if N else 0.0) - yh.mean())
    below, above = se * ginv(t), -se * ginv(-t)
    lo, hi = min(centre - below, value), max(centre + above, value)
    return value, max(lower, lo), min(upper, hi), (below + above) / 2


def _cases():
    rng = np.random.default_rng(3)
    y = rng.beta(2, 5, 12)
    graded = (y, np.clip(y + rng.normal(0, 0.1, 12), 0, 1), rng.beta(2, 5, 60))
    hits = (rng.random(15) < 0.7).astype(float)
    binary = (hits, np.where(rng.random(15) < 0.15, 1 - hits, hits), (rng.random(50) < 0.7).astype(float))
    constant = (np.ones(10), rng.random(10), rng.random(40))
    near = np.r_[np.zeros(9), rng.beta(1, 3, 2)]  # 9 of 11 at the bound: 0.82 ** 10 = 0.13 of the plus-two
    near_bound = (near, np.clip(near + rng.normal(0, 0.05, 11), 0, 1), np.clip(rng.beta(1, 3, 40) - 0.1, 0, 1))
    return {"graded": graded, "binary": binary, "constant": constant, "near bound": near_bound}


@pytest.mark.parametrize("case", ["graded", "binary", "constant", "near bound"])
def test_point_is_ppi_pythons_and_interval_the_documented_formula(case):
    y, yh, yu = _cases()[case]
    est = ppi_means(y, yh, yu)
    lam, e = _tuned_by_hand(y, yh, yu)
    assert est.lam[0] == pytest.approx(lam, abs=1e-12) and est.est.share[0] == pytest.approx(e, abs=1e-12)
    point = ppi_py.ppi_mean_pointestimate(y, yh, yu, lam=lam)
    assert est.value[0] == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    value, lo, hi, half = _by_hand(y, yh, yu, lam, e=e)
    assert (est.lo[0], est.hi[0], est.half[0]) == pytest.approx((lo, hi, half), abs=1e-9)
    assert lam > 0


def test_lam_trusts_the_labels_as_far_as_they_pin_the_slope():
    """issue 35: lam = N/(N+n) * (a fitted slope shrunk toward 1, a prediction's own slope). Many labeled queries
    pin the slope (lam -> the fitted one); a judge whose labeled values are all equal shows no slope (lam = the
    prior's, with no degree of freedom spent); a prediction that runs against the human values (slope far below 1,
    well measured) gets lam = 0; none of them looks at the interval it makes."""
    rng = np.random.default_rng(21)
    y = rng.beta(2, 3, 2000)
    yh = 0.4 * y + rng.normal(0, 0.05, 2000)  # slope of y on yh about 2.2: lam capped at 1
    half_slope = 2 * y + rng.normal(0, 0.1, 2000)  # slope about 0.5, pinned down by 2000 queries
    yu = 2 * rng.beta(2, 3, 8000)
    est = ppi_means(y, half_slope, yu, lower=-10, upper=10)
    fitted = np.polyfit(half_slope, y, 1)[0]
    assert est.lam[0] == pytest.approx(8000 / 10000 * fitted, rel=0.02) and est.est.share[0] > 0.79
    assert ppi_means(y, yh, 0.4 * rng.beta(2, 3, 8000)).lam[0] == 1.0
    flat = ppi_means(y[:10], np.full(10, 0.5), rng.random(50))  # no slope on the labeled queries: the prior's lam
    assert flat.lam[0] == pytest.approx(50 / 60) and flat.est.share[0] == 0 and flat.est.df[0] == 9
    against = ppi_means(y[:400], -y[:400] + rng.normal(0, 0.01, 400), -rng.beta(2, 3, 800), lower=-1, upper=1)
    assert against.lam[0] == 0 and "run against" in against.notes[0]


def test_lam_zero_is_the_human_only_interval_exactly():
    for y, yh, yu in _cases().values():
        at_zero, human, plain = ppi_means(y, yh, yu, lam=0.0), human_only_means(y), mean_intervals(y)
        assert at_zero.lo[0] == human.lo[0] == plain.lo[0] and at_zero.hi[0] == human.hi[0] == plain.hi[0]
        assert at_zero.half[0] == human.half[0] == plain.half[0] and at_zero.value[0] == y.mean()


def test_narrower_on_average_and_wider_on_some_samples_with_the_share_reported():
    """issue 35: coverage first, so the PPI interval is no longer capped by the human-only one on every sample
    (the cap set lam = 0 on exactly the samples the judge would have corrected); it is narrower on average for a
    judge with information (widths as shown: five 0/1 values, whose human-only interval is mostly all of [0, 1],
    are the exception), and at most 3.5% wider for a judge with none (measured: 0.6-3.0%, wider on 26-54% of the
    samples: the price of a lam that is not chosen by looking at the interval it makes)."""
    rng = np.random.default_rng(11)
    for n in (5, 10, 30):
        reps = 400
        y = np.where(rng.random((n + 60, reps)) < 0.3, 1.0, rng.beta(2, 3, (n + 60, reps)))
        for noise in (0.05, 0.3, None):
            yh = rng.permutation(y) if noise is None else np.clip(y + rng.normal(0, noise, y.shape), 0, 1)
            for Y, Yh in ((y, yh), ((y > 0.5) * 1.0, (yh > 0.5) * 1.0)):
                est, human = ppi_means(Y[:n], Yh[:n], Yh[n:]), human_only_means(Y[:n])
                ratio, wider = est.width.mean() / human.width.mean(), np.mean(est.width > human.width + 1e-12)
                print(f"n={n} noise={noise} {'0/1' if Y is not y else 'graded'}: mean width ratio {ratio:.3f}, "
                      f"wider on {wider:.1%} of the samples")
                binary = Y is not y
                if noise is None:  # no information: the price of a lam that never looks at its interval
                    assert ratio <= 1.035
                elif binary and n == 5:  # five 0/1 values: the human-only interval shown is mostly [0, 1] already
                    assert ratio <= 1.04
                else:
                    assert ratio <= {(0.05, False): 0.6, (0.3, False): 0.85, (0.05, True): 0.8, (0.3, True): 0.95}[
                        (noise, binary)]


def test_a_judge_agreeing_on_every_labeled_query_is_not_taken_at_its_word():
    # issue 29: humans and judge agree on all 10 labeled queries (recall@5 = 1), the judge says 0.8 elsewhere;
    # lam = 1 made PPI 0.80 [0.41, 1.00] beside human-only 1.00 [0.71, 1.00]
    # (issue 35: with lam no longer minimising the width, the interval keeps both readings open)
    y = np.ones(10)
    yu = np.r_[np.ones(32), np.zeros(8)]
    est, human = ppi_means(y, y.copy(), yu), human_only_means(y)
    assert 0 < est.lam[0] < 40 / 50 and 0.8 < est.value[0] < 1.0
    assert est.lo[0] < 0.8 and est.hi[0] == 1.0 and human.lo[0] > 0.7
    assert est.value[0] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(y, y, yu, lam=est.lam[0]))[0]))


def test_a_judge_correction_that_overshoots_the_range_is_not_used():
    # precision@2 ten labeled queries: the judge says one more relevant document everywhere, and none on the
    # unlabeled queries: the tuned PPI interval would lie wholly below 0
    y = np.r_[[0.5] * 5, [0.0] * 5]
    est, human = ppi_means(y, y + 0.5, np.zeros(20)), human_only_means(y)
    assert est.lam[0] == 0 and "wholly outside" in est.notes[0]
    assert (est.lo[0], est.hi[0], est.value[0]) == (human.lo[0], human.hi[0], human.value[0])
    lam = 0.7  # what the tuning chose: the un-widened interval ends below 0
    at = ppi_means(y, y + 0.5, np.zeros(20), lam=lam).est
    assert at.centre[0] + at.above[0] < 0


def test_pvalue_is_the_interval_inverted_and_ppi_pythons_at_large_n():
    y, yh, yu = _cases()["graded"]
    est = ppi_means(y, yh, yu)
    centre, below, above = est.est.centre[0], *_offsets(est)
    for null in np.linspace(centre - 2 * below, centre + 2 * above, 41):
        p = ppi_pvalues(y, yh, yu, null=null)[0]
        inside = centre - below - 1e-9 <= null <= centre + above + 1e-9
        if abs(null - (centre - below)) > 1e-6 and abs(null - (centre + above)) > 1e-6:
            assert (p >= 0.05) == inside
    rng = np.random.default_rng(8)
    n, N = 4000, 20000
    y = rng.normal(0.3, 1, n)
    yhat = y + rng.normal(0.1, 0.5, n)
    yu = rng.normal(0.4, 1.1, N)
    ours = ppi_pvalues(y, yhat, yu, null=0.33, lower=-10, upper=10)[0]
    lam = float(ppi_means(y, yhat, yu, lower=-10, upper=10).lam[0])
    theirs = float(np.ravel(ppi_py.ppi_mean_pval(y, yhat, yu, null=0.33, lam=lam))[0])
    assert 0.001 < theirs < 0.999 and ours == pytest.approx(theirs, rel=0.03, abs=0.003)


def _offsets(est):
    """(below, above): the un-widened interval's offsets from its centre."""
    return est.est.below[0], est.est.above[0]


def test_power_tuning_beats_plain_ppi_for_a_noisy_judge():
    rng = np.random.default_rng(3)
    y = rng.random(40)
    yh = y + rng.normal(0, 2.0, 40)
    yu = rng.random(400) + rng.normal(0, 2.0, 400)
    tuned = ppi_means(y, yh, yu, lower=-10, upper=10)
    lo, hi = ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05, lam=1)
    assert tuned.width[0] < float(hi[0] - lo[0])


def test_human_only_is_the_student_t_interval_for_a_symmetric_sample_and_halls_for_a_skewed_one():
    x = np.linspace(0.0, 0.9, 10)  # no skewness: the t interval
    est = human_only_means(x)
    half = stats.t.ppf(0.975, 9) * x.std(ddof=1) / np.sqrt(10)
    assert (est.lo[0], est.hi[0]) == pytest.approx((x.mean() - half, x.mean() + half))
    skewed = np.array([0.0, 0.05, 0.05, 0.1, 0.1, 0.1, 0.2, 0.3, 0.9, 1.0])
    value, lo, hi, half = _by_hand(skewed, np.zeros(10), np.zeros(0), 0.0)
    est = human_only_means(skewed)
    assert (est.lo[0], est.hi[0], est.half[0]) == pytest.approx((lo, hi, half))
    assert est.hi[0] - skewed.mean() > skewed.mean() - est.lo[0]  # reaches further towards the long tail


def test_a_graded_sample_mostly_at_a_bound_gets_its_share_of_plus_two():
    """issue 29: four queries at 0 and one at 0.1 showed a standard error of 0.02, and the t interval [0, 0.10]
    missed a mean of 0.15 (the Wald failure of a binomial near 0). The column gets 0.8 ** 10 of the plus-two in
    its variance (not its centre); a column with no value at a bound none, a 0/1 column all of it."""
    from relgrade.stats._augmented import plus_two_weight

    x = np.array([0.0, 0.0, 0.0, 0.0, 0.1])
    cols = np.c_[x, [0.0, 1.0, 1.0, 0.0, 1.0], [0.2, 0.3, 0.5, 0.6, 0.9]]
    assert plus_two_weight(cols, 0.0, 1.0) == pytest.approx([0.8 ** 10, 1.0, 0.0])
    est = human_only_means(x)
    value, lo, hi, half = _by_hand(x, np.zeros(5), np.zeros(0), 0.0)
    assert (est.lo[0], est.hi[0], est.half[0]) == pytest.approx((lo, hi, half))
    assert est.est.centre[0] == pytest.approx(x.mean()) and est.hi[0] > 0.3
    plain = cols[:, 2]  # no value at a bound: the interval of the values alone
    assert human_only_means(plain).half[0] == pytest.approx(_by_hand(plain, np.zeros(5), np.zeros(0), 0.0)[3])


def test_constant_judge_falls_back_to_lam_zero_with_a_note():
    y = _cases()["graded"][0]
    est, human = ppi_means(y, np.ones_like(y), np.ones(100)), human_only_means(y)
    assert est.value[0] == pytest.approx(y.mean()) and est.lam[0] == 0
    assert (est.lo[0], est.hi[0]) == (human.lo[0], human.hi[0]) and "lam = 0" in est.notes[0]


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
    one = ppi_means([0.2, 0.4, 0.9, 0.5], [0.1, 0.5, 0.7, 0.4], [0.3])  # one unlabeled query: finite
    assert np.isfinite([one.lo[0], one.hi[0], one.value[0]]).all()


def test_judge_worth_and_the_plan_use_the_human_only_formula():
    y, yh, yu = _cases()["graded"]
    est, human = ppi_means(y, yh, yu), human_only_means(y)
    n, s = len(y), float(human.est.skew[0])
    shown_p, shown_h = float(est.width[0]), float(human.width[0])  # issue 35: the intervals as shown
    worth = judge_worth(n=n, human_half_n=human.half[0], ppi_width=shown_p, human_width=shown_h, skew_n=s)
    scale = shown_h / (2 * human.half[0])
    assert worth > n and 2 * scale * human_half(worth, n=n, half_n=human.half[0], skew_n=s, alpha=0.05) == \
        pytest.approx(shown_p, rel=1e-3)
    assert human_half(n, n=n, half_n=human.half[0], skew_n=s, alpha=0.05) == pytest.approx(human.half[0])
    assert judge_worth(n=n, human_half_n=human.half[0], ppi_width=shown_h, human_width=shown_h, skew_n=s) is None
    assert judge_worth(n=n, human_half_n=human.half[0], ppi_width=1.0, human_width=1.0, skew_n=s) is None
    plan = plan_labels(2 * human.half[0], n=n, population=n + len(yu), human_half_n=human.half[0], skew_n=s,
                       ppi_half=est.half[0], moments=None)
    assert plan.human_queries == n  # the current human-only width needs the current labels
    wide = plan_labels(2 * human.half[0] / 2, n=n, population=1000, human_half_n=human.half[0], skew_n=s,
                       ppi_half=est.half[0], moments=None)
    assert 3.2 * n < wide.human_queries <= 4 * n  # half the width: four times the queries, less as t shrinks
    assert plan_labels(0.001, n=n, population=72, human_half_n=human.half[0], skew_n=s, ppi_half=est.half[0],
                       moments=None).human_queries is None


def test_importing_ppi_leaves_warning_filters_alone():
    import subprocess
    import sys

    code = ("import warnings; from relgrade.hybrid._ppi import ppi_module; before = list(warnings.filters); {imp}; "
            "print(list(warnings.filters) == before)")
    plain = subprocess.run([sys.executable, "-c", code.format(imp="import ppi_py")], capture_output=True, text=True)
    ours = subprocess.run([sys.executable, "-c", code.format(imp="ppi_module()")], capture_output=True, text=True)
    assert plain.stdout.strip() == "False"  # ppi_py itself sets a global "ignore" filter
    assert ours.stdout.strip() == "True", ours.stderr
