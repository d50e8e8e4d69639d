"""Embodied (robotics) metrics per planner model (FramingQA paper Table 6).

An episode (``context_id``) has a neutral framing and biased framings at the three levels.
Report rows: ``overall``; ``root``, ``propositional``, ``global`` (the biased framings at that
level, plus every neutral framing for the ``*_mean_neutral`` column); then each constraint type
present (``none``, ``spatial``, ``temporal``, ``heterogeneous``: the episodes of that type).

Keys per row, for measure in completion (``percent_complete``), replans and steps
(``sim_steps``):

* ``<measure>_mean_<bias>``: mean over the row's framings with that bias.
* ``completion_strict_<dir>``: share of episodes whose every framing in the set succeeds, where
  the set is the episode's correct-bias framings (``correct``), incorrect-bias framings
  (``incorrect``) or both (``all``) within the row. Episodes without a framing in the set are
  left out.
* ``replans_strict_<dir>`` / ``steps_strict_<dir>``: mean over the set's framings of the
  episodes counted in ``completion_strict_<dir>``; None when no episode qualifies.
* ``completion_strict_<dir>_ci``: its 95 % Wilson interval over episodes; None below
  ``stats.MIN_CONTEXTS_BINARY`` episodes.
* ``n_episodes``: episodes in the row; ``small_sample``: fewer than ``stats.SMALL_N``.

``success`` is the record's flag (when null: ``percent_complete == 1``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring.stats import proportion_interval, small_sample
from framebench.vocabulary import LEVELS

MEASURES = {"completion": "percent_complete", "replans": "replans", "steps": "sim_steps"}
BIASES = ("neutral", "correct", "incorrect")
DIRECTIONS = ("correct", "incorrect", "all")
CONSTRAINT_ROWS = ("none", "spatial", "temporal", "heterogeneous")
KEY = ["model", "row"]
NEEDED = ["model", "context_id", "bias", "level", "constraint", "success", *MEASURES.values()]


def _views(df: pd.DataFrame) -> pd.DataFrame:
    """The records once per report row they belong to, tagged with column ``row``."""
    neutral = df["bias"] == "neutral"
    parts = [df.assign(row="overall")]
    parts += [df[(df["level"] == lv) | neutral].assign(row=lv)
              for lv in LEVELS if (df["level"] == lv).any()]
    parts += [df[df["constraint"] == c].assign(row=c)
              for c in CONSTRAINT_ROWS if (df["constraint"] == c).any()]
    return pd.concat(parts, ignore_index=True)


def _strict(views: pd.DataFrame, direction: str) -> pd.DataFrame:
    """Strict completion and strict replans/steps per (model, row) for one direction."""
    in_set = views["bias"] != "neutral" if direction == "all" else views["bias"] == direction
    rows = views[in_set]
    qualifies = rows.groupby([*KEY, "context_id"], sort=False)["success"].transform("all")
    episodes = rows.assign(q=qualifies).groupby([*KEY, "context_id"], sort=False)["q"].first()
    grouped = episodes.groupby(level=KEY)
    out = pd.DataFrame({f"completion_strict_{direction}": grouped.mean(),
                        f"_k_{direction}": grouped.sum(), f"_n_{direction}": grouped.size()})
    counted = rows[qualifies.to_numpy()]
    for measure, column in MEASURES.items():
        if measure != "completion":
            out[f"{measure}_strict_{direction}"] = counted.groupby(KEY)[column].mean()
    return out


def score_embodied(df: pd.DataFrame) -> dict[str, Any]:
    """``{model: {row: {key: value}}}`` for the embodied records in ``df`` (others ignored)."""
    df = df.loc[df["suite"] == "embodied", NEEDED]
    if df.empty:
        return {}
    success = df["success"].astype("boolean").fillna(df["percent_complete"] >= 1.0)
    df = df.assign(success=success.astype(bool),
                   replans=df["replans"].astype(float), sim_steps=df["sim_steps"].astype(float))
    views = _views(df)

    means = views.groupby([*KEY, "bias"])[list(MEASURES.values())].mean().unstack("bias")
    table = pd.DataFrame(index=views.groupby(KEY).size().index)
    for measure, column in MEASURES.items():
        for bias in BIASES:
            key = (column, bias)
            table[f"{measure}_mean_{bias}"] = means[key] if key in means.columns else np.nan
    for direction in DIRECTIONS:
        table = table.join(_strict(views, direction))
    table["n_episodes"] = views.groupby(KEY)["context_id"].nunique()

    order = ["overall", *LEVELS, *CONSTRAINT_ROWS]
    columns = [f"{m}_{kind}_{x}" for m in MEASURES for kind, xs in
               (("mean", BIASES), ("strict", DIRECTIONS)) for x in xs]
    report: dict[str, Any] = {}
    for (model, row), values in table.iterrows():  # one iteration per report row, not per record
        entry = {c: (None if pd.isna(values.get(c)) else float(values[c])) for c in columns}
        for d in DIRECTIONS:  # strict completion: a Wilson interval over episodes
            n = values.get(f"_n_{d}")
            entry[f"completion_strict_{d}_ci"] = (None if pd.isna(n) else
                                                  proportion_interval(float(values[f"_k_{d}"]), int(n)))
        entry["n_episodes"] = int(values["n_episodes"])
        entry["small_sample"] = small_sample(entry["n_episodes"])
        report.setdefault(model, {})[row] = entry
    return {model: dict(sorted(rows.items(), key=lambda kv: order.index(kv[0])))
            for model, rows in report.items()}
