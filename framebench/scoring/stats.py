"""Statistics for comparisons and power, with no suite knowledge (docs/statistics.md).

* :func:`paired_difference`: the mean over contexts of per-context differences between two models
  scored on the same contexts, with a *paired* cluster-bootstrap interval (one resample of
  contexts, applied to both models).
* :func:`mcnemar_exact`: the exact two-sided McNemar test on paired 0/1 indicators.
* :func:`holm`: Holm's step-down adjustment of a family of p-values.
* :func:`wilson`: the Wilson score interval of a proportion (sane at 0 and 1); :func:`wilson_many`
  of many at once.
* :func:`clustered_se`, :func:`mde`: the standard error of a mean over contexts (the context is
  the cluster) and the minimum detectable effect at a power and level (Miller 2024, arXiv
  2411.00640).

Arrays are per-context values; NaN marks a context without a value (left out, as in the
bootstrap module).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from framebench.scoring.bootstrap import N_RESAMPLES, SEED, resample_dot

ALPHA = 0.05
POWER = 0.80


@dataclass(frozen=True)
class Difference:
    """A paired difference ``a - b``: its estimate, percentile interval and contexts used."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int

    def interval(self) -> list[float] | None:
        return None if self.low is None or self.high is None else [self.low, self.high]


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(key.encode())])


def paired_difference(a: Sequence[float], b: Sequence[float], key: str,
                      n_resamples: int = N_RESAMPLES, level: float = 0.95) -> Difference:
    """Mean over contexts of ``a[c] - b[c]`` (contexts where both are finite) and its paired
    percentile cluster-bootstrap interval: each resample draws contexts with replacement once and
    takes both models' values of the drawn contexts. ``key`` seeds the resampling."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[np.isfinite(d)]
    n = len(d)
    if n == 0:
        return Difference(None, None, None, 0)
    means = resample_dot(d, n_resamples, _rng(key)) / n
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Difference(float(d.mean()), float(low), float(high), n)


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


def wilson(count: float, n: float, level: float = 0.95) -> list[float] | None:
    """Wilson score interval ``[low, high]`` of ``count / n`` (statsmodels
    ``proportion_confint(method="wilson")``), clipped to [0, 1]; None when ``n`` is 0."""
    from statsmodels.stats.proportion import proportion_confint

    if not n:
        return None
    low, high = proportion_confint(count, n, alpha=1.0 - level, method="wilson")
    # statsmodels returns about 1e-18 (not 0) at count 0: the bound is 0
    low = 0.0 if low < 1e-12 else min(float(low), 1.0)
    high = 1.0 if high > 1 - 1e-12 else max(float(high), 0.0)
    return [low, high]


def wilson_many(counts: Sequence[float], ns: Sequence[int], level: float = 0.95) -> list[list[float] | None]:
    """:func:`wilson` of each (count, n) pair, in one vectorised ``proportion_confint`` call (the
    same elementwise arithmetic, so the same bounds)."""
    from statsmodels.stats.proportion import proportion_confint

    counts_a, ns_a = np.asarray(counts, dtype=float), np.asarray(ns, dtype=np.int64)
    out: list[list[float] | None] = [None] * len(ns_a)
    present = np.flatnonzero(ns_a != 0)
    if not len(present):
        return out
    lows, highs = proportion_confint(counts_a[present], ns_a[present], alpha=1.0 - level, method="wilson")
    for i, low, high in zip(present.tolist(), lows.tolist(), highs.tolist(), strict=True):
        out[i] = [0.0 if low < 1e-12 else min(low, 1.0), 1.0 if high > 1 - 1e-12 else max(high, 0.0)]
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
