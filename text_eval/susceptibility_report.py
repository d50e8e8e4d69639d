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
from framebench.text_eval.framingqa.tables import task_order
from framebench.vocabulary import LEVELS

TITLE = "Framing susceptibility (answer probabilities)"
FIGURE = "Framing susceptibility: shift of P(gold), with 95 % intervals"  # after the FramingQA table
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
                  "P(gold) framed %", "Contexts"], rows, figures=(FIGURE,))


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


BIASES = ("correct", "incorrect")


def _figure_rows(fqa: Mapping[str, Any], models: list[str], fmt: str) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(label, bias, cell) of every pooled-task cell of a format with a shift, models in order."""
    rows = []
    for model in models:
        levels = ((fqa[model].get("all") or {}).get(fmt)) or {}
        for level in (lv for lv in LEVELS if lv in levels):
            for bias in BIASES:
                cell = levels[level].get(bias)
                if cell and cell.get("shift") is not None:
                    rows.append((f"{plain_label(model)} · {LEVEL_NAMES[level]}", bias, cell))
    return rows


def susceptibility_figure(sus: Mapping[str, Any]):
    """Per format: the shift of P(gold) by level and bias for the pooled task, one horizontal bar
    per model, level and bias (labels read horizontally at any number of models), 95 % intervals
    as error bars, a legend for the bias colours; None when there is nothing to draw."""
    from matplotlib.patches import Patch

    fqa = sus.get("framingqa") or {}
    models = ordered(fqa)
    formats = ordered({f for m in models for f in (fqa[m].get("all") or {})}, FORMAT_NAMES)
    panels = [(fmt, _figure_rows(fqa, models, fmt)) for fmt in formats]
    panels = [(fmt, rows) for fmt, rows in panels if rows]
    if not panels:
        return None
    heights = [0.28 * len(rows) + 0.9 for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.8), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (fmt, rows) in zip(axes[:, 0], panels, strict=True):
        y = np.arange(len(rows))[::-1]  # the first row on top
        values = np.array([100 * cell["shift"] for _, _, cell in rows])
        bounds = [cell.get("shift_ci") or [None, None] for _, _, cell in rows]
        low = [v - 100 * lo if lo is not None else 0.0 for v, (lo, _) in zip(values, bounds, strict=True)]
        high = [100 * hi - v if hi is not None else 0.0 for v, (_, hi) in zip(values, bounds, strict=True)]
        ax.barh(y, values, color=[DIRECTION_COLORS[bias] for _, bias, _ in rows], height=0.7,
                xerr=[np.maximum(low, 0), np.maximum(high, 0)], capsize=2)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(y, [f"{label} {bias}" for label, bias, _ in rows], fontsize=8)
        ax.set_xlabel("shift of P(gold), percentage points", fontsize=8)
        ax.set_title(f"{FORMAT_NAMES.get(fmt, fmt)}, all tasks", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    shown = {bias for _, rows in panels for _, bias, _ in rows}
    fig.legend(handles=[Patch(color=DIRECTION_COLORS[b], label=f"{b}-bias framing") for b in BIASES if b in shown],
               loc="outside lower center", fontsize=8, ncols=2)
    fig.suptitle("Framing susceptibility: how far framing moves P(right answer)", fontsize=10)
    return fig


# ---------------------------------------------------------------- the finding in words

CHANCE = 0.05  # the share of 95 % intervals excluding 0 when no effect exists


def susceptibility_finding(sus: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{model: [sentence]}``: how many pooled shifts of P(right answer) have an interval that
    excludes 0 (against the number chance alone would give), the largest of them, and the
    omission shift per condition (``framebench.scoring.finding``)."""
    out: dict[str, list[str]] = {}
    for model, cells in _pooled_cells(sus.get("framingqa") or {}).items():
        out.setdefault(model, []).append(_shift_sentence(cells))
    for model, conditions in (sus.get("omit") or {}).items():
        out.setdefault(model, []).append(_omission_sentence(conditions))
    return {model: [s for s in sentences if s] for model, sentences in out.items()}


def _pooled_cells(fqa: Mapping[str, Any]) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """Per model: (``Binary yes/no Root incorrect-bias``, cell) of every pooled-task cell."""
    return {model: [(f"{FORMAT_NAMES.get(fmt, fmt)} {LEVEL_NAMES[level]} {bias}-bias", cell)
                    for fmt, levels in (fqa[model].get("all") or {}).items()
                    for level in LEVELS if level in levels for bias, cell in levels[level].items()]
            for model in ordered(fqa)}


def _shift_sentence(cells: list[tuple[str, Mapping[str, Any]]]) -> str:
    from framebench.scoring.finding import excludes_zero, pp_words

    beyond = [(name, c) for name, c in cells if excludes_zero(c.get("shift_ci"))]
    head = (f"P(right answer), all tasks: {len(beyond)} of {len(cells)} framing shifts exclude 0 "
            f"(chance alone: about {CHANCE * len(cells):.1f})")
    if not beyond:
        return head + ": no shift distinguishable from noise."
    name, cell = max(beyond, key=lambda nc: abs(nc[1]["shift"]))
    return head + f"; the largest: {name} {pp_words(cell['shift'], cell['shift_ci'])}."


def _omission_sentence(conditions: Mapping[str, Any]) -> str:
    from framebench.scoring.finding import effect_words

    words = [effect_words(f"omission shift under {cond}", c.get("omission_shift"), c.get("omission_shift_ci"),
                          c.get("n"), "scenarios", positive="omission bias", negative="action bias")
             for cond, c in sorted(conditions.items())]
    return "OMIT P(yes): " + "; ".join(w for w in words if w) + "."
