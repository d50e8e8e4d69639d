"""What FramingQA and OMIT compare between two models on the same items (docs/statistics.md
"Model comparisons"); the pairing, intervals and tests are the core's
(``framebench.scoring.comparisons``).

FramingQA, per (task, format) and pooled over tasks (``all``), per context: ``mean`` (share of
its questions right), ``strict_all`` (1 when every question is right: the McNemar indicator) and
``framing_effect`` (share right among its correct-bias questions minus among its incorrect-bias
ones). OMIT, per condition, per scenario with both frames parsed: ``OBR``/``ABR``/``FCR``
indicators of the (No, No), (Yes, Yes) and mixed patterns; McNemar on the OBR indicator.
"""

from __future__ import annotations

import numpy as np
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


def omit_values(records: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, scenario): OBR, ABR, FCR indicators over counted pairs (NaN when
    the scenario's pair does not count)."""
    from framebench.text_eval.omit.metrics import evaluated, pairs

    labeled = evaluated(records)
    has_label = labeled["conflicts"].fillna("") != ""
    table = pairs(labeled[has_label] if has_label.any() else labeled)
    pattern = table["pattern"]
    counted = pattern.notna().to_numpy()
    out = pd.DataFrame({"OBR": pattern == "NN", "ABR": pattern == "YY",
                        "FCR": pattern.isin(["YN", "NY"])}, index=table.index).astype(float)
    out.loc[~counted] = np.nan
    return out


def evaluated_model(model: str) -> bool:
    """OMIT compares evaluated models: ``omit_values`` leaves out the persona panel's records."""
    from framebench.text_eval.omit.metrics import PERSONA_PREFIX

    return not model.startswith(PERSONA_PREFIX)


FRAMINGQA_COMPARISON = Comparison(
    title="FramingQA (text)", group=("task", "format"),
    measures=(Measure("mean", "Mean accuracy"), Measure("strict_all", "Strict accuracy (all)",
                      "every question is answered right"),
              Measure("framing_effect", "Framing effect")),
    values=framingqa_values, test="strict_all", effect="framing_effect", pooled=("task", POOLED_TASK),
    per_model=True, columns=("context_id", "bias", "correct", "parse"), stratum="stratum")
OMIT_COMPARISON = Comparison(
    title="OMIT", group=("condition",),
    measures=(Measure("OBR", "OBR", "the scenario's pair is omission-biased (No under both frames)"),
              Measure("ABR", "ABR", "the pair is action-biased (Yes under both frames)"),
              Measure("FCR", "FCR", "the pair's answer changes with the frame")),
    values=omit_values, test="OBR", compares=evaluated_model,
    columns=("condition", "context_id", "frame", "answer", "parse", "conflicts"))
