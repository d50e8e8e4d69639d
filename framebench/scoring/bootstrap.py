"""Cluster bootstrap over contexts: percentile intervals for context-level means, vectorized.

A metric here is the mean of per-context values, with NaN marking a context that has no rows of
the metric's set (it is left out of that metric's mean, in every resample as in the estimate).
Resampling contexts with replacement is drawn as a count matrix W (resamples x contexts), so one
matrix product gives every resample of every metric at once.
"""

from __future__ import annotations

import zlib

import numpy as np

SEED = 20261129
N_RESAMPLES = 2000


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of ``n`` contexts is drawn in each resample (rows sum to ``n``)."""
    draws = rng.integers(0, n, size=(n_resamples, n))
    draws += np.arange(n_resamples)[:, None] * n  # a separate bin range per resample
    return np.bincount(draws.ravel(), minlength=n_resamples * n).reshape(n_resamples, n)


BLOCK = 64  # resamples whose count rows are built at a time: a block stays in cache


def resample_dot(values: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resample_counts(n, n_resamples, rng) @ values`` (resamples x metrics, or x 1 dims
    dropped as ``values``'s) for ``values`` of ``n`` rows: the same draws and the same einsum row
    by row, but the count matrix built ``BLOCK`` resamples at a time instead of whole."""
    n = values.shape[0]
    draws = rng.integers(0, n, size=(n_resamples, n))  # one call: the stream of resample_counts
    spec = "rc,c->r" if values.ndim == 1 else "rc,cm->rm"
    out = np.empty((n_resamples, *values.shape[1:]))
    offsets = np.arange(BLOCK)[:, None] * n  # a separate bin range per resample of a block
    for start in range(0, n_resamples, BLOCK):
        block = draws[start:start + BLOCK]
        k = len(block)
        counts = np.bincount((block + offsets[:k]).ravel(), minlength=k * n).reshape(k, n)
        # einsum, not BLAS matmul: on a busy machine BLAS threads made these small products 15x slower
        out[start:start + k] = np.einsum(spec, counts.astype(float), values)
    return out


def resample_sums(values: np.ndarray, key: str,
                  n_resamples: int = N_RESAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Per resample and metric: the sum of the drawn contexts' finite values, and their number.

    ``values`` is contexts x metrics (NaN = the context has no rows of that metric's set).
    ``key`` names the group (e.g. ``model|task|format``) and seeds its random stream, so a
    report is reproducible and groups draw independently. Both results are resamples x metrics.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    n, m = values.shape
    if n == 0:
        return np.zeros((n_resamples, m)), np.zeros((n_resamples, m))
    rng = np.random.default_rng([SEED, zlib.crc32(key.encode())])
    finite = np.isfinite(values)
    stacked = np.hstack([np.where(finite, values, 0.0), finite.astype(float)])
    both = resample_dot(stacked, n_resamples, rng)
    return both[:, :m], both[:, m:]


def percentile_interval(sums: np.ndarray, counts: np.ndarray, level: float = 0.95) -> np.ndarray:
    """metrics x 2 (lo, hi) percentile interval of the resampled means ``sums / counts``;
    NaN bounds for a metric no resample has a value for."""
    with np.errstate(invalid="ignore", divide="ignore"):
        estimates = sums / counts  # a resample that drew no context of a set gives NaN
    alpha = (1.0 - level) / 2.0
    out = np.full((sums.shape[1], 2), np.nan)
    usable = (counts > 0).any(axis=0)
    if usable.any():
        out[usable] = np.nanquantile(estimates[:, usable], [alpha, 1.0 - alpha], axis=0).T
    return out


def cluster_ci(values: np.ndarray, key: str, n_resamples: int = N_RESAMPLES,
               level: float = 0.95) -> np.ndarray:
    """Percentile interval (metrics x 2) of the NaN-skipping mean of each column of ``values``,
    resampling its rows (contexts) with replacement."""
    return percentile_interval(*resample_sums(values, key, n_resamples), level=level)
