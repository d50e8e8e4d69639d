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

from framebench.scoring.markdown import SIGNIFICANCE  # noqa: E402
from framebench.scoring.view import FORMAT_NAMES, ordered, task_name, task_order  # noqa: E402
from framebench.vocabulary import LEVELS  # noqa: E402

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


def _value(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def _ci_error(value: float, ci: Any) -> tuple[float, float]:
    """Asymmetric error-bar lengths from an interval; zero when unknown."""
    if not isinstance(ci, list | tuple) or len(ci) != 2 or np.isnan(value):
        return 0.0, 0.0
    lo, hi = _value(ci[0]), _value(ci[1])
    if np.isnan(lo) or np.isnan(hi):
        return 0.0, 0.0
    return max(value - lo, 0.0), max(hi - value, 0.0)


def _grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]],
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
        upper = np.zeros(len(heights)) if yerr is None else np.nan_to_num(np.asarray(yerr, dtype=float)[-1] * 100)
        _label_bars(ax, pos, heights, label_size, upper)
        positions[name] = pos
    ax.set_xticks(x, [plain_label(g) for g in groups], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 125)  # headroom above 100 % for the legend
    ax.set_yticks(range(0, 101, 25))
    ax.grid(axis="y", alpha=0.3)
    return positions


def _label_bars(ax: Any, positions: np.ndarray, heights: np.ndarray, size: int,
                upper: np.ndarray | None = None) -> None:
    """Write each bar's value (percent) above it (and above its error bar), so a bar of 0 reads
    "0" and a missing value reads "n/a" instead of both drawing nothing."""
    upper = np.zeros(len(heights)) if upper is None else np.broadcast_to(upper, len(heights))
    for x, h, up in zip(positions, heights, upper, strict=True):
        text, y = ("n/a", 1.0) if np.isnan(h) else (f"{h:.0f}", h + up + 1.0)
        ax.text(x, y, text, ha="center", va="bottom", fontsize=size,
                rotation=90 if size < 8 else 0, color="#555" if text == "n/a" else "black")


def _level_mean(metrics: Mapping[str, Any], direction: str) -> tuple[float, float]:
    """Mean accuracy of a direction averaged over levels, and the std across levels (Fig. 3)."""
    levels = metrics.get("levels") or {}
    values = [_value(((levels.get(lv) or {}).get(direction) or {}).get("mean")) for lv in LEVELS]
    values = [v for v in values if not np.isnan(v)]
    if not values:
        return np.nan, 0.0
    return float(np.mean(values)), float(np.std(values))


def framingqa_accuracy_figure(fqa: Mapping[str, Any], fmt: str) -> Figure | None:
    """FramingQA Figure 3 in spirit, per task: (i) mean accuracy by framing direction, error bars
    = std across levels; (ii) observed strict accuracy with bootstrap intervals, and (black
    diamonds) the strict accuracy expected if errors were independent."""
    models = [m for m in ordered(fqa) if any(fmt in fqa[m][t] for t in fqa[m])]
    tasks = ordered({t for m in models for t in fqa[m] if fmt in fqa[m][t]}, task_order())
    if not models or not tasks:
        return None
    fig, axes = plt.subplots(len(tasks), 2, figsize=(11, 2.9 * len(tasks)), squeeze=False)
    mean_dirs = (["neutral"] if fmt == "mc" else []) + ["correct", "incorrect"]
    for row, task in enumerate(tasks):
        cells = [(fqa[m].get(task) or {}).get(fmt) or {} for m in models]
        means: dict[str, list[float]] = {d: [] for d in mean_dirs}
        stds: dict[str, list[float]] = {d: [] for d in mean_dirs}
        for metrics in cells:
            for d in mean_dirs:
                mean, std = ((_value(metrics.get("neutral")), 0.0) if d == "neutral"
                             else _level_mean(metrics, d))
                means[d].append(mean)
                stds[d].append(std)
        ax_mean, ax_strict = axes[row]
        _grouped_bars(ax_mean, models, means, stds, DIRECTION_COLORS)
        ax_mean.set_title(f"{task_name(task)}: (i) mean", fontsize=9)
        ax_mean.set_ylabel("accuracy (%)")
        strict = {d: [_value(m.get(f"strict_{d}")) for m in cells] for d in ("correct", "incorrect", "all")}
        errors = {d: np.array([_ci_error(_value(m.get(f"strict_{d}")), m.get(f"strict_{d}_ci"))
                               for m in cells]).T for d in strict}
        positions = _grouped_bars(ax_strict, models, strict, errors, DIRECTION_COLORS)
        for d, pos in positions.items():
            expected = np.array([_value(m.get(f"expected_{d}")) for m in cells]) * 100
            ax_strict.scatter(pos, expected, marker="D", s=14, color="black", zorder=3,
                              label="expected (independent errors)" if d == "correct" else None)
        ax_strict.set_title(f"{task_name(task)}: (ii) strict", fontsize=9)
    axes[0][0].legend(fontsize=7, loc="upper left", ncols=3)
    axes[0][1].legend(fontsize=7, loc="upper left", ncols=4)
    fig.suptitle(f"{FORMAT_NAMES.get(fmt, fmt)}: context-level accuracy", fontsize=11)
    fig.tight_layout()
    return fig


def framingqa_levels_figure(fqa: Mapping[str, Any], fmt: str, task: str = "all") -> Figure | None:
    """FramingQA Figure 4 / Table 5 in spirit: per structural level, mean and strict accuracy
    under correct- vs incorrect-bias framing, per model (pooled over tasks by default)."""
    def has_levels(model: str, task: str) -> bool:
        return bool(((fqa[model].get(task) or {}).get(fmt) or {}).get("levels"))

    if not any(has_levels(m, task) for m in fqa):
        task = next((t for t in ordered({t for m in fqa for t in fqa[m]}, task_order())
                     if any(has_levels(m, t) for m in fqa)), task)
    models = [m for m in ordered(fqa) if has_levels(m, task)]
    if not models:
        return None
    fig, axes = plt.subplots(2, len(LEVELS), figsize=(11, 6), squeeze=False, sharey=True)
    for row, stat in enumerate(("mean", "strict")):
        for col, level in enumerate(LEVELS):
            series = {}
            for direction in ("correct", "incorrect"):
                series[direction] = [
                    _value(((fqa[m][task][fmt]["levels"].get(level) or {}).get(direction) or {})
                           .get(stat)) for m in models]
            _grouped_bars(axes[row][col], models, series, colors=DIRECTION_COLORS)
            axes[row][col].set_title(f"{level}: {stat}", fontsize=9)
        axes[row][0].set_ylabel("accuracy (%)")
    axes[0][0].legend(fontsize=7, loc="upper left", ncols=2)
    fig.suptitle(f"{FORMAT_NAMES.get(fmt, fmt)}: accuracy by structural level "
                 f"({task_name(task)})", fontsize=11)
    fig.tight_layout()
    return fig


def omit_obr_figure(omit: Mapping[str, Any]) -> Figure | None:
    """OMIT Figure 4 in spirit: OBR per model and condition with Wilson intervals; * marks a
    significant reduction vs M0 (Holm-adjusted one-sided McNemar)."""
    rates = omit.get("rates") or {}
    models = ordered(rates)
    conditions = ordered({c for m in models for c in rates[m]})
    if not models or not conditions:
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(models) * max(len(conditions), 2) / 2), 4))
    series, errors = {}, {}
    for c in conditions:
        cells = [rates[m].get(c) or {} for m in models]
        series[c] = [_value(r.get("OBR")) for r in cells]
        errors[c] = np.array([_ci_error(_value(r.get("OBR")), [r.get("OBR_low"), r.get("OBR_high")])
                              for r in cells]).T
    cmap = plt.get_cmap("viridis", max(len(conditions), 2))
    colors = {c: cmap(i) for i, c in enumerate(conditions)}
    positions = _grouped_bars(ax, models, series, errors, colors)
    significant = {(t.get("model"), t.get("condition")) for t in omit.get("mcnemar") or []
                   if _value(t.get("p_holm")) < SIGNIFICANCE}
    for c, pos in positions.items():
        for i, model in enumerate(models):
            if (model, c) in significant:
                top = _value((rates[model].get(c) or {}).get("OBR_high"))
                ax.annotate("*", (pos[i], np.nan_to_num(top) * 100 + 1), ha="center", fontsize=12)
    ax.set_ylabel("OBR (%)")
    ax.set_title("Omission-bias rate by condition (Wilson 95% CI; * = significant drop vs M0)",
                 fontsize=10)
    ax.legend(fontsize=7, ncols=len(conditions), loc="upper left")
    fig.tight_layout()
    return fig


def embodied_completion_figure(emb: Mapping[str, Any]) -> Figure | None:
    """Overall task completion per planner model: mean by framing and strict by variant set."""
    models = [m for m in ordered(emb) if "overall" in emb[m]]
    if not models:
        return None
    fig, (ax_mean, ax_strict) = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True)
    mean = {d: [_value(emb[m]["overall"].get(f"completion_mean_{d}")) for m in models]
            for d in ("neutral", "correct", "incorrect")}
    strict = {d: [_value(emb[m]["overall"].get(f"completion_strict_{d}")) for m in models]
              for d in ("correct", "incorrect", "all")}
    _grouped_bars(ax_mean, models, mean, colors=DIRECTION_COLORS)
    _grouped_bars(ax_strict, models, strict, colors=DIRECTION_COLORS)
    ax_mean.set_title("mean completion", fontsize=9)
    ax_strict.set_title("strict completion", fontsize=9)
    ax_mean.set_ylabel("task completion (%)")
    ax_mean.legend(fontsize=7, loc="upper left", ncols=3)
    ax_strict.legend(fontsize=7, loc="upper left", ncols=3)
    fig.suptitle("Embodied: task completion (overall)", fontsize=11)
    fig.tight_layout()
    return fig


def framingqa_figures(fqa: Mapping[str, Any]) -> list[tuple[str, Figure | None]]:
    figures: list[tuple[str, Figure | None]] = []
    for fmt in FORMAT_NAMES:
        figures.append((f"{FORMAT_NAMES[fmt]}: mean and strict accuracy (cf. FramingQA Fig. 3)",
                        framingqa_accuracy_figure(fqa, fmt)))
    for fmt in FORMAT_NAMES:
        figures.append((f"{FORMAT_NAMES[fmt]}: accuracy by structural level (cf. FramingQA Fig. 4)",
                        framingqa_levels_figure(fqa, fmt)))
    return figures


def report_figures(report: Mapping[str, Any]) -> list[tuple[str, Figure]]:
    """All figures for a report, titled, in display order (each registered suite's)."""
    from framebench.registry import ordered_suites

    figures: list[tuple[str, Figure | None]] = []
    for suite in ordered_suites():
        if report.get(suite.name):
            figures += suite.figures(report[suite.name])
    if report.get("susceptibility"):
        figures.append(("Framing susceptibility: shift of P(gold), with 95 % intervals",
                        susceptibility_figure(report)))
    return [(title, fig) for title, fig in figures if fig is not None]


def susceptibility_figure(report: Mapping[str, Any]):
    """Per format: the shift of P(gold) by level and bias for the pooled task, one bar group per
    model, 95 % intervals as error bars; None when there is nothing to draw."""
    from framebench.scoring.view import LEVEL_NAMES

    fqa = (report.get("susceptibility") or {}).get("framingqa") or {}
    models = ordered(fqa)
    formats = ordered({f for m in models for f in (fqa[m].get("all") or {})}, FORMAT_NAMES)
    if not models or not formats:
        return None
    fig, axes = plt.subplots(1, len(formats), figsize=(5.5 * len(formats), 3.4), squeeze=False)
    for ax, fmt in zip(axes[0], formats, strict=True):
        labels, colors, values, lows, highs = [], [], [], [], []
        for model in models:
            levels = ((fqa[model].get("all") or {}).get(fmt)) or {}
            for level in (lv for lv in LEVELS if lv in levels):
                for bias in ("correct", "incorrect"):
                    cell = levels[level].get(bias)
                    if not cell or cell.get("shift") is None:
                        continue
                    v = 100 * cell["shift"]
                    lo, hi = (cell.get("shift_ci") or [None, None])
                    labels.append(f"{plain_label(model, 18)}\n{LEVEL_NAMES[level]} {bias[:4]}.")
                    colors.append(DIRECTION_COLORS[bias])
                    values.append(v)
                    lows.append(v - 100 * lo if lo is not None else 0.0)
                    highs.append(100 * hi - v if hi is not None else 0.0)
        x = np.arange(len(values))
        ax.bar(x, values, color=colors, yerr=[lows, highs], capsize=3)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, labels, fontsize=6, rotation=90)
        ax.set_ylabel("shift of P(gold) (pp)")
        ax.set_title(f"{FORMAT_NAMES.get(fmt, fmt)}, all tasks", fontsize=9)
    fig.suptitle("Framing susceptibility: how far framing moves P(right answer)", fontsize=10)
    fig.tight_layout()
    return fig
