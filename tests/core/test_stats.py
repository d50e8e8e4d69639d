"""The comparison and power statistics (framebench.scoring.stats) on hand-computed examples,
cross-checked against scipy and statsmodels (docs/statistics.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from framebench.scoring import stats


def test_paired_difference_of_a_constant_shift_has_a_zero_width_interval():
    """Both models resampled by the same contexts: a shift of 0.1 in every context is exactly
    0.1 in every resample, however much the contexts differ."""
    a = np.array([0.2, 0.9, 0.5, 0.0, 1.0])
    d = stats.paired_difference(a, a - 0.1, "k", n_resamples=500)
    assert d.n == 5
    assert d.estimate == pytest.approx(0.1)
    assert d.low == pytest.approx(0.1) and d.high == pytest.approx(0.1)


def test_paired_difference_matches_the_exact_bootstrap_distribution_on_four_contexts():
    """d = (0, 0, 0, 1): a resample's mean is K/4 with K ~ Bin(4, 1/4), so P(K <= 2) = 0.949 and
    P(K <= 3) = 0.996: the 2.5 % quantile is 0 and the 97.5 % quantile is 3/4."""
    d = stats.paired_difference([1, 1, 1, 1], [1, 1, 1, 0], "four", n_resamples=20000)
    assert d.estimate == pytest.approx(0.25)
    assert (d.low, d.high) == (0.0, 0.75)


def test_paired_difference_skips_contexts_missing_in_either_model():
    d = stats.paired_difference([1.0, np.nan, 0.5], [0.0, 0.3, np.nan], "nan", n_resamples=100)
    assert d.n == 1 and d.estimate == 1.0
    assert stats.paired_difference([np.nan], [1.0], "none") == stats.Difference(None, None, None, 0)


def test_paired_difference_agrees_with_scipy_paired_bootstrap():
    from scipy.stats import bootstrap

    rng = np.random.default_rng(3)
    a = rng.random(60)
    b = np.clip(a - 0.05 + 0.1 * rng.standard_normal(60), 0, 1)
    ours = stats.paired_difference(a, b, "scipy", n_resamples=20000)
    ref = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis), paired=True,
                    n_resamples=20000, method="percentile", rng=np.random.default_rng(0))
    assert ours.estimate == pytest.approx(float(np.mean(a - b)))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.004)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.004)
    # pairing matters: the unpaired interval of the same difference is several times wider
    unpaired = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                         n_resamples=4000, method="percentile", rng=np.random.default_rng(0))
    ci = unpaired.confidence_interval
    assert (ci.high - ci.low) > 3 * (ours.high - ours.low)


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


def test_wilson_at_the_boundaries_by_hand_and_against_scipy():
    from scipy.stats import binomtest

    z2 = 1.959963984540054 ** 2
    assert stats.wilson(0, 4) == pytest.approx([0.0, z2 / (4 + z2)])  # 0.4899, not (0, 0)
    assert stats.wilson(0, 4)[0] == 0.0 and stats.wilson(4, 4)[1] == 1.0  # exact bounds
    assert stats.wilson(4, 4) == pytest.approx([4 / (4 + z2), 1.0])
    assert stats.wilson(0, 0) is None
    for k, n in ((3, 10), (1, 94), (200, 200), (57, 120)):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert stats.wilson(k, n) == pytest.approx([ci.low, ci.high], abs=1e-12)


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


@pytest.mark.parametrize("n", [1, 7, 64, 65, 300])
def test_resample_dot_is_the_count_matrix_product_bit_for_bit(n):
    """Built 64 resamples at a time, the resampled sums are those of the whole count matrix
    (same draws, same einsum per row), so the bootstrap intervals do not move."""
    from framebench.scoring.bootstrap import resample_counts, resample_dot

    values = np.random.default_rng(n).random((n, 3))
    counts = resample_counts(n, 130, np.random.default_rng(1)).astype(float)
    assert np.array_equal(resample_dot(values, 130, np.random.default_rng(1)),
                          np.einsum("rc,cm->rm", counts, values))
    column = np.ascontiguousarray(values[:, 0])
    assert np.array_equal(resample_dot(column, 130, np.random.default_rng(1)),
                          np.einsum("rc,c->r", counts, column))


def test_wilson_many_is_wilson_of_each_pair():
    counts, ns = [0, 3, 5, 0, 17, 1000], [0, 10, 5, 4, 40, 1000]
    assert stats.wilson_many(counts, ns) == [stats.wilson(c, n) for c, n in zip(counts, ns, strict=True)]
    assert stats.wilson_many([], []) == []
