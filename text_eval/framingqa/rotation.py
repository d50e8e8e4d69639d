"""Option-position control for FramingQA multiple choice (docs/statistics.md "Option rotation").

Build side (``framebench build framingqa --rotate-options``): every MC item keeps its fixed order
(rotation 0, the paper's) and gains its cyclic rotations r = 1 .. n-1: option i of rotation r is
original option (i + r) mod n, so the gold moves through every position and the gold letter is
remapped. A rotated item's id and slot end in ``@r<r>``; it records ``rotation`` and the
``original_options``, and its ``suite`` is ``framingqa_rotated`` (the suite ``FRAMINGQA_ROTATED``
of framebench.text_eval.framingqa.suite), so it never mixes into the paper's fixed-order metrics.

Score side, per model, over *families* (a fixed-order MC item with at least one rotation scored):

* ``by_position``: accuracy by the gold's letter;
* ``prior``: the model's prior over option letters, PriDe-style (Zheng et al. 2023, arXiv
  2309.03882): the mean over the family's rotations of P(letter), from ``answer_probs`` when the
  rows have them (constrained) and else from the chosen letter. Under cyclic rotations every
  option sits at every letter once, so the options' content averages out and what remains is the
  preference for the letter itself (uniform for a model without position bias);
* ``strict_rotations``: per context, the share of its questions right in every rotation, averaged
  over contexts (the score interval over contexts, stratified by task, as FramingQA's pooled
  strict metrics);
* ``framing_effect_balanced``: per rotation, per context, correct-bias minus incorrect-bias
  accuracy; averaged over rotations, then contexts (next to ``framing_effect_fixed``, rotation 0);
  both with the t interval over contexts, stratified by task;
* ``accuracy_fixed``: accuracy of the family's fixed-order rows; ``debiased_accuracy`` (rows with
  probabilities, i.e. constrained answers): each fixed-order row's P(letter) divided by the prior,
  argmax (PriDe). The prior is estimated on the same questions (PriDe estimates it on a small
  share of the test set and debiases the rest).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats

LETTERS = ("A", "B", "C", "D")
SUFFIX = re.compile(r"@r(\d+)$")
FIXED_SUITE = "framingqa"
ROTATED_SUITE = "framingqa_rotated"  # rotated items are a suite of their own: FramingQA's
# fixed-order metrics, headline, comparisons and susceptibility never see them


# ---------------------------------------------------------------- build


def rotate(item: dict[str, Any], r: int) -> dict[str, Any]:
    """Rotation ``r`` of a fixed-order MC item: options shifted cyclically, gold letter remapped."""
    options = list(item["options"])
    n = len(options)
    gold_index = LETTERS.index(item["gold"])
    rotated = dict(item, suite=ROTATED_SUITE, options=[options[(i + r) % n] for i in range(n)],
                   gold=LETTERS[(gold_index - r) % n], rotation=r, original_options=options,
                   item_id=f"{item['item_id']}@r{r}", slot=f"{item['slot']}@r{r}")
    return rotated


def with_rotations(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` followed by the rotations 1 .. n-1 of each MC item (binary items unchanged)."""
    rotated = [rotate(it, r) for it in items if it["format"] == "mc" for r in range(1, len(it["options"]))]
    return items + rotated


def rotation_counts(items: list[dict[str, Any]]) -> tuple[int, int]:
    """(fixed-order MC items, rotated items) of a built item list."""
    rotated = sum(1 for it in items if it.get("rotation"))
    fixed = sum(1 for it in items if it["format"] == "mc" and not it.get("rotation"))
    return fixed, rotated


# ---------------------------------------------------------------- score


def rotation_index(item_ids: pd.Series) -> pd.DataFrame:
    """``base`` item id and ``rotation`` (0 for a fixed-order item) of each record's item id."""
    parts = item_ids.str.extract(r"^(?P<base>.*?)(?:@r(?P<rotation>\d+))?$")
    parts["rotation"] = parts["rotation"].fillna("0").astype(int)
    return parts


def is_rotated(item_ids: pd.Series) -> pd.Series:
    """Rows of rotated items (rotation >= 1): the fixed-order metrics leave them out."""
    return item_ids.str.contains(r"@r\d+$", regex=True)


def _letter_probs(rows: pd.DataFrame) -> np.ndarray:
    """rows x 4: P(letter) from answer_probs (normalised), else the one-hot of the parsed answer;
    a row without either is all zeros."""
    from framebench.records import decode_answer_probs

    out = np.zeros((len(rows), len(LETTERS)))
    for i, (cell, answer, parse) in enumerate(zip(rows["answer_probs"], rows["answer"], rows["parse"],
                                                  strict=True)):
        probs = decode_answer_probs(cell)
        if probs:
            out[i] = [probs.get(letter, 0.0) for letter in LETTERS]
            total = out[i].sum()
            out[i] = out[i] / total if total > 0 else out[i]
        elif parse == "ok" and answer in LETTERS:
            out[i, LETTERS.index(answer)] = 1.0
    return out


def letter_prior(rows: pd.DataFrame) -> np.ndarray:
    """The mean of P(letter) over the rows that have one (PriDe's prior over option letters)."""
    probs = _letter_probs(rows)
    probs = probs[probs.sum(axis=1) > 0]
    return probs.mean(axis=0) if len(probs) else np.full(len(LETTERS), np.nan)


def families(df: pd.DataFrame) -> pd.DataFrame:
    """The FramingQA MC rows of questions a model answered in a complete cycle of rotations
    (rotation 0, whose rows may come from another run of that model, through the last); columns
    ``base``, ``rotation``, ``right`` added."""
    mc = df[df["suite"].isin([FIXED_SUITE, ROTATED_SUITE]) & (df["format"] == "mc")]
    if mc.empty or not is_rotated(mc["item_id"]).any():  # no rotated row: no family
        return mc.iloc[:0].assign(base=[], rotation=[], right=[])
    mc = pd.concat([mc.reset_index(drop=True), rotation_index(mc["item_id"]).reset_index(drop=True)], axis=1)
    fam = mc[complete_cycles(mc)]
    return fam.assign(right=(fam["correct"].fillna(False).astype(bool) & (fam["parse"] == "ok")).astype(float))


def complete_cycles(mc: pd.DataFrame) -> np.ndarray:
    """Per row: whether its (model, base) family is a complete cycle, i.e. the model answered
    rotation 0 and every rotation up to the last one seen (only a complete cycle puts every option
    at every letter once: PriDe's balance), the last one at least 1. The rotations are whole
    numbers >= 0, so the set is 0 .. max exactly when min is 0 and there are max + 1 of them."""
    rotation = mc.groupby(["model", "base"], sort=False)["rotation"]
    low, high, count = rotation.transform("min"), rotation.transform("max"), rotation.transform("nunique")
    return ((low == 0) & (high > 0) & (count == high + 1)).to_numpy(bool)


def _mean(values: np.ndarray) -> float | None:
    v = values[np.isfinite(values)]
    return float(v.mean()) if len(v) else None


def _framing_effect(rows: pd.DataFrame, by: list[str]) -> pd.Series:
    """Per context: correct-bias minus incorrect-bias accuracy, within each ``by`` group,
    averaged over the groups."""
    biased = rows[rows["bias"].isin(["correct", "incorrect"])]
    acc = biased.groupby(["context_id", *by, "bias"])["right"].mean().unstack("bias")
    acc = acc.reindex(columns=["correct", "incorrect"])
    effect = acc["correct"] - acc["incorrect"]
    return effect.groupby(level="context_id").mean()


def _debiased(fixed: pd.DataFrame, prior: np.ndarray) -> tuple[float | None, int]:
    """(accuracy after dividing out ``prior``, rows) over the fixed-order rows that carry answer
    probabilities: argmax of P(letter) / prior(letter) (PriDe; ties go to the first letter)."""
    fixed = fixed[fixed["answer_probs"].fillna("") != ""]
    if fixed.empty or not (prior > 0).all():
        return None, 0
    picked = np.array(LETTERS)[(_letter_probs(fixed) / prior).argmax(axis=1)]
    return float((picked == fixed["gold"].to_numpy()).mean()), len(fixed)


def score_rotation(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {n_questions, n_contexts, small_sample, n_rotations, by_position, prior,
    strict_rotations(_ci), framing_effect_balanced(_ci), framing_effect_fixed(_ci), accuracy_fixed,
    debiased_accuracy, n_debiased}}`` for the models with rotated MC items; ``{}`` without any."""
    fam = families(df)
    out: dict[str, Any] = {}
    for model, rows in fam.groupby("model", sort=True):
        by_position = rows.groupby("gold")["right"].mean()
        prior = letter_prior(rows)
        letters = sorted(set(rows["gold"]))
        per_question = rows.groupby(["context_id", "base"])["right"].min()
        strict = per_question.groupby(level="context_id").mean().to_numpy(float)
        contexts = per_question.index.get_level_values("context_id").unique()
        task = rows.groupby("context_id")["task"].first()  # each context's stratum
        balanced = _framing_effect(rows, ["rotation"])
        balanced_tasks = task.reindex(balanced.index).to_numpy(object)
        balanced = balanced.to_numpy(float)
        fixed_rows = rows[rows["rotation"] == 0]
        fixed = _framing_effect(fixed_rows, []).reindex(contexts).to_numpy(float)
        debiased, n_debiased = _debiased(fixed_rows, prior)
        out[str(model)] = {
            "n_questions": int(len(per_question)), "n_contexts": int(len(strict)),
            "small_sample": stats.small_sample(len(strict)),
            "n_rotations": int(rows["rotation"].nunique()),
            "by_position": {g: float(by_position[g]) for g in letters},
            "prior": {letter: float(p) for letter, p in zip(LETTERS, prior, strict=True)},
            "strict_rotations": _mean(strict),
            "strict_rotations_ci": stats.share_interval(strict, task.reindex(contexts).to_numpy(object)),
            "framing_effect_balanced": _mean(balanced),
            "framing_effect_balanced_ci": stats.mean_interval(balanced, balanced_tasks, (-1.0, 1.0)),
            "framing_effect_fixed": _mean(fixed),
            "framing_effect_fixed_ci": stats.mean_interval(fixed, task.reindex(contexts).to_numpy(object),
                                                           (-1.0, 1.0)),
            "accuracy_fixed": _mean(fixed_rows["right"].to_numpy(float)),
            "debiased_accuracy": debiased, "n_debiased": n_debiased,
        }
    return out


# ---------------------------------------------------------------- report


def rotation_table(metrics: dict[str, Any]):
    """One row per model: position accuracy, letter prior, strict over rotations, framing effect
    fixed vs position-balanced, and (constrained) accuracy before and after dividing out the prior."""
    from framebench.scoring.formatting import (
        n_cell,
        pct,
        pct_ci,
        pp_ci,
        small_n_note,
        withheld,
        withheld_note,
    )
    from framebench.scoring.sections import MISSING, Table

    rows = []
    for model, m in metrics.items():
        prior, position = m.get("prior") or {}, m.get("by_position") or {}
        short = withheld(m.get("n_contexts"), stats.MIN_CONTEXTS)
        rows.append([model, n_cell(m.get("n_contexts")), str(m.get("n_questions", "")),
                     *(pct(position.get(letter)) for letter in LETTERS),
                     *(pct(prior.get(letter)) for letter in LETTERS),
                     pct_ci(m.get("strict_rotations"), m.get("strict_rotations_ci"),
                            withheld(m.get("n_contexts"), stats.MIN_CONTEXTS_BINARY)),
                     pp_ci(m.get("framing_effect_fixed"), m.get("framing_effect_fixed_ci"), short),
                     pp_ci(m.get("framing_effect_balanced"), m.get("framing_effect_balanced_ci"), short),
                     pct(m.get("accuracy_fixed")),
                     pct(m.get("debiased_accuracy")) if m.get("n_debiased") else MISSING])
    return Table(
        title="Multiple choice: option position (rotated options)",
        caption="Questions asked in every cyclic rotation of their options (framebench build framingqa "
        "--rotate-options), the gold in each position. n: contexts (questions: MC questions). "
        "Acc. gold at X: accuracy over the rotations whose gold letter is X. Prior X: the model's "
        "prior over option letters, the mean over all rotations of P(X) (probabilities for "
        "constrained answers, else the chosen letter; PriDe, Zheng et al. 2023): 25 % each means "
        "no position bias. Strict (rotations): share of a context's questions right in every "
        "rotation, averaged over contexts. Framing effect: correct- minus incorrect-bias accuracy "
        "in the fixed order (rotation 0), and position-balanced (per rotation, then averaged). "
        "Acc. fixed: fixed-order accuracy of these questions; debiased: the same rows after dividing "
        "P(letter) by the prior (constrained answers only). Brackets: 95 % score interval, stratified by task (strict), "
        "95 % t interval over contexts, stratified by task (framing effects). "
        "Definitions: docs/statistics.md#option-rotation." + withheld_note(rows) + small_n_note(rows, 1, "contexts"),
        header=["Model", "n", "Questions", *(f"Acc. gold at {x} (%)" for x in LETTERS),
                *(f"Prior {x} (%)" for x in LETTERS), "Strict (rotations) (%)",
                "Framing effect, fixed order (pp)", "Framing effect, position-balanced (pp)",
                "Acc. fixed (%)", "Acc. debiased (%)"],
        rows=rows)
