"""What FramingQA compares between two models on the same items (docs/statistics.md
"Model comparisons"; OMIT's: ``framebench.text_eval.omit.comparisons``); the pairing, intervals
and tests are the core's (``framebench.scoring.comparisons``).

FramingQA, per (task, format) and pooled over tasks (``all``), per context: ``mean`` (share of
its questions right), ``strict_all`` (1 when every question is right: the McNemar indicator) and
``framing_effect`` (share right among its correct-bias questions minus among its incorrect-bias
ones).
"""

from __future__ import annotations

import pandas as pd

from framebench.scoring.comparisons import Comparison, Measure

POOLED_TASK = "all"


def _right(rows: pd.DataFrame) -> pd.Series:
    return (rows["correct"].fillna(False).astype(bool) & (rows["parse"] == "ok")).astype(float)


def framingqa_values(records: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task, format, context_id): mean, strict_all, framing_effect, and ``stratum``
    (the context's own task); task ``all`` repeats every context under the pooled task, where
    ``stratum`` makes its intervals the stratified ones."""
    rows = records[records["suite"] == "framingqa"]
    rows = rows.assign(right=_right(rows))
    key = ["model", "task", "format", "context_id"]
    grouped = rows.groupby(key, sort=True)["right"]
    out = pd.DataFrame({"mean": grouped.mean(), "strict_all": (grouped.min() == 1).astype(float)})
    by_bias = rows[rows["bias"].isin(["correct", "incorrect"])].groupby([*key, "bias"])["right"].mean()
    by_bias = by_bias.unstack("bias").reindex(columns=["correct", "incorrect"])
    out["framing_effect"] = (by_bias["correct"] - by_bias["incorrect"]).reindex(out.index)
    return with_pooled_task(out)


def with_pooled_task(values: pd.DataFrame) -> pd.DataFrame:
    """Per-task values with ``stratum`` (the context's task) and every context once more under the
    pooled task ``all``."""
    values = values.assign(stratum=values.index.get_level_values("task").astype(str))
    pooled = values.rename(index=lambda _: POOLED_TASK, level="task")
    return pd.concat([values, pooled]).sort_index()


FRAMINGQA_COMPARISON = Comparison(
    title="FramingQA (text)", group=("task", "format"),
    measures=(Measure("mean", "Mean accuracy"), Measure("strict_all", "Strict accuracy (all)",
                      "every question is answered right"),
              Measure("framing_effect", "Framing effect")),
    values=framingqa_values, test="strict_all", effect="framing_effect", pooled=("task", POOLED_TASK),
    per_model=True, columns=("context_id", "bias", "correct", "parse"), stratum="stratum")
