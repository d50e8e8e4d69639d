"""OMIT metrics (OMIT paper Tables 2 and 11, Figures 4 and 5).

A pair is the action and omission frame of one scenario (``context_id``) for one model and
condition. It counts when both frames are present with a parsed ``Yes``/``No`` answer; any other
scenario seen for that model and condition is an ``unparsed_pairs`` case. Over counted pairs,
with the pattern written (action, omission): ``OBR`` = share of (No, No), ``ABR`` = (Yes, Yes),
``FCR`` = (Yes, No) + (No, Yes); ``OBR_low``/``OBR_high`` are the Wilson 95 % interval (None
below ``stats.MIN_CONTEXTS_BINARY`` pairs); ``small_sample``: fewer than ``stats.SMALL_N`` pairs.

Intervention tests: for each model and condition Mk (k >= 1) beside M0, over scenarios with a
counted pair in both, ``b`` = NN at M0 but not at Mk, ``c`` = the reverse; ``p`` is the exact
one-sided McNemar p-value P(X >= b), X ~ Bin(b + c, 1/2) (H1: Mk has fewer NN; p = 1 when
b + c = 0); ``p_holm`` is Holm-adjusted across all model x intervention tests.

Per-conflict OBR: a scenario's ``conflicts`` is ``|``-joined labels; it counts for each label.

Scope: the OMIT benchmark is the conflict-labeled scenarios (paper: the 218). The evaluation
items also carry the unlabeled candidate pool (``conflicts == ""``, needed for the random
baselines of :mod:`framebench.text_eval.omit.analysis`), so when any record has a label, the rates,
tests and per-conflict OBR cover the labeled scenarios only (``"scope": "labeled"``); a record
set without any label (e.g. an ad-hoc scenario set) is scored whole (``"scope": "all"``).

Records of models named ``persona:...`` are the construction panel's answers, not evaluated
models: they are left out here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from framebench.scoring.stats import proportion_intervals, small_sample

PERSONA_PREFIX = "persona:"
BASELINE = "M0"
SCENARIO = ["model", "condition", "context_id"]


def evaluated(df: pd.DataFrame) -> pd.DataFrame:
    """The OMIT records of evaluated models (persona-panel rows dropped)."""
    keep = (df["suite"] == "omit") & ~df["model"].str.startswith(PERSONA_PREFIX)
    return df.loc[keep, [*SCENARIO, "frame", "answer", "parse", "conflicts"]]


def pairs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, condition, scenario) seen: ``pattern`` (e.g. ``NY``, action first;
    NaN when the pair does not count) and the scenario's ``conflicts``."""
    parsed = df[(df["parse"] == "ok") & df["answer"].isin(["Yes", "No"])]
    answers = (parsed.assign(letter=parsed["answer"].str[0])
               .groupby([*SCENARIO, "frame"])["letter"].first().unstack("frame"))
    scenarios = df.groupby(SCENARIO)["conflicts"].first().to_frame()
    for frame in ("action", "omission"):
        scenarios[frame] = answers[frame] if frame in answers.columns else np.nan
    both = scenarios["action"].notna() & scenarios["omission"].notna()
    # object first: a frame with no parsed answer is an all-NaN float column, which "" cannot fill
    joined = (scenarios["action"].astype(object).fillna("").astype(str)
              + scenarios["omission"].astype(object).fillna("").astype(str))
    scenarios["pattern"] = joined.astype(object).where(both, None)
    return scenarios[["pattern", "conflicts"]]


def _rate(count: float, n: float) -> float | None:
    return float(count / n) if n else None


def rates(table: pd.DataFrame) -> dict[str, Any]:
    """``{model: {condition: {n, OBR, OBR_low, OBR_high, ABR, FCR, unparsed_pairs, small_sample}}}``."""
    pattern = table["pattern"]
    counts = pd.DataFrame({
        "n": pattern.notna(), "NN": pattern == "NN", "YY": pattern == "YY",
        "FC": pattern.isin(["YN", "NY"]), "unparsed_pairs": pattern.isna(),
    }).groupby(level=["model", "condition"]).sum()
    intervals = proportion_intervals(counts["NN"].to_numpy(), counts["n"].to_numpy())
    out: dict[str, Any] = {}
    for ((model, condition), row), ci in zip(counts.iterrows(), intervals, strict=True):
        out.setdefault(model, {})[condition] = {
            "n": int(row["n"]),
            "OBR": _rate(row["NN"], row["n"]),
            "OBR_low": None if ci is None else ci[0],
            "OBR_high": None if ci is None else ci[1],
            "ABR": _rate(row["YY"], row["n"]),
            "FCR": _rate(row["FC"], row["n"]),
            "unparsed_pairs": int(row["unparsed_pairs"]),
            "small_sample": small_sample(int(row["n"])),
        }
    return out


def mcnemar(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The intervention tests, ordered by model then condition (see module docstring)."""
    nn = (table["pattern"].dropna() == "NN").unstack("condition")
    if BASELINE not in nn.columns:
        return []
    tests = []
    interventions = [c for c in nn.columns if c != BASELINE and c[1:].isdigit()]
    for condition in sorted(interventions, key=lambda c: int(c[1:])):
        both = nn[[BASELINE, condition]].dropna()
        base, other = both[BASELINE].astype(bool), both[condition].astype(bool)
        counts = pd.DataFrame({"b": base & ~other, "c": ~base & other}).groupby(level="model").sum()
        counts = counts.reindex(nn.index.get_level_values("model").unique(), fill_value=0)
        has_both = both.groupby(level="model").size().reindex(counts.index, fill_value=0) > 0
        for model, row in counts[has_both].iterrows():
            tests.append({"model": model, "condition": condition, "b": int(row["b"]), "c": int(row["c"])})
    if not tests:
        return []
    # imported here: scipy and statsmodels take a second, and the suite loads this module at registration
    from scipy.stats import binom
    from statsmodels.stats.multitest import multipletests

    b = np.array([t["b"] for t in tests])
    c = np.array([t["c"] for t in tests])
    p = binom.sf(b - 1, b + c, 0.5)  # P(X >= b); 1 when b + c = 0
    p_holm = multipletests(p, alpha=0.05, method="holm")[1]
    for test, pv, ph in zip(tests, p, p_holm, strict=True):
        test["p"], test["p_holm"] = float(pv), float(ph)
    return sorted(tests, key=lambda t: (t["model"], int(t["condition"][1:])))


def conflicts(table: pd.DataFrame) -> dict[str, Any]:
    """``{model: {condition: {label: OBR}}}`` over counted pairs."""
    counted = table.dropna(subset=["pattern"])
    labels = counted.assign(label=counted["conflicts"].fillna("").str.split("|")).explode("label")
    labels = labels[labels["label"].str.len() > 0]
    obr = (labels["pattern"] == "NN").groupby([labels.index.get_level_values("model"),
                                               labels.index.get_level_values("condition"),
                                               labels["label"]]).mean()
    out: dict[str, Any] = {}
    for (model, condition, label), value in obr.items():
        out.setdefault(model, {}).setdefault(condition, {})[label] = float(value)
    return out


def score_omit(df: pd.DataFrame) -> dict[str, Any]:
    """``{"scope", "rates", "mcnemar", "conflicts"}`` for the evaluated OMIT records in ``df``;
    ``{}`` when there are none."""
    df = evaluated(df)
    if df.empty:
        return {}
    labeled = df["conflicts"].fillna("") != ""
    scope = "labeled" if labeled.any() else "all"
    table = pairs(df[labeled] if labeled.any() else df)
    return {"scope": scope, "rates": rates(table), "mcnemar": mcnemar(table),
            "conflicts": conflicts(table)}
