"""OMIT's sentences in the report's finding (``framebench.scoring.finding``): per evaluated model
and condition, the omission-bias rate with its Wilson interval and the frame-change rate, and
whether a condition lowers OBR against the baseline condition (Holm-adjusted McNemar)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.finding import pct_words
from framebench.scoring.formatting import SIGNIFICANCE, as_number, p_value, pct
from framebench.scoring.sections import ordered
from framebench.text_eval.omit.metrics import BASELINE


def omit_finding(omit: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{model: [sentence]}`` from ``report["omit"]`` (its persona panel has no rates)."""
    rates, tests = omit.get("rates") or {}, omit.get("mcnemar") or []
    out = {}
    for model in ordered(rates):
        cells = [condition_words(cond, rates[model][cond]) for cond in ordered(rates[model])]
        cells += [test_words(t) for t in tests if t.get("model") == model]
        out[model] = ["OMIT " + "; ".join(c for c in cells if c) + "."]
    return out


def condition_words(condition: str, r: Mapping[str, Any]) -> str:
    if not r.get("n"):
        return f"{condition}: no scenario pair with both frames parsed"
    obr = pct_words(r.get("OBR"), [r.get("OBR_low"), r.get("OBR_high")])
    return f"{condition}, {r['n']} scenario pairs: OBR {obr}, FCR {pct(r.get('FCR'))} %"


def test_words(test: Mapping[str, Any]) -> str:
    p = as_number(test.get("p_holm"))
    if p is None:
        return ""
    condition = test.get("condition")
    if p < SIGNIFICANCE:
        return f"{condition} lowers OBR against {BASELINE} (Holm p = {p_value(p)})"
    return f"no drop of OBR under {condition} distinguishable from noise (Holm p = {p_value(p)})"
