"""FramingQA's report figures (in the spirit of FramingQA Figures 3 and 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from framebench.scoring.figures import (
    DIRECTION_COLORS,
    as_value,
    ci_error,
    grouped_bars,
    plt,
)
from framebench.scoring.sections import FORMAT_NAMES, ordered, task_name
from framebench.text_eval.framingqa.tables import accuracy_figure_title, task_order
from framebench.vocabulary import LEVELS


def _level_mean(metrics: Mapping[str, Any], direction: str) -> tuple[float, float]:
    """Mean accuracy of a direction averaged over levels, and the std across levels (Fig. 3)."""
    levels = metrics.get("levels") or {}
    values = [as_value(((levels.get(lv) or {}).get(direction) or {}).get("mean")) for lv in LEVELS]
    values = [v for v in values if not np.isnan(v)]
    if not values:
        return np.nan, 0.0
    return float(np.mean(values)), float(np.std(values))


def framingqa_accuracy_figure(fqa: Mapping[str, Any], fmt: str) -> Figure | None:
    """FramingQA Figure 3 in spirit, per task: (i) mean accuracy by framing direction, error bars
    = std across levels; (ii) observed strict accuracy with its score intervals (none, so no
    whisker, below 10 contexts), and (black diamonds) the strict accuracy expected if errors were
    independent."""
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
                mean, std = ((as_value(metrics.get("neutral")), 0.0) if d == "neutral"
                             else _level_mean(metrics, d))
                means[d].append(mean)
                stds[d].append(std)
        ax_mean, ax_strict = axes[row]
        grouped_bars(ax_mean, models, means, stds, DIRECTION_COLORS)
        ax_mean.set_title(f"{task_name(task)}: (i) mean", fontsize=9)
        ax_mean.set_ylabel("accuracy (%)")
        strict = {d: [as_value(m.get(f"strict_{d}")) for m in cells] for d in ("correct", "incorrect", "all")}
        errors = {d: np.array([ci_error(as_value(m.get(f"strict_{d}")), m.get(f"strict_{d}_ci"))
                               for m in cells]).T for d in strict}
        positions = grouped_bars(ax_strict, models, strict, errors, DIRECTION_COLORS)
        for d, pos in positions.items():
            expected = np.array([as_value(m.get(f"expected_{d}")) for m in cells]) * 100
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
                    as_value(((fqa[m][task][fmt]["levels"].get(level) or {}).get(direction) or {})
                           .get(stat)) for m in models]
            grouped_bars(axes[row][col], models, series, colors=DIRECTION_COLORS)
            axes[row][col].set_title(f"{level}: {stat}", fontsize=9)
        axes[row][0].set_ylabel("accuracy (%)")
    axes[0][0].legend(fontsize=7, loc="upper left", ncols=2)
    fig.suptitle(f"{FORMAT_NAMES.get(fmt, fmt)}: accuracy by structural level "
                 f"({task_name(task)})", fontsize=11)
    fig.tight_layout()
    return fig


def framingqa_figures(fqa: Mapping[str, Any]) -> list[tuple[str, Figure | None]]:
    figures: list[tuple[str, Figure | None]] = []
    for fmt in FORMAT_NAMES:
        figures.append((accuracy_figure_title(fmt), framingqa_accuracy_figure(fqa, fmt)))
    for fmt in FORMAT_NAMES:
        figures.append((f"{FORMAT_NAMES[fmt]}: accuracy by structural level (cf. FramingQA Fig. 4)",
                        framingqa_levels_figure(fqa, fmt)))
    return figures
