"""The unified report (issue 2 item 5): every suite's metrics from one records frame.

``{"headline": {model: {format: {...}}}, "framingqa": {model: {task: {format: {...}}}}, "embodied": {model: {row: {...}}},
"omit": {"rates", "mcnemar", "conflicts", "analysis"}}``; fractions, a section only when the
records hold that suite, JSON-ready (no NaN or numpy scalars: a missing value is None).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring.bootstrap import N_RESAMPLES
from framebench.scoring.embodied import score_embodied
from framebench.scoring.framingqa import score_framingqa
from framebench.scoring.headline import score_headline
from framebench.scoring.omit import score_omit
from framebench.scoring.susceptibility import label_answer_modes, score_susceptibility


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


def _omit_analysis(df: pd.DataFrame) -> Any:
    """Helper D's OMIT analysis (persona agreement etc.) over the OMIT records, persona rows
    included; None until that module exists."""
    try:
        from framebench.scoring.omit_analysis import analyze
    except ImportError:
        return None
    return analyze(df[df["suite"] == "omit"])


def compute_report(df: pd.DataFrame, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """The report.json structure for a records frame (see the module docstring)."""
    df = label_answer_modes(df)
    report: dict[str, Any] = {}
    framingqa = score_framingqa(df, n_resamples=n_resamples)
    if framingqa:
        report["headline"] = score_headline(df, framingqa, n_resamples=n_resamples)
        report["framingqa"] = framingqa
    embodied = score_embodied(df)
    if embodied:
        report["embodied"] = embodied
    omit = score_omit(df)
    if omit:
        analysis = _omit_analysis(df)
        if analysis is not None:
            omit["analysis"] = analysis
        report["omit"] = omit
    susceptibility = score_susceptibility(df, n_resamples=n_resamples)
    if susceptibility:
        report["susceptibility"] = susceptibility
    return jsonable(report)
