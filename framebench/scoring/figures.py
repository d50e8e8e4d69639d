"""Report figures (matplotlib, Agg): in the spirit of FramingQA Figures 3 and 4 and OMIT Figure 4.

Every function takes a section of the report dict (fractions) and returns a matplotlib Figure, or
None when there is nothing to draw. ``png_base64`` turns a figure into an inline image payload.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
# labels are model names and data: never parse them as mathtext ("$\\undefined$" must not crash)
matplotlib.rcParams["text.parse_math"] = False

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

DIRECTION_COLORS = {"neutral": "#9e9e9e", "correct": "#2e7d32", "incorrect": "#c62828",
                    "all": "#1565c0"}
LABEL_MAX = 28


def png_base64(fig: Figure, dpi: int = 100) -> str:
    """The figure as base64-encoded PNG (for a ``data:image/png;base64,`` URI); closes it."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi)  # layout is tight already; "tight" redraws
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plain_label(text: str, limit: int = LABEL_MAX) -> str:
    """A model or label name shortened from the left (mathtext is off for every figure text)."""
    text = str(text)
    if len(text) > limit and "/" in text:  # a backend spec: keep the scheme and the last name
        scheme = text.split(":", 1)[0] + ":" if ":" in text.split("/", 1)[0] else ""
        text = f"{scheme}…/{text.rstrip('/').rsplit('/', 1)[-1]}"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def as_value(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def ci_error(value: float, ci: Any) -> tuple[float, float]:
    """Asymmetric error-bar lengths from an interval; zero when unknown."""
    if not isinstance(ci, list | tuple) or len(ci) != 2 or np.isnan(value):
        return 0.0, 0.0
    lo, hi = as_value(ci[0]), as_value(ci[1])
    if np.isnan(lo) or np.isnan(hi):
        return 0.0, 0.0
    return max(value - lo, 0.0), max(hi - value, 0.0)


def grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]],
                  errors: Mapping[str, Any] | None = None,
                  colors: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """Bars for each series side by side within each group; returns each series' x positions."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    positions = {}
    n_bars = len(groups) * max(len(series), 1)
    label_size = 8 if n_bars <= 12 else 7 if n_bars <= 24 else 6
    for i, (name, values) in enumerate(series.items()):
        pos = x - 0.4 + width * (i + 0.5)
        yerr = None if errors is None else errors.get(name)
        heights = np.asarray(values, dtype=float) * 100
        ax.bar(pos, np.nan_to_num(heights), width, label=name,
               yerr=None if yerr is None else np.asarray(yerr, dtype=float) * 100,
               color=(colors or {}).get(name), capsize=2, error_kw={"elinewidth": 0.8})
        label_bars(ax, pos, heights, label_size)
        positions[name] = pos
    ax.set_xticks(x, [plain_label(g) for g in groups], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 125)  # headroom above 100 % for the legend
    ax.set_yticks(range(0, 101, 25))
    ax.grid(axis="y", alpha=0.3)
    return positions


def label_bars(ax: Any, positions: np.ndarray, heights: np.ndarray, size: int) -> None:
    """Write each bar's value (percent) just above the bar's own top, so a bar of 0 reads "0" (not
    the top of its interval's whisker) and a missing value reads "n/a" instead of both drawing
    nothing; a white backing keeps the value legible over the whisker."""
    for x, h in zip(positions, heights, strict=True):
        text, y = ("n/a", 1.0) if np.isnan(h) else (f"{h:.0f}", h + 1.0)
        ax.text(x, y, text, ha="center", va="bottom", fontsize=size,
                rotation=90 if size < 8 else 0, color="#555" if text == "n/a" else "black",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.6})
