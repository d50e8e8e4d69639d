"""OMIT analyses beyond the common metrics (``framebench.text_eval.omit.metrics``), from records alone.

- ``strength``: OBR by persona-disagreement strength (paper Figure 3). A scenario's strength is the
  number of conflicting persona pairs, |(Y,N) group| x |(N,Y) group| (0 for pool scenarios), read
  from the panel's records (``model`` = ``persona:<name>``) when present, else from ``conflicts``
  (the two agree: every cross-group pair is one label).
- ``fingerprint``: Cohen's kappa between each model x condition's frame-level answers and each
  persona's, on the selected scenarios, with a two-sided permutation p-value (paper Figure 6).
- ``random_baselines``: OBR on the selected set (``conflicts`` != "") vs size-matched random draws
  from the full valid pool (selected + pool) and from the non-selected complement, with the lift
  over random-full (observed minus each draw, K = 2000; paper Figure 2, Tables 8 and 10).
- ``trace_audit``: M1 traces of scenarios that were (N,N) at M0, by transition, with tier-A
  (named framework or biomedical-ethics principle) and tier-A/B (any principle-like language)
  lexicon hits in either frame's trace (paper Table 12).
- ``rates_selected`` / ``per_conflict``: the common metrics restricted to the selected scenarios.
"""

from __future__ import annotations

import math
import re
import zlib
from typing import Any

import numpy as np
import pandas as pd

from framebench.text_eval.omit import metrics as common
from framebench.text_eval.omit.analysis_report import figures, markdown, tables

__all__ = ["analyze", "tables", "markdown", "figures", "kappa_permutation", "tiers"]

PERSONA_PREFIX = common.PERSONA_PREFIX
PERSONA_ORDER = ("utilitarianism", "deontology", "virtue", "care", "contractualism")
K_RANDOM = 2000
K_PERMUTATIONS = 2000
AUDIT_CONDITION = "M1"

# Table 12 lexicons (case-insensitive, whole words). Tier A: a named normative framework or a named
# biomedical-ethics principle. Tier B: broader principle-like language; tier A/B = A or B.
TIER_A_TERMS = (
    r"utilitarian\w*", r"consequentialis\w*", r"deontolog\w*", r"kant\w*", r"categorical imperative",
    r"virtue ethic\w*", r"virtue theory", r"aristotel\w*", r"ethics of care", r"care ethic\w*",
    r"contractualis\w*", r"contractarian\w*", r"social contract", r"(?:doctrine|principle) of double effect",
    r"autonomy", r"beneficence", r"non-?maleficence", r"principle of justice", r"distributive justice",
    r"respect for persons",
)
TIER_B_TERMS = (
    r"principles?", r"duty", r"duties", r"obligations?", r"rights", r"right to", r"fairness", r"justice",
    r"dignity", r"respect(?:ing)? (?:for|the)", r"greater good", r"well-?being", r"welfare", r"consent",
    r"sanctity of life", r"do no harm", r"golden rule", r"integrity", r"compassion", r"honesty",
    r"moral responsibility", r"the right thing",
)
TIER_A = re.compile(r"\b(?:" + "|".join(TIER_A_TERMS) + r")\b", re.IGNORECASE)
TIER_B = re.compile(r"\b(?:" + "|".join(TIER_B_TERMS) + r")\b", re.IGNORECASE)
TRANSITIONS = ("NN->FC", "NN->NN", "NN->YY", "NN->unparsed")


def analyze(df: pd.DataFrame, seed: int = 0, k_random: int = K_RANDOM,
            k_permutations: int = K_PERMUTATIONS) -> dict[str, Any]:
    """All OMIT analyses for the records in ``df`` (JSON-serializable, no NaN); ``{}`` without OMIT rows."""
    df = df[df["suite"] == "omit"]
    if df.empty:
        return {}
    personas = df[df["model"].str.startswith(PERSONA_PREFIX)]
    ev = df[~df["model"].str.startswith(PERSONA_PREFIX)]  # all columns: the audit reads outputs
    table = common.pairs(ev) if not ev.empty else _empty_table()
    selected_table = table[table["conflicts"].fillna("") != ""]
    out = {
        "seed": seed,
        "rates_selected": common.rates(selected_table) if not selected_table.empty else {},
        "per_conflict": common.conflicts(selected_table) if not selected_table.empty else {},
        "strength": strength_vs_obr(table, personas),
        "fingerprint": fingerprint(ev, personas, seed=seed, k=k_permutations),
        "random_baselines": random_baselines(table, seed=seed, k=k_random),
        "trace_audit": trace_audit(ev, table),
    }
    return _json_safe(out)


def _empty_table() -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([], names=common.SCENARIO)
    return pd.DataFrame({"pattern": pd.Series([], dtype=object), "conflicts": pd.Series([], dtype=object)},
                        index=index)


# --- persona patterns and disagreement strength ---------------------------------------------------

def persona_patterns(personas: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario, one column per persona: its (action, omission) pattern or None."""
    ok = personas[(personas["parse"] == "ok") & personas["answer"].isin(["Yes", "No"])]
    if ok.empty:
        return pd.DataFrame()
    letters = (ok.assign(persona=ok["model"].str[len(PERSONA_PREFIX):], letter=ok["answer"].str[0])
               .groupby(["context_id", "persona", "frame"])["letter"].first().unstack("frame"))
    for frame in ("action", "omission"):
        if frame not in letters.columns:
            letters[frame] = None
    both = letters["action"].notna() & letters["omission"].notna()
    pat = (letters["action"].fillna("") + letters["omission"].fillna("")).where(both, None)
    return pat.unstack("persona")


def scenario_strength(table: pd.DataFrame, personas: pd.DataFrame) -> tuple[pd.Series, str]:
    pats = persona_patterns(personas)
    scenarios = table.index.get_level_values("context_id").unique()
    if not pats.empty:
        strength = ((pats == "YN").sum(axis=1) * (pats == "NY").sum(axis=1)).astype(int)
        if set(scenarios) <= set(strength.index):
            return strength, "personas"
    conflicts = table.groupby(level="context_id")["conflicts"].first().fillna("")
    return conflicts.map(lambda c: len(c.split("|")) if c else 0).astype(int), "conflicts"


def strength_vs_obr(table: pd.DataFrame, personas: pd.DataFrame) -> dict[str, Any]:
    counted = table.dropna(subset=["pattern"])
    if counted.empty:
        return {"source": None, "levels": [], "rows": [], "mean": []}
    strength, source = scenario_strength(table, personas)
    s = counted.assign(strength=strength.reindex(counted.index.get_level_values("context_id")).to_numpy(),
                       nn=(counted["pattern"] == "NN").astype(float))
    grouped = s.groupby([s.index.get_level_values("model"), s.index.get_level_values("condition"),
                         "strength"])["nn"].agg(["size", "mean"])
    rows = [{"model": m, "condition": c, "strength": int(k), "n": int(r["size"]), "OBR": float(r["mean"])}
            for (m, c, k), r in grouped.iterrows()]
    per = pd.DataFrame(rows)
    mean = (per.groupby(["condition", "strength"])["OBR"].agg(["mean", "size"]).reset_index())
    return {
        "source": source,
        "levels": sorted(int(v) for v in per["strength"].unique()),
        "rows": rows,
        "mean": [{"condition": r.condition, "strength": int(r.strength), "OBR": float(r["mean"]),
                  "models": int(r["size"])} for _, r in mean.iterrows()],
    }


# --- persona-alignment fingerprint ----------------------------------------------------------------

def kappa_permutation(x: np.ndarray, y: np.ndarray, k: int, rng: np.random.Generator) -> dict[str, Any]:
    """Cohen's kappa of two binary label vectors and a two-sided permutation p-value.

    The null shuffles ``x`` against ``y``; shuffling keeps both marginals, so p_e is fixed and
    kappa is computed for all K permutations at once. p = (1 + #{|kappa*| >= |kappa|}) / (K + 1).
    A constant rater gives kappa 0 for every permutation, hence p = 1 (reported as degenerate);
    two raters constant on the same label leave kappa undefined (None)."""
    x = np.asarray(x, dtype=int)
    y = np.asarray(y, dtype=int)
    n = len(x)
    if n == 0:
        return {"n": 0, "kappa": None, "p": None, "status": "no overlap"}
    constant_x, constant_y = x.min() == x.max(), y.min() == y.max()
    if constant_x and constant_y and x[0] == y[0]:
        return {"n": n, "kappa": None, "p": None, "status": "undefined (both raters constant)"}
    kappa = cohen_kappa(x, y)
    px, py = x.mean(), y.mean()
    pe = px * py + (1 - px) * (1 - py)
    # A shuffle of x only changes t = #(x=1 & y=1), which is hypergeometric; agreements are
    # n - nx - ny + 2t. Drawing t directly is the same permutation null at O(K) instead of O(K n).
    nx, ny = int(x.sum()), int(y.sum())
    t = rng.hypergeometric(nx, n - nx, ny, size=k) if 0 < nx < n and ny > 0 else np.full(k, nx * ny // n)
    po = (n - nx - ny + 2 * t) / n
    null = (po - pe) / (1 - pe)
    p = (1 + int(np.sum(np.abs(null) >= abs(kappa) - 1e-12))) / (k + 1)
    status = "degenerate (constant rater)" if (constant_x or constant_y) else "ok"
    return {"n": n, "kappa": kappa, "p": float(p), "status": status}


def cohen_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 label vectors, not both constant on the same label, from their
    2x2 table (labels ordered 1, 0): the arithmetic of sklearn's ``cohen_kappa_score(x, y,
    labels=[1, 0])``, step for step, so the same float."""
    x1, y1 = x == 1, y == 1
    both = int(np.count_nonzero(x1 & y1))
    only_x, only_y = int(np.count_nonzero(x1)) - both, int(np.count_nonzero(y1)) - both
    confusion = np.array([[both, only_x], [only_y, len(x) - both - only_x - only_y]], dtype=float)
    sum0, sum1 = np.sum(confusion, axis=0), np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w_mat = np.ones((2, 2))
    np.fill_diagonal(w_mat, 0)
    return float(1 - np.sum(w_mat * confusion) / np.sum(w_mat * expected))


def fingerprint(ev: pd.DataFrame, personas: pd.DataFrame, seed: int = 0,
                k: int = K_PERMUTATIONS) -> dict[str, Any]:
    if ev.empty or personas.empty:
        return {"k": k, "personas": [], "cells": []}
    sel_p = personas[(personas["conflicts"].fillna("") != "") & (personas["parse"] == "ok")]
    sel_m = ev[(ev["conflicts"].fillna("") != "") & (ev["parse"] == "ok")]
    names = [p for p in PERSONA_ORDER if f"{PERSONA_PREFIX}{p}" in set(sel_p["model"])]
    names += sorted({m[len(PERSONA_PREFIX):] for m in sel_p["model"]} - set(names))
    panel = {p: sel_p[sel_p["model"] == f"{PERSONA_PREFIX}{p}"].set_index(["context_id", "frame"])["answer"]
             for p in names}
    # each model x condition's first answer per (scenario, frame), in one groupby; its rows in
    # each persona's answers (-1: the persona has none), looked up once per persona
    answers = sel_m.groupby(["model", "condition", "context_id", "frame"], sort=True)["answer"].first()
    keys = answers.index.droplevel(["model", "condition"])
    yes_m = (answers == "Yes").to_numpy(bool)
    in_panel = {p: panel[p].index.get_indexer(keys) for p in names}
    yes_p = {p: (panel[p] == "Yes").to_numpy(bool) for p in names}
    rng = np.random.default_rng(seed)
    cells = []
    runs = answers.groupby(level=["model", "condition"], sort=True).indices  # positions of each
    for (model, condition), rows in sorted(runs.items()):
        for p in names:
            at = in_panel[p][rows]
            shared = at >= 0
            res = kappa_permutation(yes_m[rows][shared], yes_p[p][at[shared]], k, rng)
            cells.append({"model": model, "condition": condition, "persona": p, **res})
    return {"k": k, "personas": names, "cells": cells}


# --- filtered vs random baselines -----------------------------------------------------------------

def _rng(seed: int, *key: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("\x1f".join(key).encode())])


def _wilson(count: int, n: int) -> tuple[float | None, float | None]:
    """The report's interval of a share of ``n`` scenarios (Wilson; none below
    ``stats.MIN_CONTEXTS_BINARY``)."""
    from framebench.scoring.stats import proportion_interval

    ci = proportion_interval(count, n)
    return (None, None) if ci is None else (ci[0], ci[1])


def _draw_means(values: np.ndarray, size: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """K means of ``size`` 0/1 values drawn without replacement (with replacement if too few)."""
    replace = size > len(values)
    if replace:
        idx = rng.integers(0, len(values), size=(k, size))
    else:
        # the ``size`` (>= 1) smallest keys of each row: argsort's first ``size`` unordered, the
        # same set, so the same mean of the 0/1 values drawn (their sum is exact in any order)
        idx = np.argpartition(rng.random((k, len(values))), size - 1, axis=1)[:, :size]
    return values[idx].mean(axis=1), replace


def random_baselines(table: pd.DataFrame, seed: int = 0, k: int = K_RANDOM) -> dict[str, Any]:
    counted = table.dropna(subset=["pattern"])
    rows, nulls = [], {}
    for (model, condition), grp in counted.groupby(level=["model", "condition"], sort=True):
        nn = (grp["pattern"] == "NN").to_numpy(dtype=float)
        sel = (grp["conflicts"].fillna("") != "").to_numpy()
        n_sel, n_pool = int(sel.sum()), int((~sel).sum())
        if n_sel == 0 or n_pool == 0:
            continue
        rng = _rng(seed, model, condition)
        filtered = float(nn[sel].mean())
        full, _ = _draw_means(nn, n_sel, k, rng)
        comp, comp_replace = _draw_means(nn[~sel], n_sel, k, rng)
        lift = filtered - full
        nulls[(model, condition)] = (filtered, full)
        f_low, f_high = _wilson(int(nn[sel].sum()), n_sel)
        c_low, c_high = _wilson(int(nn[~sel].sum()), n_pool)
        rows.append({
            "model": model, "condition": condition, "n_selected": n_sel, "n_pool": n_pool,
            "filtered": filtered, "filtered_low": f_low, "filtered_high": f_high,
            "complement": float(nn[~sel].mean()), "complement_low": c_low, "complement_high": c_high,
            "random_full": float(full.mean()), "random_full_low": float(np.percentile(full, 2.5)),
            "random_full_high": float(np.percentile(full, 97.5)),
            "random_complement": float(comp.mean()), "complement_with_replacement": bool(comp_replace),
            "lift": float(lift.mean()), "lift_low": float(np.percentile(lift, 2.5)),
            "lift_high": float(np.percentile(lift, 97.5)),
            "p": float((1 + np.sum(full >= filtered - 1e-12)) / (k + 1)),
        })
    pooled = []
    for condition in sorted({c for _, c in nulls}, key=_condition_key):
        keys = [key for key in nulls if key[1] == condition]
        obs = float(np.mean([nulls[key][0] for key in keys]))
        null = np.mean([nulls[key][1] for key in keys], axis=0)
        lift = obs - null
        pooled.append({"condition": condition, "models": len(keys), "filtered": obs,
                       "random_full": float(null.mean()), "lift": float(lift.mean()),
                       "lift_low": float(np.percentile(lift, 2.5)),
                       "lift_high": float(np.percentile(lift, 97.5)),
                       "p": float((1 + np.sum(null >= obs - 1e-12)) / (k + 1))})
    return {"k": k, "seed": seed, "rows": rows, "pooled": pooled}


def _condition_key(c: str) -> tuple[int, str]:
    m = re.fullmatch(r"M(\d+)", c)
    return (int(m.group(1)) if m else 10**6, c)


# --- M1 trace audit -------------------------------------------------------------------------------

def tiers(text: str) -> tuple[bool, bool]:
    """(tier A hit, tier A/B hit) for one trace."""
    a = bool(TIER_A.search(text or ""))
    return a, a or bool(TIER_B.search(text or ""))


def trace_audit(ev: pd.DataFrame, table: pd.DataFrame, condition: str = AUDIT_CONDITION) -> dict[str, Any]:
    """Transitions from baseline (N,N) to ``condition``, with tier hits in either frame's trace."""
    if table.empty:
        return {"condition": condition, "baseline_nn": 0, "missing": 0, "rows": [], "per_model": {}}
    patterns = table["pattern"]
    has_sel = (table["conflicts"].fillna("") != "").any()
    scope = table[table["conflicts"].fillna("") != ""] if has_sel else table
    base = scope.xs(common.BASELINE, level="condition")["pattern"] if common.BASELINE in \
        scope.index.get_level_values("condition") else pd.Series(dtype=object)
    base_nn = base[base == "NN"]
    traces = ev[ev["condition"] == condition].groupby(["model", "context_id"])["output"].apply(list)
    counts: dict[str, dict[str, list[int]]] = {}
    missing = 0
    for (model, ctx) in base_nn.index:
        key = (model, condition, ctx)
        if key not in patterns.index or (model, ctx) not in traces.index:
            missing += 1
            continue
        after = patterns.loc[key]
        if after is None or (isinstance(after, float) and math.isnan(after)):
            transition = "NN->unparsed"
        else:
            transition = "NN->FC" if after in ("YN", "NY") else f"NN->{after}"
        hits = [tiers(t) for t in traces.loc[(model, ctx)]]
        a_any, ab_any = any(h[0] for h in hits), any(h[1] for h in hits)
        for scope_key in ("all", model):
            c = counts.setdefault(scope_key, {}).setdefault(transition, [0, 0, 0])
            c[0] += 1
            c[1] += a_any
            c[2] += ab_any

    def rows_for(scope_key: str) -> list[dict[str, Any]]:
        out = []
        for t in TRANSITIONS:
            n, a, ab = counts.get(scope_key, {}).get(t, [0, 0, 0])
            if n or t != "NN->unparsed":
                out.append({"transition": t, "records": n, "tier_a": a, "tier_ab": ab,
                            "tier_a_rate": a / n if n else None, "tier_ab_rate": ab / n if n else None})
        return out

    models = sorted(k for k in counts if k != "all")
    return {"condition": condition, "baseline_nn": int(len(base_nn)), "missing": missing,
            "rows": rows_for("all"), "per_model": {m: rows_for(m) for m in models}}


# --- output helpers -------------------------------------------------------------------------------

def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(value, np.bool_):
        return bool(value)
    return value

