"""Every interval the report prints, and the comparison and power statistics; no suite
knowledge (docs/statistics.md).

The unit is the context (a FramingQA context, an OMIT scenario, an embodied episode): a statistic
is the mean over contexts of per-context values, so the context is the cluster and averaging a
context's questions first keeps their correlation inside its value. The intervals, each checked
for 95 % coverage by simulation at 4, 16 and 100 contexts per task (tests/core/test_coverage.py):

* :func:`mean_interval`: a mean over contexts, the t interval ``mean ± t(df) · SE``. ``SE = s / √C``
  and ``df = C - 1`` over C contexts; with ``strata`` (contexts pooled over fixed tasks) the
  stratified ``SE² = Σ n_t s_t² / C²`` with Welch-Satterthwaite's df. None below
  ``MIN_CONTEXTS`` contexts.
* :func:`proportion_interval`: a share of contexts scoring 1 (strict metrics), Wilson's score
  interval with Brown, Cai & DasGupta's modification near 0 and 1. None below
  ``MIN_CONTEXTS_BINARY`` contexts: with fewer, no interval of a binomial rate keeps its coverage
  near 95 % (docs/statistics.md "Small samples").
* :func:`paired_difference`: the mean over shared contexts of ``a - b``: Tango's score interval when
  both are 0/1 per context (from ``MIN_CONTEXTS_BINARY`` contexts), otherwise the t interval of
  the differences (from ``MIN_CONTEXTS``).

Also :func:`mcnemar_exact`, :func:`holm`, and :func:`clustered_se` / :func:`mde` for planning
(Miller 2024, arXiv 2411.00640). Arrays are per-context values; NaN marks a context without a
value (left out).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

ALPHA = 0.05
POWER = 0.80
LEVEL = 0.95  # every interval of the report
MIN_CONTEXTS = 4  # a mean's interval needs this many contexts (the smallest size the coverage test checks)
MIN_CONTEXTS_BINARY = 10  # a 0/1 measure's interval (Wilson, Tango) needs this many
SMALL_N = 30  # contexts (episodes, pairs) below which the tables flag a row as a small sample

Bounds = tuple[float, float]


def small_sample(n: int | None) -> bool:
    """Whether ``n`` contexts are flagged as a small sample (the tables' †)."""
    return n is not None and n < SMALL_N


def t_quantile(df: float | np.ndarray) -> float | np.ndarray:
    """The two-sided ``LEVEL`` quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.stats import t

    return t.ppf(0.5 + LEVEL / 2.0, df)


@dataclass(frozen=True)
class MeanSE:
    """A mean over contexts with its standard error and degrees of freedom."""

    estimate: float
    se: float
    df: float
    n: int


def _finite(values: Sequence[float], strata: Sequence[object] | None) -> tuple[np.ndarray, np.ndarray | None]:
    v = np.asarray(values, dtype=float)
    keep = np.isfinite(v)
    return v[keep], None if strata is None else np.asarray(strata, dtype=object)[keep]


def _stratified_se(n: float, counts: np.ndarray, variances: np.ndarray) -> tuple[float, float]:
    """(SE, df) of a mean of ``n`` values pooled over fixed strata of ``counts`` values with
    sample variances ``variances``: ``SE² = Σ n_t s_t² / n²`` (each stratum's share squared times
    its mean's variance) and Welch-Satterthwaite's ``df = SE⁴ / Σ (n_t s_t² / n²)² / (n_t - 1)``."""
    parts = counts * variances / n**2
    se2 = float(parts.sum())
    if se2 <= 0:
        return 0.0, float(n - len(counts))
    return math.sqrt(se2), se2**2 / float((parts**2 / (counts - 1)).sum())


def mean_se(values: Sequence[float], strata: Sequence[object] | None = None) -> MeanSE | None:
    """The mean of the finite ``values`` (one per context), its SE and df; ``strata`` (one label
    per value, e.g. each context's task) makes it the stratified SE of a mean pooled over fixed
    strata (:func:`_stratified_se`), unless there is one stratum or a stratum has a single context
    (its variance is unknown; then the plain ``s / √n`` with ``n - 1`` df). None without a value."""
    v, s = _finite(values, strata)
    n = len(v)
    if n == 0:
        return None
    if n < 2:
        return MeanSE(float(v.mean()), math.nan, math.nan, n)
    se, df = float(v.std(ddof=1)) / math.sqrt(n), float(n - 1)
    if s is not None:
        _, codes = np.unique(s.astype(str), return_inverse=True)
        counts = np.bincount(codes)
        if len(counts) >= 2 and counts.min() >= 2:
            means = np.bincount(codes, weights=v) / counts
            variances = np.bincount(codes, weights=(v - means[codes]) ** 2) / (counts - 1)
            se, df = _stratified_se(n, counts, variances)
    return MeanSE(float(v.mean()), se, df, n)


def t_bounds(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, n: np.ndarray,
             bounds: Bounds | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of ``estimate ± t(df) · se``, elementwise: NaN where ``n`` is below
    ``MIN_CONTEXTS``, zero width where ``se`` is 0, clipped to ``bounds`` when given."""
    estimate, se, df, n = (np.asarray(x, dtype=float) for x in (estimate, se, df, n))
    enough = n >= MIN_CONTEXTS
    half = np.full(estimate.shape, np.nan)
    with np.errstate(invalid="ignore"):
        half[enough] = np.where(se[enough] > 0, t_quantile(np.where(se[enough] > 0, df[enough], 1.0))
                                * se[enough], 0.0)
    low, high = estimate - half, estimate + half
    if bounds is not None:
        low, high = np.maximum(low, bounds[0]), np.minimum(high, bounds[1])
    return low, high


def mean_interval(values: Sequence[float], strata: Sequence[object] | None = None,
                  bounds: Bounds | None = None) -> list[float] | None:
    """``[low, high]``: the ``LEVEL`` t interval of the mean over contexts (:func:`mean_se`),
    clipped to ``bounds`` (the measure's range) when given; None for fewer than ``MIN_CONTEXTS``
    contexts. Contexts that all have the same value give a zero-width interval."""
    m = mean_se(values, strata)
    if m is None or m.n < MIN_CONTEXTS:
        return None
    low, high = t_bounds(np.array([m.estimate]), np.array([m.se]), np.array([m.df]), np.array([m.n]), bounds)
    return [float(low[0]), float(high[0])]


def grouped_mean_intervals(frame: pd.DataFrame, by: list[str], column: str, stratum: str | None = None,
                           bounds: Bounds | None = None, se_floor: pd.Series | None = None) -> pd.DataFrame:
    """:func:`mean_interval` of ``column`` within each group of ``by`` (``stratum``: a column of
    each context's stratum), for many groups at once: a frame indexed by the groups with
    ``estimate``, ``low``, ``high`` (NaN: no interval) and ``n`` (contexts with a finite value;
    groups without one are left out). ``se_floor`` (indexed by the groups): the SE of a group
    whose contexts all have the same value, in place of 0 (:func:`binomial_se_floor`)."""
    rows = frame.loc[np.isfinite(frame[column].to_numpy(float))]
    grouped = rows.groupby(by, sort=True, observed=True)[column]
    out = pd.DataFrame({"estimate": grouped.mean(), "n": grouped.size()})
    out["se"] = np.sqrt(grouped.var(ddof=1) / out["n"])
    out["df"] = out["n"] - 1.0
    if stratum is not None:
        _stratify(out, rows.groupby([*by, stratum], sort=True, observed=True)[column], by)
    if se_floor is not None:  # only where every context has the same value (a sample SE of 0)
        out["se"] = out["se"].where(out["se"] > 0, se_floor.reindex(out.index).fillna(0.0))
    out["low"], out["high"] = t_bounds(out["estimate"], out["se"], out["df"], out["n"], bounds)
    return out[["estimate", "low", "high", "n"]]


def binomial_se_floor(frame: pd.DataFrame, by: list[str], shares: str, units: str,
                      scale: float = 1.0) -> pd.Series:
    """Per group of ``by``: the SE of a mean over C contexts of ``scale`` × a share of ``units``
    0/1 outcomes each, were the outcomes independent: ``scale · sqrt(p̃ (1 - p̃) Σ_c 1/m_c) / C``
    with Agresti and Coull's p̃ = (successes + 2) / (units + 4). A mean of such shares whose
    contexts happen to agree (every pair consistent in all of 16 contexts) has a sample SE of 0
    and a t interval of zero width; with this SE instead it keeps its level (docs/statistics.md)."""
    rows = frame.loc[np.isfinite(frame[shares].to_numpy(float)) & (frame[units] > 0)]
    grouped = rows.assign(_k=rows[shares] * rows[units], _inv=1.0 / rows[units]).groupby(by, sort=True, observed=True)
    k, m, inv, c = grouped["_k"].sum(), grouped[units].sum(), grouped["_inv"].sum(), grouped.size()
    p = (k + 2.0) / (m + 4.0)
    return scale * np.sqrt(p * (1.0 - p) * inv) / c


def _stratify(out: pd.DataFrame, grouped: pd.core.groupby.SeriesGroupBy, by: list[str]) -> None:
    """Replace ``out``'s SE and df by the stratified ones where every stratum of a group has 2 or
    more contexts and there are 2 or more strata (as :func:`mean_se`)."""
    parts = pd.DataFrame({"n_t": grouped.size(), "var_t": grouped.var(ddof=1)})
    level = list(range(len(by)))
    n = out["n"].reindex(parts.index.droplevel(-1)).to_numpy(float)
    parts["a"] = parts["n_t"] * parts["var_t"] / n**2
    parts["b"] = parts["a"] ** 2 / (parts["n_t"] - 1)
    per_group = parts.groupby(level=level).agg(k=("n_t", "size"), smallest=("n_t", "min"),
                                               se2=("a", "sum"), denominator=("b", "sum"))
    use = per_group[(per_group["k"] >= 2) & (per_group["smallest"] >= 2)]
    zero = use["se2"] <= 0
    out.loc[use.index, "se"] = np.sqrt(use["se2"])
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(zero, out.loc[use.index, "n"] - use["k"], use["se2"] ** 2 / use["denominator"])
    out.loc[use.index, "df"] = df


def grouped_share_intervals(frame: pd.DataFrame, by: list[str], column: str, stratum: str) -> pd.DataFrame:
    """:func:`stratified_proportion_intervals` of ``column`` (per-context 0/1 values or shares)
    within each group of ``by``, counted per ``stratum`` (a group holding one stratum gets
    Wilson's interval, one pooling several the stratified score interval), for many groups at
    once: a frame indexed by the groups with ``estimate``, ``low``, ``high`` (NaN: no interval)
    and ``n`` (contexts with a finite value; groups without one are left out)."""
    rows = frame.loc[np.isfinite(frame[column].to_numpy(float))]
    per = rows.groupby([*by, stratum], sort=True, observed=True)[column].agg(["sum", "size"])
    sums, ns = (per[c].unstack(stratum, fill_value=0) for c in ("sum", "size"))
    bounds = stratified_proportion_intervals(sums.to_numpy(float), ns.to_numpy(float))
    out = pd.DataFrame({"estimate": sums.sum(axis=1) / ns.sum(axis=1), "n": ns.sum(axis=1)}, index=sums.index)
    out["low"] = [np.nan if ci is None else ci[0] for ci in bounds]
    out["high"] = [np.nan if ci is None else ci[1] for ci in bounds]
    return out[["estimate", "low", "high", "n"]]


def _clip01(low: float, high: float) -> list[float]:
    # statsmodels returns about 1e-18 (not 0) at count 0: the bound is 0
    return [0.0 if low < 1e-12 else min(float(low), 1.0), 1.0 if high > 1 - 1e-12 else max(float(high), 0.0)]


def proportion_interval(count: float, n: int) -> list[float] | None:
    """``[low, high]``: the ``LEVEL`` interval of ``count / n`` for a share of ``n`` contexts
    scoring 1 (a context may contribute a share, e.g. of its distractors: the count is the sum):
    Wilson's score interval with Brown, Cai & DasGupta's (2001) boundary modification
    (:func:`_near_boundary`); None for fewer than ``MIN_CONTEXTS_BINARY`` contexts."""
    return proportion_intervals([count], [n])[0]


def proportion_intervals(counts: Sequence[float], ns: Sequence[int]) -> list[list[float] | None]:
    """:func:`proportion_interval` of each (count, n) pair, in one vectorised call."""
    return stratified_proportion_intervals(np.asarray(counts, dtype=float)[:, None],
                                           np.asarray(ns, dtype=float)[:, None])


def share_interval(values: Sequence[float], strata: Sequence[object] | None = None) -> list[float] | None:
    """:func:`stratified_proportion_intervals` of the finite per-context ``values`` (0/1 or
    shares) grouped by ``strata`` (one label per value; None: one stratum)."""
    v, s = _finite(values, strata)
    codes = np.zeros(len(v), dtype=np.int64) if s is None else np.unique(s.astype(str), return_inverse=True)[1]
    k = max(int(codes.max(initial=-1)) + 1, 1)
    counts = np.bincount(codes, weights=v, minlength=k)[None, :]
    return stratified_proportion_intervals(counts, np.bincount(codes, minlength=k)[None, :].astype(float))[0]


def stratified_proportion_intervals(counts: np.ndarray, ns: np.ndarray) -> list[list[float] | None]:
    """Per row of ``counts`` and ``ns`` (groups x strata: each stratum's count and contexts, 0
    contexts = absent): the interval of the pooled share ``Σ counts / Σ ns``, the score interval
    of a share pooled over fixed strata (:func:`_stratified_score`; with one stratum it is
    Wilson's), with the boundary modification; None below ``MIN_CONTEXTS_BINARY`` contexts."""
    counts, ns = np.atleast_2d(np.asarray(counts, dtype=float)), np.atleast_2d(np.asarray(ns, dtype=float))
    total = ns.sum(axis=1)
    out: list[list[float] | None] = [None] * len(total)
    present = np.flatnonzero(total >= MIN_CONTEXTS_BINARY)
    if not len(present):
        return out
    k, n = counts[present], ns[present]
    lows, highs = _stratified_score(k, n)
    _near_boundary(k.sum(axis=1), n.sum(axis=1), lows, highs)
    for i, low, high in zip(present.tolist(), lows.tolist(), highs.tolist(), strict=True):
        out[i] = _clip01(low, high)
    return out


def _restricted(rates: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The strata's rates p maximising the likelihood of the observed ``rates`` subject to the
    pooled rate being a given value: each solves ``rate - p = μ p (1 - p)`` (μ: the constraint's
    multiplier, one per group), the root in [0, 1]."""
    mu = mu[:, None]
    b = 1.0 + mu
    root = np.sqrt(np.maximum(b * b - 4.0 * mu * rates, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        # the conjugate form where 1 + μ > 0 (no cancellation as μ -> 0), the direct one elsewhere
        p = np.where(b > 0, 2.0 * rates / (b + root), (b - root) / (2.0 * mu))
    return np.clip(np.nan_to_num(p, nan=0.0), 0.0, 1.0)


def _stratified_score(counts: np.ndarray, ns: np.ndarray, steps: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per group: the pooled rates θ = Σ w_t p_t (w_t = n_t / N) that the score test
    does not reject, ``|p̂ - θ| <= z sqrt(Σ n_t p_t (1 - p_t)) / N`` with the p_t maximising the
    likelihood under θ. Walking the multiplier μ of :func:`_restricted` moves θ monotonically, so
    each bound is one bisection over μ = sinh(s) for every group at once. One stratum: Wilson."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + LEVEL / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(ns > 0, counts / ns, 0.0)
    total = ns.sum(axis=1)
    pooled = counts.sum(axis=1) / total

    def score(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = _restricted(rates, mu)
        theta = (ns * p).sum(axis=1) / total
        spread = np.sqrt((ns * p * (1.0 - p)).sum(axis=1)) / total
        gap = pooled - theta
        with np.errstate(invalid="ignore", divide="ignore"):
            return theta, np.where(spread > 0, gap / spread, np.where(gap == 0, 0.0, np.sign(gap) * np.inf))

    bounds = []
    for sign in (1.0, -1.0):  # μ > 0 lowers θ (the lower bound), μ < 0 raises it
        low_s, high_s = np.zeros(len(total)), np.full(len(total), 60.0)
        for _ in range(steps):
            mid = (low_s + high_s) / 2.0
            inside = sign * score(sign * np.sinh(mid))[1] < z
            low_s, high_s = np.where(inside, mid, low_s), np.where(inside, high_s, mid)
        bounds.append(score(sign * np.sinh(high_s))[0])
    low, high = bounds
    return np.where(pooled <= 0, 0.0, low), np.where(pooled >= 1, 1.0, high)


def _near_boundary(counts: np.ndarray, ns: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> None:
    """Brown, Cai & DasGupta's modified Wilson interval, in place: for 1 to 2 (n <= 50) or 3
    (n > 50) contexts scoring 1, the lower bound is the one-sided Poisson bound ``χ²(0.05; 2k) /
    2n`` (0.051, 0.355, 0.818 over n); likewise the upper bound for that few scoring 0. Wilson's
    own bound there excludes true rates below about 1/n too often: its coverage falls to 84 % at
    every n (docs/statistics.md "Coverage")."""
    from scipy.stats import chi2

    limit = np.where(ns <= 50, 2.0, 3.0)
    for count, bound, sign in ((counts, lows, 1.0), (ns - counts, highs, -1.0)):
        near = (count > 0) & (count <= limit)
        poisson = chi2.ppf(1.0 - LEVEL, 2.0 * count[near]) / 2.0 / ns[near]
        bound[near] = poisson if sign > 0 else 1.0 - poisson


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic for H0: p(A only) - p(B only) = ``delta``, with the restricted
    maximum-likelihood p(B only) (the root of ``2n q² + w q - c δ (1 - δ) = 0``)."""
    w = -b - c + (2 * n - b + c) * delta
    q = (math.sqrt(max(w * w + 8.0 * n * c * delta * (1.0 - delta), 0.0)) - w) / (4.0 * n)
    variance = n * (2.0 * q + delta * (1.0 - delta))
    numerator = b - c - n * delta
    if variance <= 0:
        return math.copysign(math.inf, numerator) if numerator else 0.0
    return numerator / math.sqrt(variance)


def tango_interval(b: int, c: int, n: int) -> list[float]:
    """Tango's (1998) ``LEVEL`` score interval of the difference of two paired proportions from
    ``b`` pairs scoring 1 under A only, ``c`` under B only, of ``n``: the differences δ that the
    score test does not reject (Fagerland, Lydersen & Laake 2014 recommend it)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + LEVEL / 2.0))
    estimate, edge = (b - c) / n, 1.0 - 1e-12

    def at(delta: float, target: float) -> float:
        return _tango_statistic(delta, b, c, n) - target

    low = -1.0 if c == n or at(-edge, z) <= 0 else brentq(at, -edge, estimate, args=(z,), xtol=1e-12)
    high = 1.0 if b == n or at(edge, -z) >= 0 else brentq(at, estimate, edge, args=(-z,), xtol=1e-12)
    return [float(low), float(high)]


def is_binary(values: np.ndarray) -> bool:
    """Whether every value is 0 or 1 (a per-context indicator)."""
    return bool(np.isin(values, (0.0, 1.0)).all())


PAIRED_T, PAIRED_SCORE = "t", "tango"  # a paired difference's interval: t over contexts, Tango's score


@dataclass(frozen=True)
class Difference:
    """A paired difference ``a - b``: its estimate, interval, contexts used and the interval's
    method (``PAIRED_T`` or ``PAIRED_SCORE``; the interval is None below the method's
    :func:`minimum_contexts`)."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str = PAIRED_T

    def interval(self) -> list[float] | None:
        return None if self.low is None or self.high is None else [self.low, self.high]


def paired_difference(a: Sequence[float], b: Sequence[float],
                      strata: Sequence[object] | None = None) -> Difference:
    """Mean over contexts of ``a[c] - b[c]`` (contexts where both are finite) and its ``LEVEL``
    interval: Tango's score interval when both are 0/1 per context (None below
    ``MIN_CONTEXTS_BINARY`` contexts), else :func:`mean_interval` of the differences (``strata``:
    each context's stratum, for a difference pooled over fixed tasks)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    n = len(x)
    if n == 0:
        return Difference(None, None, None, 0)
    estimate = float((x - y).mean())
    if is_binary(x) and is_binary(y):
        only_a, only_b = int((x > y).sum()), int((x < y).sum())
        ci = tango_interval(only_a, only_b, n) if n >= MIN_CONTEXTS_BINARY else None
        return Difference(estimate, *(ci or (None, None)), n, PAIRED_SCORE)
    ci = mean_interval(x - y, None if strata is None else np.asarray(strata, dtype=object)[both])
    return Difference(estimate, *(ci or (None, None)), n, PAIRED_T)


def minimum_contexts(method: str) -> int:
    """The contexts a paired difference's interval needs (``Difference.method``)."""
    return MIN_CONTEXTS_BINARY if method == PAIRED_SCORE else MIN_CONTEXTS


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test: ``b`` = pairs right under A only, ``c`` = right under B only."""

    b: int
    c: int
    p: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Two-sided exact McNemar test on paired 0/1 indicators (NaN pairs dropped):
    p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2); p = 1 without discordant pairs."""
    from scipy.stats import binom

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep].astype(bool), y[keep].astype(bool)
    only_a, only_b = int((x & ~y).sum()), int((~x & y).sum())
    n = only_a + only_b
    p = 1.0 if n == 0 else float(min(1.0, 2.0 * binom.cdf(min(only_a, only_b), n, 0.5)))
    return McNemar(only_a, only_b, p)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values (statsmodels ``multipletests(method="holm")``); None entries are
    not tests and stay None (they do not count towards the family size)."""
    from statsmodels.stats.multitest import multipletests

    present = [i for i, p in enumerate(pvalues) if p is not None and math.isfinite(p)]
    out: list[float | None] = [None] * len(pvalues)
    if present:
        adjusted = multipletests([pvalues[i] for i in present], alpha=ALPHA, method="holm")[1]
        for i, p in zip(present, adjusted, strict=True):
            out[i] = float(p)
    return out


def clustered_se(values: Sequence[float]) -> float | None:
    """Standard error of the mean over contexts of per-context ``values`` (the context is the
    cluster, so within-context correlation is already inside each value): s / sqrt(C), s the
    sample standard deviation (ddof 1) of the C finite values. None for fewer than 2."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return None
    return float(v.std(ddof=1) / math.sqrt(len(v)))


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1-alpha/2} + z_{power}: 1.95996 + 0.84162 = 2.80158 at the defaults."""
    from scipy.stats import norm

    return float(norm.ppf(1.0 - alpha / 2.0) + norm.ppf(power))


def mde(se: float | None, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Minimum detectable effect of a two-sided level-``alpha`` z-test with the given power:
    (z_{1-alpha/2} + z_{power}) * SE (Miller 2024, power analysis). None for an SE of 0: every
    context had the same value, so there is no variance to plan from (0 would promise that any
    effect is detectable)."""
    if se is None or not math.isfinite(se) or se <= 0:
        return None
    return z_sum(alpha, power) * se


def planned_se(values: Sequence[float], contexts: int) -> float | None:
    """The clustered SE a run with ``contexts`` contexts would have, from a pilot's per-context
    values: s / sqrt(N) with the pilot's s."""
    se = clustered_se(values)
    if se is None:
        return None
    n = int(np.isfinite(np.asarray(values, dtype=float)).sum())
    return se * math.sqrt(n / contexts)
