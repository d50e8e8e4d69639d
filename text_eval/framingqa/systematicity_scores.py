"""The report's ``systematicity`` entry: the per-context values of
``framebench.text_eval.framingqa.systematicity`` averaged over contexts, with their intervals
(docs/report.md "Systematicity", docs/statistics.md).

Per (model, task, format, level, bias; task ``all`` pools the tasks, level ``all`` the levels,
bias ``all`` both biases):
``polarity`` and ``invariance`` (shares per context) and ``spread`` carry the t interval over
contexts (pooled: stratified by task), ``polarity_strict`` and ``invariance_strict`` (0/1 per
context) the score interval (Wilson's; pooled: the stratified one). Per (model, task, format,
level), over the contexts having both: ``framing_effect``, ``rewording_effect``, ``difference``
(framing minus rewording, per context), ``inverted_difference`` (minus framing minus rewording: an
inverted framing's size against rewording), each with its t interval, and ``ratio`` (framing over
rewording effect, no interval), of accuracy (``accuracy``) and, for constrained rows, of P(gold)
(``p_gold``). ``variance``: per (model, task, format), the shares of the within-context variance
of P(gold) that framing (bias x level cells), polarity, rewording and the rest explain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats
from framebench.scoring.sections import FORMAT_NAMES, LEVEL_NAMES, ordered
from framebench.text_eval.framingqa.systematicity import (
    ALL,
    EFFECT_UNITS,
    KEY,
    diagnostic_contexts,
    effect_contexts,
    prepared,
)
from framebench.vocabulary import LEVELS, PHRASINGS

POOLED_TASK = "all"
CELL = ["model", "task", "format", "level", "bias"]
LEVEL_CELL = ["model", "task", "format", "level"]
MEANS = {"polarity": (0.0, 1.0), "invariance": (0.0, 1.0), "spread": (0.0, 1.0)}
SHARES = ("polarity_strict", "invariance_strict")
# (report key, per-context column, bounds) of the framing-against-rewording comparison
EFFECT_KEYS = (("framing_effect", "framing", (-1.0, 1.0)), ("rewording_effect", "rewording", (0.0, 1.0)),
               ("difference", "difference", (-2.0, 1.0)), ("inverted_difference", "inverted", (-2.0, 1.0)))
MODES = {"accuracy": "", "p_gold": "_p"}


def with_pooled(frame: pd.DataFrame) -> pd.DataFrame:
    """A per-context frame (with a ``task`` column) once per task and once under the pooled task,
    ``stratum`` naming each context's own task."""
    frame = frame.assign(stratum=frame["task"])
    return pd.concat([frame, frame.assign(task=POOLED_TASK)], ignore_index=True)


def diagnostic_cells(contexts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per diagnostic: its estimate, interval and contexts per CELL (``contexts``: the per-context
    frame, with a ``stratum`` column)."""
    floors = {"polarity": stats.binomial_se_floor(contexts, CELL, "polarity", "pairs"),
              "invariance": stats.binomial_se_floor(contexts, CELL, "invariance", "triples"), "spread": None}
    out = {col: stats.grouped_mean_intervals(contexts, CELL, col, "stratum", bounds, floors[col])
           for col, bounds in MEANS.items()}
    out |= {col: stats.grouped_share_intervals(contexts, CELL, col, "stratum") for col in SHARES}
    return out


def difference_columns(effects: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The per-context framing and rewording effects of one mode (``""`` accuracy, ``"_p"``
    P(gold)) with their difference and inverted difference."""
    framing, rewording = effects[f"framing{mode}"], effects[f"rewording{mode}"]
    both = framing.notna() & rewording.notna()
    return effects.loc[both, [*LEVEL_CELL, "stratum", *EFFECT_UNITS]].assign(
        framing=framing[both], rewording=rewording[both], difference=(framing - rewording)[both],
        inverted=(-framing - rewording)[both])


def effect_floors(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """The SE floors of the accuracy effects (:func:`stats.binomial_se_floor`): the framing
    effect's from its two accuracies, the rewording effect's from the share of mixed triples
    (each moves 2/3), the differences' from both."""
    def floor(shares: str, units: str, scale: float = 1.0) -> pd.Series:
        return stats.binomial_se_floor(frame, LEVEL_CELL, shares, units, scale)

    framing = np.hypot(floor("correct", "n_correct"), floor("incorrect", "n_incorrect"))
    rewording = floor("mixed", "triples", 2 / 3)
    both = np.hypot(framing, rewording)
    return {"framing": framing, "rewording": rewording, "difference": both, "inverted": both}


def effect_cells(effects: pd.DataFrame, mode: str) -> dict[str, pd.DataFrame]:
    """Per EFFECT_KEYS key: estimate, interval and contexts per LEVEL_CELL (accuracy effects with
    an SE floor; P(gold) ones, continuous, without)."""
    frame = difference_columns(effects, mode)
    if frame.empty:
        return {}
    floors = effect_floors(frame) if mode == "" else {}
    return {key: stats.grouped_mean_intervals(frame, LEVEL_CELL, col, "stratum", bounds, floors.get(col))
            for key, col, bounds in EFFECT_KEYS}


def _ci(row: pd.Series) -> list[float] | None:
    return None if np.isnan(row["low"]) else [float(row["low"]), float(row["high"])]


def _entries(cells: dict[str, pd.DataFrame]) -> dict[tuple, dict[str, Any]]:
    """{cell index: {key, key_ci, n_contexts, small_sample}} over every measure of ``cells``."""
    out: dict[tuple, dict[str, Any]] = {}
    for key, found in cells.items():
        for index, row in found.iterrows():
            entry = out.setdefault(index, {})
            entry[key], entry[f"{key}_ci"] = float(row["estimate"]), _ci(row)
            entry["n_contexts"] = max(entry.get("n_contexts", 0), int(row["n"]))
    for entry in out.values():
        entry["small_sample"] = stats.small_sample(entry["n_contexts"])
    return out


def _ratio(entry: dict[str, Any]) -> float | None:
    rewording = entry.get("rewording_effect")
    return None if not rewording else float(entry["framing_effect"] / rewording)


def variance_components(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task, format; task ``all`` too): the sums of squares of P(gold) about each
    context's mean, split by nesting cells: ``framing`` between (bias, level) cells, ``polarity``
    between forms within them, ``rewording`` between rewordings within those (rows whose
    phrasing is no rewording stay together), ``residual`` the rest (distractors, evidence sets)."""
    rows = rows[np.isfinite(rows["p"].to_numpy(float))]
    reworded = rows["phrasing"].isin(PHRASINGS) & ~((rows["bias"] == "incorrect") & (rows["level"] == "propositional"))
    rows = rows.assign(rewording=rows["phrasing"].where(reworded, ""))
    nests = [KEY, [*KEY, "bias", "level"], [*KEY, "bias", "level", "form"], [*KEY, "bias", "level", "form", "rewording"]]
    means = [rows.groupby(n, sort=False)["p"].transform("mean").to_numpy(float) for n in nests]
    p = rows["p"].to_numpy(float)
    ss = [(m - means[0]) ** 2 for m in means[1:]] + [(p - means[0]) ** 2]
    parts = pd.DataFrame({"framing": ss[0], "polarity": ss[1] - ss[0], "rewording": ss[2] - ss[1],
                          "residual": ss[3] - ss[2], "total": ss[3]}, index=rows.index)
    parts = pd.concat([rows[["model", "task", "format", "context_id"]], parts], axis=1)
    sums = with_pooled(parts).groupby(["model", "task", "format"], sort=True)
    return sums[["framing", "polarity", "rewording", "residual", "total"]].sum().join(
        sums["context_id"].nunique().rename("n_contexts")).join(sums.size().rename("n_rows"))


def _variance_entry(row: pd.Series, fmt: str) -> dict[str, Any]:
    total = float(row["total"])
    shares = {k: (float(max(row[k], 0.0)) / total if total > 0 else None)
              for k in ("framing", "polarity", "rewording", "residual")}
    if fmt != "binary":
        shares["polarity"] = None  # multiple choice has the plain form only
    return {**shares, "variance": total / float(row["n_rows"]), "n_contexts": int(row["n_contexts"])}


def score_systematicity(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {task: {format: {"levels": {level: {"biases": {bias: diagnostics}, "accuracy":
    comparison, "p_gold": comparison}}, "variance": shares}}}}``; empty without FramingQA rows."""
    rows = prepared(df)
    if rows.empty:
        return {}
    report: dict[str, Any] = {}

    def level_of(model: str, task: str, fmt: str, level: str) -> dict[str, Any]:
        entry = report.setdefault(model, {}).setdefault(task, {}).setdefault(fmt, {})
        return entry.setdefault("levels", {}).setdefault(level, {})

    diagnostics = with_pooled(diagnostic_contexts(rows).reset_index())
    for (model, task, fmt, level, bias), entry in _entries(diagnostic_cells(diagnostics)).items():
        level_of(model, task, fmt, level).setdefault("biases", {})[bias] = entry
    effects = with_pooled(effect_contexts(rows).reset_index())
    for mode, suffix in MODES.items():
        for (model, task, fmt, level), entry in _entries(effect_cells(effects, suffix)).items():
            level_of(model, task, fmt, level)[mode] = {**entry, "ratio": _ratio(entry)}
    for (model, task, fmt), row in variance_components(rows).iterrows():
        if model in report and task in report[model] and fmt in report[model][task]:
            report[model][task][fmt]["variance"] = _variance_entry(row, fmt)
    return _ordered(report)


def _ordered(report: dict[str, Any]) -> dict[str, Any]:
    """Tasks sorted (``all`` among them), levels in the vocabulary's order."""
    for tasks in report.values():
        for formats in tasks.values():
            for entry in formats.values():
                levels = entry.get("levels", {})
                entry["levels"] = {lv: levels[lv] for lv in (*LEVELS, ALL) if lv in levels}
    return {m: dict(sorted(tasks.items())) for m, tasks in report.items()}


# ---------------------------------------------------------------- reading the entry


def level_name(level: str) -> str:
    return "All levels" if level == ALL else LEVEL_NAMES.get(level, level)


def pooled_levels(sys_report: Mapping[str, Any]):
    """(model, format, level, level entry) of the pooled task, in report order."""
    for model in ordered(sys_report):
        formats = sys_report[model].get(POOLED_TASK) or {}
        for fmt in ordered(formats, FORMAT_NAMES):
            levels = formats[fmt].get("levels") or {}
            for level in (lv for lv in (*LEVELS, ALL) if lv in levels):
                yield model, fmt, level, levels[level]
