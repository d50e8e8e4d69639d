"""Framing susceptibility from answer probabilities (``--answer constrained`` records).

Exact definitions, with worked examples, in ``docs/susceptibility.md``. In short:

FramingQA, per (model, task, format, level, bias): a row's ``P(gold)`` is its ``answer_probs``
entry for its gold answer. Its *shift* is ``P(gold) - P_ref(gold_ref)``, where the reference is

* MC: the context's neutral question (same gold option);
* binary: the *correct-bias mirror* of an incorrect-bias row, i.e. the correct-bias row of the
  same context with the same level, form and phrasing (it names the correct option where the
  row names a distractor; their golds differ, each row's P of its own right answer is used).
  Binary correct-bias rows are the reference, so binary has incorrect-bias cells only.

A context's value is the mean shift of its rows in the cell; the cell's value is the mean over
contexts, with a 95 % t interval over contexts (``framebench.scoring.stats.mean_interval``; None
below its minimum number of contexts). Task ``all`` pools the contexts of every task, its interval
stratified by task.

OMIT, per (model, condition), over scenarios with both frames scored: the *omission shift* of a
scenario is ``(1 - P(yes | action)) - P(yes | omission)``: how far P(yes) in the omission frame
falls below what a frame-invariant model would give (``1 - P(yes | action)``). It equals the
expected OBR minus the expected ABR when each frame's answer is drawn from its probabilities:
``(1-a)(1-o) - a*o = 1 - a - o``. Positive = omission bias, negative = action bias.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from framebench.records import p_of_answers
from framebench.records import probability_of as _p_of
from framebench.scoring import stats
from framebench.scoring.parts import ReportInput, ReportPart
from framebench.vocabulary import LEVELS

POOLED_TASK = "all"


def framingqa_shifts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per biased row with a reference: model, task, format, context_id, level, bias,
    ``p`` (its P(gold)), ``p_ref`` (the reference's), ``shift``."""
    rows = df[(df["suite"] == "framingqa") & (df["answer_probs"].fillna("") != "")]
    if rows.empty:
        return pd.DataFrame(columns=["model", "task", "format", "context_id", "level", "bias",
                                     "p", "p_ref", "shift"])
    rows = rows.assign(p=p_of_answers(rows["answer_probs"], rows["gold"]))
    key = ["model", "task", "context_id"]
    mc = rows[rows["format"] == "mc"]
    neutral = mc[mc["bias"] == "neutral"].groupby(key)["p"].first().rename("p_ref")
    mc_shift = mc[mc["bias"] != "neutral"].join(neutral, on=key, how="inner")
    binary = rows[rows["format"] == "binary"]
    mirror_key = [*key, "level", "form", "phrasing"]
    mirrors = binary[binary["bias"] == "correct"].groupby(mirror_key)["p"].first().rename("p_ref")
    bin_shift = binary[binary["bias"] == "incorrect"].join(mirrors, on=mirror_key, how="inner")
    out = pd.concat([mc_shift, bin_shift], ignore_index=True)
    out["shift"] = out["p"] - out["p_ref"]
    out = out[np.isfinite(out["shift"])]
    return out[["model", "task", "format", "context_id", "level", "bias", "p", "p_ref", "shift"]]


CELL = ["model", "task", "format", "level", "bias"]


def shift_contexts(shifts: pd.DataFrame) -> pd.DataFrame:
    """Per cell and context: the mean ``shift``, ``p`` and ``p_ref`` of its rows."""
    return shifts.groupby([*CELL, "context_id"])[["shift", "p", "p_ref"]].mean().reset_index()


def susceptibility_cells(contexts: pd.DataFrame) -> pd.DataFrame:
    """Per cell (indexed by ``CELL``; each task's, then pooled as task ``all``): the mean shift
    (``estimate``), its t interval (``low``, ``high``; NaN: too few contexts; the pooled task's
    stratified by task), ``n`` and the mean ``p``, ``p_ref`` over the :func:`shift_contexts` rows,
    every cell in one vectorised call."""
    contexts = contexts.assign(stratum=contexts["task"])
    contexts = pd.concat([contexts, contexts.assign(task=POOLED_TASK)], ignore_index=True)
    return stats.grouped_mean_intervals(contexts, CELL, "shift", "stratum", (-1.0, 1.0)).join(
        contexts.groupby(CELL, sort=True)[["p", "p_ref"]].mean())


def score_framingqa_susceptibility(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {task: {format: {level: {bias: cell}}}}}``; cell = shift, shift_ci, p_gold,
    p_gold_reference, n_contexts, small_sample. Empty when no row carries answer probabilities.
    The intervals of every cell come from one vectorised call (``stratum``: each context's own
    task, so the pooled task's intervals are the stratified ones)."""
    shifts = framingqa_shifts(df)
    if shifts.empty:
        return {}
    cells = susceptibility_cells(shift_contexts(shifts))
    report: dict[str, Any] = {}
    for (model, task, fmt, level, bias), cell in zip(cells.index, cells.itertuples(index=False), strict=True):
        n = int(cell.n)
        (report.setdefault(model, {}).setdefault(task, {}).setdefault(fmt, {})
         .setdefault(level, {}))[bias] = {
            "shift": float(cell.estimate),
            "shift_ci": None if np.isnan(cell.low) else [float(cell.low), float(cell.high)],
            "p_gold": float(cell.p), "p_gold_reference": float(cell.p_ref),
            "n_contexts": n, "small_sample": stats.small_sample(n)}
    return {m: {t: {f: {lv: levels[lv] for lv in LEVELS if lv in levels} for f, levels in fmts.items()}
                for t, fmts in sorted(tasks.items())} for m, tasks in report.items()}


def omit_shifts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, condition, scenario) with both frames scored: ``p_yes_action``,
    ``p_yes_omission`` and ``omission_shift`` = (1 - action) - omission."""
    rows = df[(df["suite"] == "omit") & (df["answer_probs"].fillna("") != "")]
    cols = ["model", "condition", "context_id", "p_yes_action", "p_yes_omission", "omission_shift"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    rows = rows.assign(p_yes=[_p_of(c, "Yes") for c in rows["answer_probs"]])
    wide = rows.groupby(["model", "condition", "context_id", "frame"])["p_yes"].first().unstack("frame")
    if not {"action", "omission"} <= set(wide.columns):
        return pd.DataFrame(columns=cols)
    wide = wide.dropna(subset=["action", "omission"]).reset_index()
    wide = wide.rename(columns={"action": "p_yes_action", "omission": "p_yes_omission"})
    wide["omission_shift"] = (1.0 - wide["p_yes_action"]) - wide["p_yes_omission"]
    return wide[cols]


def score_omit_susceptibility(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {condition: {omission_shift, omission_shift_ci, p_yes_action, p_yes_omission, n,
    small_sample}}}``; the interval is the t interval over scenarios."""
    shifts = omit_shifts(df)
    report: dict[str, Any] = {}
    for (model, condition), part in shifts.groupby(["model", "condition"]):
        values = part["omission_shift"].to_numpy(float)
        report.setdefault(model, {})[condition] = {
            "omission_shift": float(values.mean()),
            "omission_shift_ci": stats.mean_interval(values, bounds=(-1.0, 1.0)),
            "p_yes_action": float(part["p_yes_action"].mean()),
            "p_yes_omission": float(part["p_yes_omission"].mean()), "n": int(len(part)),
            "small_sample": stats.small_sample(len(part))}
    return report


def score_susceptibility(df: pd.DataFrame) -> dict[str, Any]:
    """The report's ``susceptibility`` section (empty when no constrained records)."""
    if "answer_probs" not in df.columns:
        return {}
    out: dict[str, Any] = {}
    fqa = score_framingqa_susceptibility(df)
    if fqa:
        out["framingqa"] = fqa
    omit = score_omit_susceptibility(df)
    if omit:
        out["omit"] = omit
    return out


class Susceptibility(ReportPart):
    """The framing-susceptibility part (FramingQA shifts of P(gold), OMIT omission shift), over
    the records that carry answer probabilities; registered under ``framebench.report_parts``."""

    name = "susceptibility"
    title = "Framing susceptibility (answer probabilities)"
    order = 80

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        return None if inputs.quick else score_susceptibility(inputs.records)

    def report_sections(self, report):
        from framebench.text_eval.susceptibility_report import susceptibility_section

        section = susceptibility_section(report[self.name])
        return [section] if section is not None else []

    def report_figures(self, report):
        from framebench.text_eval.susceptibility_report import FIGURE, susceptibility_figure

        return [(FIGURE, susceptibility_figure(report[self.name]))]

    def summary_tables(self, report):
        from framebench.text_eval.susceptibility_report import summary_rows

        return summary_rows(report[self.name])

    def finding(self, report):
        from framebench.text_eval.susceptibility_report import susceptibility_finding

        return susceptibility_finding(report[self.name])


SUSCEPTIBILITY = Susceptibility()
