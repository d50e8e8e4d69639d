"""The unified report: every registered report part's entry, computed from the scored runs.

``{part name: its entry}``: each suite's metrics under its name, plus the report-wide parts
(``meta``: provenance; ``headline``; ``susceptibility``; any a plugin registers); fractions, an
entry only when the part has something to say, JSON-ready (no NaN or numpy scalars: a missing
value is None).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from framebench.scoring.bootstrap import N_RESAMPLES

if TYPE_CHECKING:
    from framebench.runs import Runs


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


def compute_report(records: pd.DataFrame | Runs, n_resamples: int = N_RESAMPLES, *,
                   quick: bool = False) -> dict[str, Any]:
    """The report.json structure: every registered report part's entry (``scoring.report``),
    JSON-ready. ``records``: the scored runs (``framebench.runs.load_runs``), or a bare records
    frame (then a model's constrained rows are labelled as a model of their own here)."""
    from framebench.runs import Runs
    from framebench.scoring.report import compute_report as compute_parts

    runs = records if isinstance(records, Runs) else Runs.of(records)
    return jsonable(compute_parts(runs, n_resamples, quick=quick))
