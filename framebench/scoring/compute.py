"""The unified report: every registered suite's metrics from one records frame.

``{suite name: that suite's metrics}`` plus the report-wide ``headline`` (per model: framing
effect and strict accuracy; built from the ``framingqa`` section when present), e.g. ``{"framingqa": {model: {task: {format: {...}}}},
"embodied": {model: {row: {...}}}, "omit": {"rates", "mcnemar", "conflicts", "analysis"}}``;
fractions, a section only when the records hold that suite, JSON-ready (no NaN or numpy
scalars: a missing value is None).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from framebench.records import label_answer_modes
from framebench.scoring.bootstrap import N_RESAMPLES
from framebench.scoring.headline import score_headline
from framebench.scoring.susceptibility import score_susceptibility


def jsonable(value: Any) -> Any:
    """``value`` with NaN/inf as None and numpy/pandas scalars as Python ones."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def compute_report(df: pd.DataFrame, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """The report.json structure for a records frame: each registered suite's metrics, the
    headline, and framing susceptibility where records carry answer probabilities. A model's
    constrained rows are scored as a model of their own (``label_answer_modes``)."""
    from framebench.registry import ordered_suites

    df = label_answer_modes(df)
    report: dict[str, Any] = {}
    for suite in ordered_suites():
        metrics = suite.score(df, n_resamples)
        if metrics:
            report[suite.name] = metrics
    if report.get("framingqa"):
        report["headline"] = score_headline(df, report["framingqa"], n_resamples=n_resamples)
    susceptibility = score_susceptibility(df, n_resamples=n_resamples)
    if susceptibility:
        report["susceptibility"] = susceptibility
    return jsonable(report)
