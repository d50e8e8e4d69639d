"""What the embodied suite compares between two planners on the same episode framings
(docs/statistics.md "Model comparisons"): per episode, ``completion`` (mean percent complete over
its framings) and ``strict_completion`` (1 when every biased framing succeeds; the McNemar
indicator)."""

from __future__ import annotations

import pandas as pd

from framebench.scoring.comparisons import Comparison, Measure


def embodied_values(records: pd.DataFrame) -> pd.DataFrame:
    rows = records[records["suite"] == "embodied"]
    success = rows["success"].astype("boolean").fillna(rows["percent_complete"] == 1).astype(float)
    rows = rows.assign(done=success)
    key = ["model", "context_id"]
    out = pd.DataFrame({"completion": rows.groupby(key, sort=True)["percent_complete"].mean()})
    biased = rows[rows["bias"] != "neutral"].groupby(key)["done"].min()
    out["strict_completion"] = (biased == 1).astype(float).reindex(out.index)
    return out


EMBODIED_COMPARISON = Comparison(
    title="FramingQA robotics (embodied)", group=(),
    measures=(Measure("completion", "Completion"), Measure("strict_completion", "Strict completion (all)",
                                                            "every biased framing succeeds")),
    values=embodied_values, test="strict_completion", per_model=True,
    columns=("context_id", "bias", "success", "percent_complete"))
