"""FramingQA's rows of the report's headline (``framebench.scoring.headline``): the framing effect.

Per (model, format), pooled over tasks: accuracy on correct-bias questions and on incorrect-bias
questions (per context the share of its rows of that bias answered right, averaged over
contexts), the framing effect (their difference, per context, averaged over contexts having
both) and strict accuracy (``strict_all``, copied from the FramingQA block). The accuracies and
the framing effect carry a 95 % cluster-bootstrap interval over contexts, strict accuracy its
Wilson interval; ``framing_effect_mde`` is the framing effect detectable at 80 % power, alpha 0.05,
from its clustered standard error ``framing_effect_se`` (docs/statistics.md "Power"). Unparsed
answers count as wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats
from framebench.scoring.bootstrap import N_RESAMPLES, cluster_ci

KEYS = ("accuracy_correct", "accuracy_incorrect", "framing_effect")


def _value(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def score_headline(df: pd.DataFrame, framingqa: dict[str, Any],
                   n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """``{model: {format: {accuracy_correct(_ci), accuracy_incorrect(_ci), framing_effect(_ci),
    framing_effect_se, framing_effect_mde, strict_all(_ci), n_contexts}}}`` over the FramingQA
    records of ``df``."""
    rows = df.loc[(df["suite"] == "framingqa") & df["bias"].isin(["correct", "incorrect"]),
                  ["model", "format", "task", "context_id", "bias", "parse", "correct"]]
    if rows.empty:
        return {}
    right = (rows["correct"].astype(bool) & (rows["parse"] == "ok")).astype(float)
    per_context = (rows.assign(right=right)
                   .groupby(["model", "format", "task", "context_id", "bias"], sort=True)["right"].mean()
                   .unstack("bias"))
    for bias in ("correct", "incorrect"):
        if bias not in per_context.columns:
            per_context[bias] = np.nan
    per_context["effect"] = per_context["correct"] - per_context["incorrect"]
    out: dict[str, Any] = {}
    for (model, fmt), group in per_context.groupby(level=["model", "format"], sort=True):
        values = group[["correct", "incorrect", "effect"]].to_numpy(dtype=float)
        means = [float(np.nanmean(col)) if np.isfinite(col).any() else np.nan for col in values.T]
        ci = cluster_ci(values, f"{model}|{fmt}|headline", n_resamples)
        entry: dict[str, Any] = {"n_contexts": len(group)}
        for i, key in enumerate(KEYS):
            entry[key] = _value(means[i])
            entry[f"{key}_ci"] = None if not np.isfinite(ci[i]).all() else [float(ci[i, 0]), float(ci[i, 1])]
        entry["framing_effect_se"] = stats.clustered_se(values[:, 2])
        entry["framing_effect_mde"] = stats.mde(entry["framing_effect_se"])
        pooled = ((framingqa.get(model) or {}).get("all") or {}).get(fmt) or {}
        entry["strict_all"] = pooled.get("strict_all")
        entry["strict_all_ci"] = pooled.get("strict_all_ci")
        out.setdefault(str(model), {})[str(fmt)] = entry
    return out
