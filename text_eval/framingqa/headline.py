"""FramingQA's rows of the report's headline (``framebench.scoring.headline``): the framing effect.

Per (model, format), pooled over tasks: accuracy on correct-bias questions and on incorrect-bias
questions (per context the share of its rows of that bias answered right, averaged over
contexts), the framing effect (their difference, per context, averaged over contexts having
both) and strict accuracy (``strict_all``, copied from the FramingQA block). The accuracies and
the framing effect carry a 95 % t interval over contexts, stratified by task (the tasks are fixed
strata of the pooled mean; :func:`framebench.scoring.stats.mean_interval`), strict accuracy its
Wilson interval; an interval is None below its minimum number of contexts. ``framing_effect_mde``
is the framing effect detectable at 80 % power, alpha 0.05, from its clustered standard error
``framing_effect_se`` (docs/statistics.md "Power"). Unparsed answers count as wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats

KEYS = ("accuracy_correct", "accuracy_incorrect", "framing_effect")
BOUNDS = ((0.0, 1.0), (0.0, 1.0), (-1.0, 1.0))  # each key's range: its interval is clipped to it


def _value(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def per_context(df: pd.DataFrame) -> pd.DataFrame:
    """Per (model, format, task, context_id): ``correct`` and ``incorrect`` (share of the
    context's rows of that bias right) and ``effect`` (their difference)."""
    rows = df.loc[(df["suite"] == "framingqa") & df["bias"].isin(["correct", "incorrect"]),
                  ["model", "format", "task", "context_id", "bias", "parse", "correct"]]
    if rows.empty:
        return pd.DataFrame(columns=["correct", "incorrect", "effect"])
    right = (rows["correct"].astype(bool) & (rows["parse"] == "ok")).astype(float)
    table = (rows.assign(right=right)
             .groupby(["model", "format", "task", "context_id", "bias"], sort=True)["right"].mean()
             .unstack("bias"))
    for bias in ("correct", "incorrect"):
        if bias not in table.columns:
            table[bias] = np.nan
    table["effect"] = table["correct"] - table["incorrect"]
    return table


COLUMNS = ("correct", "incorrect", "effect")  # per_context's column of each key
GROUP = ["model", "format"]


def _intervals(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per key: the estimate, interval and contexts of every (model, format), stratified by task,
    in one vectorised call each."""
    frame = table.reset_index()
    return {key: stats.grouped_mean_intervals(frame, GROUP, column, "task", bounds)
            for key, column, bounds in zip(KEYS, COLUMNS, BOUNDS, strict=True)}


def _ci(found: pd.DataFrame, group: tuple[str, str]) -> tuple[float | None, list[float] | None]:
    """(estimate, interval) of one group; (None, None) when no context has the value."""
    if group not in found.index:
        return None, None
    row = found.loc[group]
    interval = None if np.isnan(row["low"]) else [float(row["low"]), float(row["high"])]
    return _value(float(row["estimate"])), interval


def score_headline(df: pd.DataFrame, framingqa: dict[str, Any]) -> dict[str, Any]:
    """``{model: {format: {accuracy_correct(_ci), accuracy_incorrect(_ci), framing_effect(_ci),
    framing_effect_se, framing_effect_mde, strict_all(_ci), n_contexts, small_sample}}}`` over the
    FramingQA records of ``df``."""
    table = per_context(df)
    if table.empty:
        return {}
    intervals = _intervals(table)
    sizes = table.groupby(level=GROUP, sort=True).size()
    out: dict[str, Any] = {}
    for (model, fmt), n in sizes.items():
        entry: dict[str, Any] = {"n_contexts": int(n), "small_sample": stats.small_sample(int(n))}
        for key in KEYS:
            entry[key], entry[f"{key}_ci"] = _ci(intervals[key], (model, fmt))
        entry["framing_effect_se"] = stats.clustered_se(table.loc[(model, fmt), "effect"].to_numpy(float))
        entry["framing_effect_mde"] = stats.mde(entry["framing_effect_se"])
        pooled = ((framingqa.get(model) or {}).get("all") or {}).get(fmt) or {}
        entry["strict_all"] = pooled.get("strict_all")
        entry["strict_all_ci"] = pooled.get("strict_all_ci")
        out.setdefault(str(model), {})[str(fmt)] = entry
    return out
