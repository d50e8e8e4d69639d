"""The systematicity measures in the coverage simulation (tests/coverage_sim.py; docs/statistics.md
"Coverage"): polarity pairs and rewording triples of a template, their per-context values from
the simulated arrays (by the definitions of docs/report.md "Systematicity", written here again),
their intervals by framebench's own code (``systematicity_scores.diagnostic_cells`` and
``effect_cells``) and their true values by quadrature.

Given the context-level variables every row is answered independently (right with probability
g_r), so: a pair is consistent with probability g_i g_j + (1 - g_i)(1 - g_j) (the sim's wrong
answer is the other one, and a pair's golds are opposite); a triple is alike with probability
Π g + Π (1 - g) (one gold, one wrong answer); its expected |right_i - right_j| is
g_i (1 - g_j) + g_j (1 - g_i); the expected range of its three P(gold) is
∫₀¹ [1 - Π F_k(t) - Π (1 - F_k(t))] dt, F_k the distribution of P_k = σ(η_k + sd_row Z).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr

LEVELS = ("root", "propositional", "global")
BIASES = ("correct", "incorrect")
ALL = "all"
DIAGNOSTIC_KINDS = {
    "polarity": "Polarity consistency (systematicity), t",
    "polarity_strict": "Strict polarity consistency (systematicity), score",
    "invariance": "Paraphrase invariance (systematicity), t",
    "invariance_strict": "Strict paraphrase invariance (systematicity), score",
    "spread": "Spread of P(gold) over rewordings (systematicity), t",
}
EFFECT_KINDS = {
    "sys_effect": "Framing and rewording effects per level (systematicity), t",
    "sys_difference": "Framing − rewording, and inverted (systematicity), t",
}
DIFF_KINDS = {  # the comparisons' paired differences, per context over every level and bias
    "diff_polarity_consistency": "Δ polarity consistency (comparisons), paired t",
    "diff_paraphrase_invariance": "Δ paraphrase invariance (comparisons), paired t",
    "diff_framing_minus_rewording": "Δ framing − rewording (comparisons), paired t",
}
STRICT_KINDS = ("polarity_strict", "invariance_strict")
# The cells simulated (a study of 100 contexts per task has millions of per-context values): each
# level's own kind of pair and triple and the pooled ones
DIAG_CELLS = (("root", "incorrect"), ("propositional", "correct"), ("propositional", "incorrect"), (ALL, ALL))
EFFECT_LEVELS = ("root", "propositional", ALL)


def structure(template) -> tuple[dict, dict]:
    """:func:`_structure`, once per (task, format)."""
    key = (template.task, template.fmt)
    if key not in _STRUCTURES:
        _STRUCTURES[key] = _structure(template)
    return _STRUCTURES[key]


_STRUCTURES: dict[tuple[str, str], tuple[dict, dict]] = {}


def _structure(template) -> tuple[dict, dict]:
    """(pairs, triples) of a template: (level, bias) -> plain and negated row positions (binary),
    and -> a (k, 3) array of rewording triples' positions (Q1, Q2, Q3), ``all`` for every level
    or bias."""
    rows = template.rows
    pairs: dict[tuple[str, str], list[tuple[int, int]]] = {}
    if template.fmt == "binary":
        stem = rows["slot"].str.replace(r"/(?:plain|negated)(?=/|$)", "", regex=True)
        key = list(zip(rows["level"], rows["bias"], rows["distractor"], rows["phrasing"], stem, strict=True))
        negated = {k: i for i, k in enumerate(key) if rows["form"].iat[i] == "negated"}
        for i, k in enumerate(key):
            if rows["form"].iat[i] == "plain" and k in negated:
                for lv in (k[0], ALL):
                    for bias in (k[1], ALL):
                        pairs.setdefault((lv, bias), []).append((i, negated[k]))
    triples: dict[tuple[str, str], list[list[int]]] = {}
    reworded = rows[rows["phrasing"].isin(["Q1", "Q2", "Q3"]) & rows["bias"].isin(BIASES)
                    & ~((rows["bias"] == "incorrect") & (rows["level"] == "propositional"))]
    for (lv, bias, _, _), group in reworded.groupby(["level", "bias", "form", "distractor"], sort=True):
        if sorted(group["phrasing"]) == ["Q1", "Q2", "Q3"]:
            at = group.sort_values("phrasing").index.tolist()
            for level in (lv, ALL):
                for b in (bias, ALL):
                    triples.setdefault((level, b), []).append(at)
    return ({k: np.array(v) for k, v in pairs.items() if k in DIAG_CELLS},
            {k: np.array(v) for k, v in triples.items() if k in DIAG_CELLS or k[1] == ALL})


def _mask(template, level: str, bias: str) -> np.ndarray:
    rows = template.rows
    return ((rows["level"] == level) | (level == ALL)).to_numpy() & (rows["bias"] == bias).to_numpy()


def diagnostics(template, right: np.ndarray, p: np.ndarray) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per (level, bias) and context: the diagnostics' values (``right``, ``p``: ... x rows)."""
    pairs, triples = structure(template)
    out: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for cell, at in pairs.items():
        consistent = right[..., at[:, 0]] == right[..., at[:, 1]]
        out.setdefault(cell, {}).update({"polarity": consistent.mean(axis=-1), "polarity_strict": consistent.all(axis=-1),
                                         "pairs": np.full(consistent.shape[:-1], len(at))})
    for cell, at in triples.items():
        if cell not in DIAG_CELLS:
            continue
        k = right[..., at].sum(axis=-1)
        alike = (k == 0) | (k == 3)
        spread = p[..., at].max(axis=-1) - p[..., at].min(axis=-1)
        out.setdefault(cell, {}).update({"invariance": alike.mean(axis=-1), "invariance_strict": alike.all(axis=-1),
                                          "spread": spread.mean(axis=-1),
                                          "triples": np.full(alike.shape[:-1], len(at))})
    return out


def effects(template, right: np.ndarray, p: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """Per level (``all`` too) and context: framing and rewording effects, of accuracy and of P(gold)."""
    _, triples = structure(template)
    out = {}
    for lv in EFFECT_LEVELS:
        if (lv, ALL) not in triples or not _mask(template, lv, "incorrect").any():
            continue
        at, correct, incorrect = triples[(lv, ALL)], _mask(template, lv, "correct"), _mask(template, lv, "incorrect")
        k = right[..., at].sum(axis=-1)
        spread = p[..., at].max(axis=-1) - p[..., at].min(axis=-1)
        shape = k.shape[:-1]
        out[lv] = {"framing": right[..., correct].mean(axis=-1) - right[..., incorrect].mean(axis=-1),
                   "rewording": (k * (3 - k) / 3).mean(axis=-1),
                   "correct": right[..., correct].mean(axis=-1), "incorrect": right[..., incorrect].mean(axis=-1),
                   "n_correct": np.full(shape, correct.sum()), "n_incorrect": np.full(shape, incorrect.sum()),
                   "mixed": ((k > 0) & (k < 3)).mean(axis=-1), "triples": np.full(shape, len(at)),
                   "framing_p": p[..., correct].mean(axis=-1) - p[..., incorrect].mean(axis=-1),
                   "rewording_p": (2 / 3 * spread).mean(axis=-1)}
    return out


def _frame(template, values: dict[str, np.ndarray], **labels: str) -> pd.DataFrame:
    studies, size = next(iter(values.values())).shape
    out = pd.DataFrame({"model": np.repeat(np.arange(studies), size), "context_id": np.tile(np.arange(size), studies)})
    out = out.assign(task=template.task, format=template.fmt, **labels)
    for key, v in values.items():
        out[key] = v.ravel().astype(float)
    return out


def intervals(all_draws, model: str, long) -> pd.DataFrame:
    """Every systematicity interval of every study, by framebench's code (``long``: coverage_sim's
    row maker)."""
    from framebench.text_eval.framingqa.systematicity_scores import (
        MODES,
        diagnostic_cells,
        effect_cells,
        with_pooled,
    )

    diag = pd.concat([_frame(d.template, v, level=lv, bias=b) for d in all_draws
                      for (lv, b), v in diagnostics(d.template, d.right[model], d.p[model]).items()], ignore_index=True)
    eff = pd.concat([_frame(d.template, v, level=lv) for d in all_draws
                     for lv, v in effects(d.template, d.right[model], d.p[model]).items()], ignore_index=True)
    out = []
    for column, found in diagnostic_cells(with_pooled(diag)).items():
        out.append(_long_cells(found, column, column, long))
    for mode, suffix in MODES.items():
        for key, found in effect_cells(with_pooled(eff), suffix).items():
            kind = "sys_effect" if key in ("framing_effect", "rewording_effect") else "sys_difference"
            out.append(_long_cells(found, kind, f"{mode}|{key}", long))
    return pd.concat(out, ignore_index=True)


def _pooled_values(all_draws, model: str) -> pd.DataFrame:
    """Per context of every template: polarity, invariance (every level and bias) and framing
    minus rewording (every level), as the comparisons read them."""
    parts = []
    for d in all_draws:
        diag = diagnostics(d.template, d.right[model], d.p[model]).get((ALL, ALL), {})
        eff = effects(d.template, d.right[model], d.p[model])[ALL]
        values = {"diff_polarity_consistency": diag.get("polarity"), "diff_paraphrase_invariance": diag["invariance"],
                  "diff_framing_minus_rewording": eff["framing"] - eff["rewording"]}
        parts.append(_frame(d.template, {k: v for k, v in values.items() if v is not None}))
    return pd.concat(parts, ignore_index=True)


def diff_intervals(all_draws, long) -> pd.DataFrame:
    """The comparisons' paired differences A - B of the systematicity measures, per task and
    pooled (t interval of the per-context differences, stratified by task when pooled)."""
    from framebench.scoring.stats import grouped_mean_intervals
    from framebench.text_eval.framingqa.systematicity_scores import with_pooled

    a, b = _pooled_values(all_draws, "A"), _pooled_values(all_draws, "B")
    d = with_pooled(a[["model", "task", "format", "context_id"]].assign(
        **{k: a[k] - b[k] for k in DIFF_KINDS if k in a}))
    out = []
    for kind in DIFF_KINDS:
        found = grouped_mean_intervals(d, ["model", "task", "format"], kind, "stratum")
        index = found.index.to_frame(index=False)
        out.append(long(found, kind, index["task"] + "|" + index["format"],
                        np.where(index["task"] == ALL, "pooled", "per task")))
    return pd.concat(out, ignore_index=True)


def _long_cells(found: pd.DataFrame, kind: str, measure: str, long) -> pd.DataFrame:
    index = found.index.to_frame(index=False)
    cell = index["task"] + "|" + index["format"] + "|" + index["level"]
    if "bias" in index:
        cell = cell + "|" + index["bias"]
    scope = np.where(index["task"] == ALL, "pooled", "per task")
    return long(found, kind, cell + "|" + measure, scope)


# ---------------------------------------------------------------- truth

GRID = np.linspace(-15.0, 15.0, 301)  # logit t of the range integral (beyond: below 1e-6)


def expected_range(eta: np.ndarray, sd: float) -> np.ndarray:
    """nodes x k logits -> E[max - min] of k independent σ(η_k + sd Z) at each node."""
    cdf = ndtr((GRID[None, None, :] - eta[..., None]) / sd)  # nodes x k x grid
    inside = 1.0 - cdf.prod(axis=1) - (1.0 - cdf).prod(axis=1)
    dt = expit(GRID) * (1.0 - expit(GRID))
    return np.trapezoid(inside * dt, GRID, axis=-1)


def diff_truths(a: dict, b: dict, fmt: str) -> dict[tuple[str, str], tuple[float, float, float]]:
    """The comparisons' true differences from two models' :func:`truths` of one template."""
    keys = {"diff_polarity_consistency": ("polarity", f"{fmt}|all|all|polarity"),
            "diff_paraphrase_invariance": ("invariance", f"{fmt}|all|all|invariance"),
            "diff_framing_minus_rewording": ("sys_difference", f"{fmt}|all|accuracy|difference")}
    nan = float("nan")
    return {(kind, fmt): (a[key][0] - b[key][0], nan, nan) for kind, key in keys.items() if key in a}


def truths(truth, template) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(kind, cell without task) -> (true value, and for a 0/1 measure its rate twice, else NaN
    twice) for one model and template."""
    g, w = truth._row_means(template), truth._nodes[2]
    eta, sd = truth.eta(template), truth.scenario.sd_row
    pairs, triples = structure(template)
    fmt, nan, out = template.fmt, float("nan"), {}
    for (lv, bias), at in pairs.items():
        consistent = g[:, at[:, 0]] * g[:, at[:, 1]] + (1 - g[:, at[:, 0]]) * (1 - g[:, at[:, 1]])
        out[("polarity", f"{fmt}|{lv}|{bias}|polarity")] = (float((w @ consistent).mean()), nan, nan)
        strict = float(w @ consistent.prod(axis=1))
        out[("polarity_strict", f"{fmt}|{lv}|{bias}|polarity_strict")] = (strict, strict, strict)
    ranges: dict = {}
    for (lv, bias), at in triples.items():
        if (lv, bias) not in DIAG_CELLS:
            continue
        alike = g[:, at].prod(axis=-1) + (1 - g[:, at]).prod(axis=-1)
        out[("invariance", f"{fmt}|{lv}|{bias}|invariance")] = (float((w @ alike).mean()), nan, nan)
        strict = float(w @ alike.prod(axis=1))
        out[("invariance_strict", f"{fmt}|{lv}|{bias}|invariance_strict")] = (strict, strict, strict)
        spread = np.array([w @ _range(eta, sd, t, ranges) for t in at])
        out[("spread", f"{fmt}|{lv}|{bias}|spread")] = (float(spread.mean()), nan, nan)
    expected = w @ g
    for lv in EFFECT_LEVELS:
        if (lv, ALL) not in triples or not _mask(template, lv, "incorrect").any():
            continue
        at = triples[(lv, ALL)]
        framing = expected[_mask(template, lv, "correct")].mean() - expected[_mask(template, lv, "incorrect")].mean()
        moved = np.mean([w @ sum(g[:, i] * (1 - g[:, j]) + g[:, j] * (1 - g[:, i]) for i, j in combinations(t, 2)) / 3
                         for t in at])
        moved_p = np.mean([w @ _range(eta, sd, t, ranges) for t in at]) * 2 / 3
        for mode, rewording in (("accuracy", moved), ("p_gold", moved_p)):
            values = {"framing_effect": framing, "rewording_effect": rewording,
                      "difference": framing - rewording, "inverted_difference": -framing - rewording}
            for key, v in values.items():
                kind = "sys_effect" if key in ("framing_effect", "rewording_effect") else "sys_difference"
                out[(kind, f"{fmt}|{lv}|{mode}|{key}")] = (float(v), nan, nan)
    return out


def _range(eta: np.ndarray, sd: float, at: np.ndarray, cache: dict) -> np.ndarray:
    """:func:`expected_range` of the rows ``at``, once per distinct set of their logits."""
    key = eta[:, at].round(12).tobytes()
    if key not in cache:
        cache[key] = expected_range(eta[:, at], sd)
    return cache[key]
