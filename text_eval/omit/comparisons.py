"""What OMIT compares between two models on the same scenarios (docs/statistics.md "Model
comparisons"): per condition, per scenario with both frames parsed, ``OBR``/``ABR``/``FCR``
indicators of the (No, No), (Yes, Yes) and mixed patterns; McNemar on the OBR indicator. The
pairing, intervals and tests are the core's (``framebench.scoring.comparisons``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from framebench.scoring.comparisons import Comparison, Measure
from framebench.text_eval.omit.metrics import PERSONA_PREFIX, evaluated, pairs


def omit_values(records: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, scenario): OBR, ABR, FCR indicators over counted pairs (NaN when
    the scenario's pair does not count)."""
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
    return not model.startswith(PERSONA_PREFIX)


OMIT_COMPARISON = Comparison(
    title="OMIT", group=("condition",),
    measures=(Measure("OBR", "OBR", "the scenario's pair is omission-biased (No under both frames)"),
              Measure("ABR", "ABR", "the pair is action-biased (Yes under both frames)"),
              Measure("FCR", "FCR", "the pair's answer changes with the frame")),
    values=omit_values, test="OBR", compares=evaluated_model,
    columns=("condition", "context_id", "frame", "answer", "parse", "conflicts"))
