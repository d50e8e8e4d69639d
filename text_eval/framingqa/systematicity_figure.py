"""The systematicity section's figure: per format, the framing effect beside the rewording effect
per model and level, all tasks, with their 95 % intervals (``report["systematicity"]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from framebench.scoring.figures import plain_label, plt
from framebench.scoring.sections import FORMAT_NAMES
from framebench.text_eval.framingqa.systematicity_scores import level_name, pooled_levels

COLORS = {"framing_effect": "#c0392b", "rewording_effect": "#7f8c8d"}
LABELS = {"framing_effect": "framing effect (correct − incorrect bias)",
          "rewording_effect": "rewording effect (mean |Δ| between Q1–Q3)"}


def _rows(sys_report: Mapping[str, Any]) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """Per format: (label, accuracy comparison) of every model and level that has one."""
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for model, fmt, level, entry in pooled_levels(sys_report):
        cmp = entry.get("accuracy")
        if cmp and cmp.get("framing_effect") is not None:
            out.setdefault(fmt, []).append((f"{plain_label(model)} · {level_name(level)}", cmp))
    return out


def _errors(values: np.ndarray, cells: list[Mapping[str, Any]], key: str) -> np.ndarray:
    bounds = [c.get(f"{key}_ci") or [None, None] for c in cells]
    low = [v - 100 * lo if lo is not None else 0.0 for v, (lo, _) in zip(values, bounds, strict=True)]
    high = [100 * hi - v if hi is not None else 0.0 for v, (_, hi) in zip(values, bounds, strict=True)]
    return np.maximum([low, high], 0.0)


def systematicity_figure(sys_report: Mapping[str, Any]):
    """One horizontal panel per format, two bars per model and level; None without data."""
    from matplotlib.patches import Patch

    panels = [(fmt, rows) for fmt, rows in _rows(sys_report).items() if rows]
    if not panels:
        return None
    heights = [0.45 * len(rows) + 0.9 for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.8), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (fmt, rows) in zip(axes[:, 0], panels, strict=True):
        y = np.arange(len(rows))[::-1].astype(float)
        cells = [cmp for _, cmp in rows]
        for offset, key in ((0.18, "framing_effect"), (-0.18, "rewording_effect")):
            values = np.array([100 * c[key] for c in cells])
            ax.barh(y + offset, values, height=0.34, color=COLORS[key], xerr=_errors(values, cells, key),
                    capsize=2)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(y, [label for label, _ in rows], fontsize=8)
        ax.set_xlabel("percentage points of accuracy", fontsize=8)
        ax.set_title(f"{FORMAT_NAMES.get(fmt, fmt)}, all tasks", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.legend(handles=[Patch(color=COLORS[k], label=LABELS[k]) for k in COLORS],
               loc="outside lower center", fontsize=8, ncols=2)
    fig.suptitle("Does framing move answers more than rewording does?", fontsize=10)
    return fig
