"""What ``framebench compare`` and the report's comparisons compare between two models on FramingQA:
the measures of ``framebench.text_eval.comparisons`` (mean, strict, framing effect) and the
systematicity measures, per context over every level and bias: ``polarity_consistency``,
``paraphrase_invariance`` and ``framing_minus_rewording``
(``framebench.text_eval.framingqa.systematicity``; docs/report.md "Systematicity")."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from framebench.scoring.comparisons import Measure
from framebench.text_eval.comparisons import (
    FRAMINGQA_COMPARISON,
    framingqa_values,
    with_pooled_task,
)
from framebench.text_eval.framingqa.systematicity import (
    ALL,
    KEY,
    diagnostic_contexts,
    effect_contexts,
    prepared,
)

# a constant answer is perfectly invariant and never consistent: these do not tell a model from
# a trivial baseline (framebench.scoring.comparisons_report)
MEASURES = (Measure("polarity_consistency", "Polarity consistency", baseline=False),
            Measure("paraphrase_invariance", "Paraphrase invariance", baseline=False),
            Measure("framing_minus_rewording", "Framing − rewording", baseline=False))


def systematicity_values(records: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task, format, context_id): the three systematicity measures (NaN: none)."""
    rows = prepared(records)
    diag = diagnostic_contexts(rows).reset_index()
    diag = diag[(diag["level"] == ALL) & (diag["bias"] == ALL)].set_index(KEY)
    effects = effect_contexts(rows).reset_index()
    effects = effects[effects["level"] == ALL].set_index(KEY)
    out = pd.DataFrame({"polarity_consistency": diag["polarity"], "paraphrase_invariance": diag["invariance"]})
    difference = (effects["framing"] - effects["rewording"]).rename("framing_minus_rewording")
    return out.join(difference, how="outer").reindex(columns=[m.key for m in MEASURES])


def values(records: pd.DataFrame) -> pd.DataFrame:
    """FramingQA's per-context values with the systematicity measures (task ``all`` too)."""
    base = framingqa_values(records)
    extra = with_pooled_task(systematicity_values(records)).drop(columns="stratum")
    return base.join(extra, how="left")


COMPARISON = replace(
    FRAMINGQA_COMPARISON,
    measures=(*FRAMINGQA_COMPARISON.measures, *MEASURES),
    values=values,
    columns=(*FRAMINGQA_COMPARISON.columns, "level", "form", "phrasing", "distractor", "slot", "gold", "answer"))
