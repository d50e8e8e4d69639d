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
contexts, with a 95 % cluster-bootstrap interval (contexts resampled; ``bootstrap.py``). Task
``all`` pools the contexts of every task.

OMIT, per (model, condition), over scenarios with both frames scored: the *omission shift* of a
scenario is ``(1 - P(yes | action)) - P(yes | omission)``: how far P(yes) in the omission frame
falls below what a frame-invariant model would give (``1 - P(yes | action)``). It equals the
expected OBR minus the expected ABR when each frame's answer is drawn from its probabilities:
``(1-a)(1-o) - a*o = 1 - a - o``. Positive = omission bias, negative = action bias.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring.bootstrap import N_RESAMPLES, cluster_ci
from framebench.scoring.parts import ReportInput, ReportPart
from framebench.vocabulary import LEVELS

POOLED_TASK = "all"


def _p_of(cell: str, answer: str) -> float:
    if not cell:
        return float("nan")
    probs = json.loads(cell)
    return float(probs.get(answer, float("nan")))


def framingqa_shifts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per biased row with a reference: model, task, format, context_id, level, bias,
    ``p`` (its P(gold)), ``p_ref`` (the reference's), ``shift``."""
    rows = df[(df["suite"] == "framingqa") & (df["answer_probs"].fillna("") != "")]
    if rows.empty:
        return pd.DataFrame(columns=["model", "task", "format", "context_id", "level", "bias",
                                     "p", "p_ref", "shift"])
    rows = rows.assign(p=[_p_of(c, g) for c, g in zip(rows["answer_probs"], rows["gold"], strict=True)])
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


def _cell(per_context: pd.DataFrame, key: str, n_resamples: int) -> dict[str, Any]:
    values = per_context[["shift", "p", "p_ref"]].to_numpy()
    ci = cluster_ci(values[:, :1], key, n_resamples)[0]
    return {"shift": float(values[:, 0].mean()), "shift_ci": [float(ci[0]), float(ci[1])],
            "p_gold": float(values[:, 1].mean()), "p_gold_reference": float(values[:, 2].mean()),
            "n_contexts": int(len(values))}


def score_framingqa_susceptibility(df: pd.DataFrame, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """``{model: {task: {format: {level: {bias: cell}}}}}``; cell = shift, shift_ci, p_gold,
    p_gold_reference, n_contexts. Empty when no row carries answer probabilities."""
    shifts = framingqa_shifts(df)
    if shifts.empty:
        return {}
    per_context = shifts.groupby(["model", "task", "format", "level", "bias", "context_id"])[
        ["shift", "p", "p_ref"]].mean().reset_index()
    report: dict[str, Any] = {}
    pooled = per_context.assign(task=POOLED_TASK)
    for frame in (per_context, pooled):
        for (model, task, fmt, level, bias), part in frame.groupby(["model", "task", "format", "level", "bias"]):
            key = f"susceptibility|{model}|{task}|{fmt}|{level}|{bias}"
            cell = _cell(part, key, n_resamples)
            (report.setdefault(model, {}).setdefault(task, {}).setdefault(fmt, {})
             .setdefault(level, {})[bias]) = cell
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


def score_omit_susceptibility(df: pd.DataFrame, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """``{model: {condition: {omission_shift, omission_shift_ci, p_yes_action, p_yes_omission, n}}}``."""
    shifts = omit_shifts(df)
    report: dict[str, Any] = {}
    for (model, condition), part in shifts.groupby(["model", "condition"]):
        values = part["omission_shift"].to_numpy()[:, None]
        ci = cluster_ci(values, f"omission-shift|{model}|{condition}", n_resamples)[0]
        report.setdefault(model, {})[condition] = {
            "omission_shift": float(values.mean()), "omission_shift_ci": [float(ci[0]), float(ci[1])],
            "p_yes_action": float(part["p_yes_action"].mean()),
            "p_yes_omission": float(part["p_yes_omission"].mean()), "n": int(len(part))}
    return report


def score_susceptibility(df: pd.DataFrame, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """The report's ``susceptibility`` section (empty when no constrained records)."""
    if "answer_probs" not in df.columns:
        return {}
    out: dict[str, Any] = {}
    fqa = score_framingqa_susceptibility(df, n_resamples)
    if fqa:
        out["framingqa"] = fqa
    omit = score_omit_susceptibility(df, n_resamples)
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
        return None if inputs.quick else score_susceptibility(inputs.records, n_resamples=inputs.n_resamples)

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
