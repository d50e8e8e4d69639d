"""Tables and figure for the report's framing-susceptibility section (``report["susceptibility"]``;
definitions in ``text_eval/susceptibility.py`` and ``docs/susceptibility.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from framebench.scoring.figures import DIRECTION_COLORS, plain_label, plt
from framebench.scoring.formatting import n_cell, pp_ci, small_n_note, withheld, withheld_note
from framebench.scoring.parts import SummaryTable
from framebench.scoring.sections import (
    FORMAT_NAMES,
    LEVEL_NAMES,
    MISSING,
    Section,
    Table,
    ordered,
    task_name,
)
from framebench.scoring.stats import MIN_CONTEXTS
from framebench.vocabulary import LEVELS
from text_eval.framingqa.tables import task_order

TITLE = "Framing susceptibility (answer probabilities)"
HOW_TO_READ = (
    "How to read: a shift is in percentage points of the probability the model gives the right "
    "answer, framed minus unframed (MC: minus the neutral question; binary: minus the correct-bias "
    "mirror, the same question naming the correct option). Negative = the framing pulls the model "
    "away from the right answer, even where its top answer does not change. Brackets: 95 % t "
    "interval over contexts (all tasks: stratified by task); it covered the true mean shift in "
    "94-96 % of simulated studies at 4, 16 and 100 contexts per task (docs/statistics.md#coverage), "
    "so one that excludes 0 is a shift significant at the 5 % level. The table holds many cells: "
    "about 1 in 20 of them excludes 0 by chance where no model is framed. "
    "Only rows answered with --answer constrained carry probabilities.")
OMIT_HOW_TO_READ = (
    "How to read: omission shift = (1 − P(yes | action)) − P(yes | omission) per scenario, averaged: "
    "how far the omission frame lowers P(yes) below what a frame-invariant model would give; it "
    "equals the expected OBR minus the expected ABR. Positive = omission bias, negative = action "
    "bias, 0 = consistent; brackets: 95 % t interval over scenarios.")


def _pp(value: Any) -> str:
    if value is None:
        return MISSING
    return f"{100 * float(value):+.1f}"


def _pct(value: Any) -> str:
    return MISSING if value is None else f"{100 * float(value):.1f}"


def framingqa_table(fqa: Mapping[str, Any]) -> Table | None:
    rows = []
    for model in ordered(fqa):
        for task in ordered(fqa[model], task_order()):
            for fmt in ordered(fqa[model][task], FORMAT_NAMES):
                levels = fqa[model][task][fmt]
                for level in (lv for lv in LEVELS if lv in levels):
                    for bias in ("correct", "incorrect"):
                        cell = levels[level].get(bias)
                        if not cell:
                            continue
                        rows.append([model, task_name(task), fmt, LEVEL_NAMES[level], bias,
                                     pp_ci(cell.get("shift"), cell.get("shift_ci"),
                                           withheld(cell.get("n_contexts"), MIN_CONTEXTS)),
                                     _pct(cell.get("p_gold_reference")), _pct(cell.get("p_gold")),
                                     n_cell(cell.get("n_contexts"))])
    if not rows:
        return None
    caption = HOW_TO_READ + withheld_note(rows) + small_n_note(rows, 8, "contexts")
    return Table("Shift of P(gold) under framing (percentage points)", caption,
                 ["Model", "Task", "Format", "Level", "Bias", "Shift (95 % CI)", "P(gold) unframed %",
                  "P(gold) framed %", "Contexts"], rows)


def omit_table(omit: Mapping[str, Any]) -> Table | None:
    rows = [[model, cond, pp_ci(c.get("omission_shift"), c.get("omission_shift_ci"), withheld(c.get("n"), MIN_CONTEXTS)),
             _pct(c.get("p_yes_action")), _pct(c.get("p_yes_omission")), n_cell(c.get("n"))]
            for model in ordered(omit) for cond, c in sorted(omit[model].items())]
    if not rows:
        return None
    caption = OMIT_HOW_TO_READ + withheld_note(rows, "scenarios") + small_n_note(rows, 5, "scenarios")
    return Table("OMIT: continuous omission bias from P(yes) (percentage points)", caption,
                 ["Model", "Condition", "Omission shift (95 % CI)", "P(yes) action %", "P(yes) omission %",
                  "Scenarios"], rows)


def susceptibility_section(sus: Mapping[str, Any]) -> Section | None:
    tables = [t for t in (framingqa_table(sus.get("framingqa") or {}), omit_table(sus.get("omit") or {}))
              if t is not None]
    return Section(TITLE, tables) if tables else None


def _ci(ci: Any, n: Any) -> str:
    """``lo, hi`` in percentage points; ``n < 4`` where too few contexts give no interval."""
    if not ci or ci[0] is None or ci[1] is None:
        return f"n < {MIN_CONTEXTS}" if n and n < MIN_CONTEXTS else MISSING
    return f"{_pp(ci[0])}, {_pp(ci[1])}"


def summary_rows(sus: Mapping[str, Any]) -> list[SummaryTable]:
    """Terminal summary tables (``framebench.scoring.summary``): pooled-task shifts per level and
    bias, and the omission shift per condition; percentage points with 95 % intervals."""
    tables = []
    fqa = sus.get("framingqa") or {}
    rows = [[model, fmt, LEVEL_NAMES[level], bias, n_cell(cell.get("n_contexts")), _pp(cell.get("shift")),
             _ci(cell.get("shift_ci"), cell.get("n_contexts"))]
            for model in ordered(fqa) for fmt, levels in (fqa[model].get("all") or {}).items()
            for level in LEVELS if level in levels
            for bias, cell in levels[level].items()]
    if rows:  # n: contexts, † below 30 (a small sample)
        tables.append(SummaryTable("Framing susceptibility, all tasks: shift of P(gold), pp",
                                   ["model", "format", "level", "bias", "n", "shift", "95% CI"], rows))
    omit = sus.get("omit") or {}
    rows = [[model, cond, n_cell(c.get("n")), _pp(c.get("omission_shift")), _ci(c.get("omission_shift_ci"), c.get("n"))]
            for model in ordered(omit) for cond, c in sorted(omit[model].items())]
    if rows:
        tables.append(SummaryTable("OMIT omission shift from P(yes), pp",
                                   ["model", "condition", "n", "shift", "95% CI"], rows))
    return tables


def susceptibility_figure(sus: Mapping[str, Any]):
    """Per format: the shift of P(gold) by level and bias for the pooled task, one bar group per
    model, 95 % intervals as error bars; None when there is nothing to draw."""
    fqa = sus.get("framingqa") or {}
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
