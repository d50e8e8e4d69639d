"""The report's intervals and the comparison and power statistics (framebench.scoring.stats) on
hand-computed examples, cross-checked against scipy and statsmodels or a brute-force search
(docs/statistics.md; their coverage: tests/core/test_coverage.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from framebench.scoring import stats


def test_paired_difference_of_a_constant_shift_has_a_zero_width_interval():
    """A shift of 0.1 in every context is exactly 0.1, however much the contexts differ: the
    per-context differences have no spread."""
    a = np.array([0.2, 0.9, 0.5, 0.0, 1.0])
    d = stats.paired_difference(a, a - 0.1)
    assert d.n == 5 and d.method == stats.PAIRED_T
    assert d.estimate == pytest.approx(0.1)
    assert d.low == pytest.approx(0.1) and d.high == pytest.approx(0.1)


def test_paired_difference_is_the_t_interval_of_the_differences():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(3)
    a = rng.random(12)
    b = np.clip(a - 0.05 + 0.1 * rng.standard_normal(12), 0, 1)
    ours = stats.paired_difference(a, b)
    ref = ttest_rel(a, b).confidence_interval(0.95)
    assert ours.estimate == pytest.approx(float(np.mean(a - b)))
    assert [ours.low, ours.high] == pytest.approx([ref.low, ref.high], abs=1e-12)
    # four contexts: d = (0.1, 0.3, 0.2, 0.2), mean 0.2, s = sqrt(0.02 / 3), t(3) = 3.182446
    four = stats.paired_difference([0.5, 0.6, 0.4, 0.7], [0.4, 0.3, 0.2, 0.5])
    half = 3.182446305284263 * math.sqrt(0.02 / 3) / 2
    assert [four.low, four.high] == pytest.approx([0.2 - half, 0.2 + half])
    assert stats.paired_difference([0.5, 0.6, 0.4], [0.4, 0.3, 0.2]).interval() is None  # 3 < 4


def test_paired_difference_skips_contexts_missing_in_either_model():
    d = stats.paired_difference([1.0, np.nan, 0.5], [0.0, 0.3, np.nan])
    assert d.n == 1 and d.estimate == 1.0 and d.interval() is None
    assert stats.paired_difference([np.nan], [1.0]) == stats.Difference(None, None, None, 0)


def _tango_by_search(b: int, c: int, n: int) -> list[float]:
    """Tango's interval by brute force: for each δ on a fine grid, the restricted maximum
    likelihood of P(B only) found numerically, then the δ whose score statistic is within ±z."""
    from scipy.optimize import minimize_scalar

    def z_of(delta: float) -> float:
        lo, hi = max(0.0, -delta), (1 - delta) / 2  # keep every cell's p in [0, 1]

        def minus_loglik(q: float) -> float:
            cells = [(b, q + delta), (c, q), (n - b - c, 1 - 2 * q - delta)]
            return -sum(k * math.log(max(p, 1e-300)) for k, p in cells if k)

        q = minimize_scalar(minus_loglik, bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-12}).x
        return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))

    grid = np.linspace(-0.999, 0.999, 1999)
    inside = [d for d in grid if abs(z_of(d)) <= 1.959963984540054]
    return [min(inside), max(inside)]


@pytest.mark.parametrize(("b", "c", "n"), [(12, 3, 24), (2, 0, 10), (0, 0, 15), (5, 9, 40), (1, 6, 21)])
def test_tango_interval_against_a_brute_force_search(b, c, n):
    assert stats.tango_interval(b, c, n) == pytest.approx(_tango_by_search(b, c, n), abs=1.1e-3)


def test_paired_difference_of_0_1_values_is_tangos_from_ten_contexts():
    a = [1] * 7 + [0] * 3 + [1, 1, 0]
    b = [1] * 5 + [0] * 2 + [0] * 3 + [1, 1, 1]  # 1 under A only in 2 contexts, under B only in 1
    d = stats.paired_difference(a, b)
    assert d.method == stats.PAIRED_SCORE and d.n == 13
    assert d.estimate == pytest.approx(1 / 13)
    assert d.interval() == pytest.approx(stats.tango_interval(2, 1, 13))
    assert stats.paired_difference(a[:9], b[:9]).interval() is None  # 9 < 10


def test_mean_interval_is_students_t():
    from scipy.stats import t

    x = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.6])
    ref = t.interval(0.95, len(x) - 1, loc=x.mean(), scale=x.std(ddof=1) / math.sqrt(len(x)))
    assert stats.mean_interval(x) == pytest.approx(list(ref))
    assert stats.mean_interval(x[:3]) is None  # fewer than 4 contexts
    assert stats.mean_interval([0.5] * 6) == pytest.approx([0.5, 0.5])  # no spread
    assert stats.mean_interval([0.0, 0.0, 0.1, 0.0], bounds=(0.0, 1.0))[0] == 0.0  # clipped


def test_stratified_mean_interval_by_hand():
    """Two tasks of 3 contexts: SE² = Σ n_t s_t² / N², df by Welch-Satterthwaite."""
    from scipy.stats import t

    x = [0.1, 0.2, 0.3, 0.6, 0.9, 0.6]
    tasks = ["a"] * 3 + ["b"] * 3
    s2 = [np.var(x[:3], ddof=1), np.var(x[3:], ddof=1)]  # 0.01, 0.03
    parts = [3 * v / 36 for v in s2]
    se, df = math.sqrt(sum(parts)), sum(parts) ** 2 / sum(p**2 / 2 for p in parts)
    half = t.ppf(0.975, df) * se
    assert stats.mean_interval(x, tasks) == pytest.approx([np.mean(x) - half, np.mean(x) + half])
    # the task difference is not noise: the stratified interval is narrower than the plain one
    plain = stats.mean_interval(x)
    assert plain[1] - plain[0] > 2 * half
    frame = pd.DataFrame({"g": "g", "task": tasks, "v": x})
    grouped = stats.grouped_mean_intervals(frame, ["g"], "v", "task")
    assert [grouped["low"].iloc[0], grouped["high"].iloc[0]] == pytest.approx(stats.mean_interval(x, tasks))


def test_mcnemar_exact_by_hand_and_against_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar

    # 12 contexts right under A only, 3 under B only, 5 both, 4 neither:
    # p = 2 * P(Bin(15, 1/2) <= 3) = 2 * (1 + 15 + 105 + 455) / 2**15 = 0.03515625
    a = [1] * 12 + [0] * 3 + [1] * 5 + [0] * 4
    b = [0] * 12 + [1] * 3 + [1] * 5 + [0] * 4
    test = stats.mcnemar_exact(a, b)
    assert (test.b, test.c) == (12, 3)
    assert test.p == pytest.approx(2 * 576 / 2**15)
    assert stats.mcnemar_exact([1, 0], [1, 0]).p == 1.0  # no discordant pair
    assert stats.mcnemar_exact([1] * 5, [0] * 5).p == pytest.approx(2 / 32)
    rng = np.random.default_rng(1)
    for _ in range(30):
        x, y = rng.random(25) < 0.6, rng.random(25) < 0.4
        table = [[int((x & y).sum()), int((x & ~y).sum())], [int((~x & y).sum()), int((~x & ~y).sum())]]
        assert stats.mcnemar_exact(x, y).p == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, None, 0.02]) == [pytest.approx(0.5), None, pytest.approx(0.04)]
    assert stats.holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert stats.holm([]) == []


def test_proportion_interval_is_wilson_from_ten_contexts_by_hand_and_against_scipy():
    from scipy.stats import binomtest

    z2 = 1.959963984540054 ** 2
    assert stats.proportion_interval(0, 10) == pytest.approx([0.0, z2 / (10 + z2)])  # not (0, 0)
    assert stats.proportion_interval(0, 10)[0] == 0.0 and stats.proportion_interval(10, 10)[1] == 1.0
    assert stats.proportion_interval(10, 10) == pytest.approx([10 / (10 + z2), 1.0])
    assert stats.proportion_interval(3, 9) is None and stats.proportion_interval(0, 0) is None
    for k, n in ((3, 10), (4, 94), (57, 120), (196, 200)):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert stats.proportion_interval(k, n) == pytest.approx([ci.low, ci.high], abs=1e-12)


def test_proportion_interval_near_0_and_1_uses_the_poisson_bound():
    """Brown, Cai & DasGupta: 1 or 2 of n <= 50 (3 of n > 50) -> lower bound χ²(0.05; 2k) / 2n =
    0.0513 / n, 0.3554 / n, 0.8177 / n; the same for the upper bound that few from n."""
    from scipy.stats import binomtest

    assert stats.proportion_interval(1, 20)[0] == pytest.approx(-math.log(0.95) / 20)
    assert stats.proportion_interval(2, 40)[0] == pytest.approx(0.355362 / 40, rel=1e-5)
    assert stats.proportion_interval(3, 60)[0] == pytest.approx(0.817691 / 60, rel=1e-5)
    assert stats.proportion_interval(19, 20)[1] == pytest.approx(1 + math.log(0.95) / 20)
    wilson = binomtest(3, 40).proportion_ci(method="wilson")  # 3 of 40: Wilson's own
    assert stats.proportion_interval(3, 40) == pytest.approx([wilson.low, wilson.high])
    upper = binomtest(1, 20).proportion_ci(method="wilson").high  # the far bound stays Wilson's
    assert stats.proportion_interval(1, 20)[1] == pytest.approx(upper)


def _stratified_by_search(counts: list[int], ns: list[int]) -> list[float]:
    """The stratified score interval by brute force: for each pooled rate θ on a grid, the strata's
    rates maximising the likelihood subject to Σ n_t p_t / N = θ, found by scipy's constrained
    optimiser, and the θ whose score statistic is within ±z."""
    from scipy.optimize import minimize

    k, n = np.array(counts, float), np.array(ns, float)
    total, pooled = n.sum(), k.sum() / n.sum()

    def z_of(theta: float) -> float:
        def minus_loglik(p):
            p = np.clip(p, 1e-12, 1 - 1e-12)
            return -float((k * np.log(p) + (n - k) * np.log(1 - p)).sum())

        start = np.clip(k / n + theta - pooled, 0.001, 0.999)
        found = minimize(minus_loglik, start, method="SLSQP", bounds=[(1e-9, 1 - 1e-9)] * len(k),
                         constraints={"type": "eq", "fun": lambda p: (n * p).sum() / total - theta},
                         options={"ftol": 1e-14, "maxiter": 500})
        p = found.x
        return (pooled - theta) / (math.sqrt((n * p * (1 - p)).sum()) / total)

    grid = np.linspace(0.005, 0.995, 991)
    inside = [theta for theta in grid if abs(z_of(theta)) <= 1.959963984540054]
    return [min(inside), max(inside)]


@pytest.mark.parametrize(("counts", "ns"), [([4, 1], [6, 6]), ([10, 3, 7], [20, 25, 15]),
                                            ([12, 12], [20, 20])])
def test_stratified_proportion_interval_against_a_brute_force_search(counts, ns):
    ours = stats.stratified_proportion_intervals([counts], [ns])[0]
    assert ours == pytest.approx(_stratified_by_search(counts, ns), abs=1.5e-3)


def test_stratified_proportion_interval_of_one_stratum_or_equal_rates_is_wilson():
    from statsmodels.stats.proportion import proportion_confint

    assert stats.stratified_proportion_intervals([[7]], [[23]])[0] == pytest.approx(
        list(proportion_confint(7, 23, method="wilson")), abs=1e-12)
    # equal rates in every stratum: the restricted rates are equal, so Wilson's of the total
    assert stats.stratified_proportion_intervals([[5, 5]], [[20, 20]])[0] == pytest.approx(
        list(proportion_confint(10, 40, method="wilson")), abs=1e-9)


def test_share_interval_counts_each_strata_sum():
    values = [1.0, 0.0, 1 / 3, np.nan, 1.0, 1.0, 2 / 3, 0.0, 0.0, 1.0, 0.0, 1.0]
    tasks = ["a"] * 6 + ["b"] * 6
    k = [1 + 1 / 3 + 1 + 1, 2 / 3 + 1 + 1]
    assert stats.share_interval(values, tasks) == pytest.approx(
        stats.stratified_proportion_intervals([k], [[5, 6]])[0])
    assert stats.share_interval(values) == pytest.approx(stats.proportion_interval(sum(k), 11))


def test_mde_from_a_given_standard_error():
    assert stats.z_sum() == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    assert stats.mde(0.05) == pytest.approx(0.05 * 2.801585, abs=1e-6)
    assert stats.mde(None) is None
    assert stats.mde(0.0) is None  # no variation between contexts: nothing to plan from
    # per-context values 0, 1, 0, 1: s = sqrt(1/3), SE = s / 2 = 0.288675
    assert stats.clustered_se([0, 1, 0, 1]) == pytest.approx(math.sqrt(1 / 3) / 2)
    assert stats.clustered_se([0.4]) is None
    # 16 contexts instead of 4: SE halves
    assert stats.planned_se([0, 1, 0, 1], 16) == pytest.approx(math.sqrt(1 / 3) / 4)


def test_proportion_intervals_is_proportion_interval_of_each_pair():
    counts, ns = [0, 3, 5, 0, 17, 1000, 1], [0, 10, 5, 4, 40, 1000, 60]
    assert stats.proportion_intervals(counts, ns) == [stats.proportion_interval(c, n)
                                                      for c, n in zip(counts, ns, strict=True)]
