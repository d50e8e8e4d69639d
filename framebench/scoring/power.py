"""Power planning from a pilot run (``framebench power``; docs/statistics.md "Power").

For each suite that compares models, per group and model, from the pilot's per-context values:
the framing effect detectable with N contexts (the suite's ``effect`` measure against 0), and the
between-model difference of each measure detectable with N contexts. The latter uses the paired
per-context differences when the pilot holds a second model on the same items (one row per pair);
with a single model it assumes a second model of the same per-context variance, uncorrelated with
the first: SD of the difference = sqrt(2) * SD (pairing with a positive correlation only shrinks it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring import stats
from framebench.scoring.comparisons import Comparison, _groups, paired_groups


def _sd(values: np.ndarray) -> float | None:
    """The pilot's per-context SD; None when it cannot be planned from (fewer than 2 contexts,
    or every context the same: a pilot SD of 0 would promise any effect to be detectable)."""
    v = values[np.isfinite(values)]
    sd = float(v.std(ddof=1)) if len(v) >= 2 else 0.0
    return sd if sd > 0 else None


def _mde_at(sd: float | None, contexts: int) -> float | None:
    return None if sd is None else stats.mde(sd / math.sqrt(contexts))


def _contexts(labels: dict[str, str], spec: Comparison, values: pd.DataFrame, per_task: int) -> int:
    """Planned contexts of a group: ``per_task``, times the pooled groups' number of parts."""
    if spec.pooled is None or labels.get(spec.pooled[0]) != spec.pooled[1]:
        return per_task
    level, pooled = spec.pooled
    others = {k: v for k, v in labels.items() if k != level}
    index = values.index.to_frame(index=False)
    for k, v in others.items():
        index = index[index[k].astype(str) == v]
    parts = index.loc[index[level].astype(str) != pooled, level].nunique()
    return per_task * max(1, int(parts))


def _effect_rows(values: pd.DataFrame, spec: Comparison, suite: str, contexts: int,
                 single: bool) -> list[dict[str, Any]]:
    """Each model's effect rows; with a ``single`` model also its assumed-difference rows."""
    rows = []
    for labels, part in _groups(values, spec.group):
        n = _contexts(labels, spec, values, contexts)
        for model, mine in part.groupby(level="model", sort=True):
            for m in spec.measures:
                x = mine[m.key].to_numpy(float)
                paired = m.key == spec.effect
                if not paired and not single:
                    continue
                sd = _sd(x)
                rows.append({"suite": suite, "group": labels, "model": str(model), "measure": m.label,
                             "kind": "effect" if paired else "difference (one model, ρ = 0)",
                             "pilot_n": int(np.isfinite(x).sum()), "planned_n": n, "sd": sd,
                             "mde": _mde_at(sd if paired else (None if sd is None else math.sqrt(2) * sd), n)})
    return rows


def _pair_rows(records: pd.DataFrame, spec: Comparison, suite: str, models: list[str],
               contexts: int) -> list[dict[str, Any]]:
    rows = []
    for a, b, labels, values, part in paired_groups(records, spec, models):
        n = _contexts(labels, spec, values, contexts)
        present = part.index.get_level_values("model")
        if a not in present or b not in present:
            continue
        va, vb = part.xs(a, level="model").align(part.xs(b, level="model"), join="inner", axis=0)
        for m in spec.measures:
            d = va[m.key].to_numpy(float) - vb[m.key].to_numpy(float)
            sd = _sd(d)
            rows.append({"suite": suite, "group": labels, "model": f"{a} vs {b}", "measure": m.label,
                         "kind": "difference (paired)", "pilot_n": int(np.isfinite(d).sum()),
                         "planned_n": n, "sd": sd, "mde": _mde_at(sd, n)})
    return rows


def plan(records: pd.DataFrame, specs: Iterable[tuple[str, Comparison]], contexts: int) -> list[dict[str, Any]]:
    """Rows ``{suite, group, model, measure, kind, pilot_n, sd, mde}``: the effect or difference
    detectable at 80 % power, alpha 0.05 (two-sided), with ``contexts`` contexts per group."""
    from framebench.scoring.sections import natural_key

    out = []
    for suite, spec in specs:
        rows = records[records["suite"] == suite]
        if rows.empty:
            continue
        models = sorted(rows["model"].unique(), key=natural_key)
        out += _effect_rows(spec.values(rows), spec, suite, contexts, single=len(models) == 1)
        out += _pair_rows(rows, spec, suite, models, contexts)
    return out


def plan_table(rows: list[dict[str, Any]], contexts: int):
    """The plan as a display table (percentage points)."""
    from framebench.scoring.comparisons_report import _group_cell
    from framebench.scoring.formatting import num, pct
    from framebench.scoring.sections import Table

    body = [[row["suite"], " / ".join(_group_cell(k, v) for k, v in row["group"].items()) or "all",
             row["model"], row["measure"], row["kind"], str(row["pilot_n"]), str(row["planned_n"]),
             MISSING_SD if row["sd"] is None else num(100 * row["sd"]), pct(row["mde"])]
            for row in rows]
    return Table(
        title=f"Detectable with {contexts} contexts per task (80 % power, α = 0.05, two-sided)",
        caption="effect: the framing effect against 0 (its per-context SD from the pilot); difference "
        "(paired): model A minus model B on the same items; difference (one model, ρ = 0): a second "
        "model of the same variance, uncorrelated. MDE = (z₀.₉₇₅ + z₀.₈₀) · SD / √N = 2.80 · SD / √N, "
        "in percentage points; N: the planned contexts (pooled tasks: N per task times the tasks). –: the "
        "pilot cannot plan it (every context the same, or fewer than 2) (docs/statistics.md#power).",
        header=["Suite", "Group", "Model", "Measure", "Kind", "Pilot n", "Planned n", "SD (pp)", "MDE (pp)"],
        rows=body)


MISSING_SD = "–"
