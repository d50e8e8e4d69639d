"""The systematicity part of the report (a part under ``framebench.report_parts``): its tables,
its figure and its sentences of the finding, from ``report["systematicity"]``
(``framebench.text_eval.framingqa.systematicity_scores``; docs/report.md "Systematicity")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.finding import excludes_zero, pct_words, pp_words
from framebench.scoring.formatting import (
    n_cell,
    pct,
    pct_ci,
    pp_ci,
    small_n_note,
    withheld,
    withheld_note,
)
from framebench.scoring.parts import ReportInput, ReportPart
from framebench.scoring.sections import FORMAT_NAMES, Section, Table, ordered
from framebench.scoring.stats import MIN_CONTEXTS, MIN_CONTEXTS_BINARY
from framebench.text_eval.framingqa.systematicity_scores import level_name, pooled_levels

POOLED = "all"
FIGURE = "Framing effect beside rewording effect, all tasks, with 95 % intervals"
TITLE = "FramingQA systematicity: polarity consistency, paraphrase invariance, framing against rewording"


def _share(cell: Mapping[str, Any], key: str, strict: bool) -> str:
    minimum = MIN_CONTEXTS_BINARY if strict else MIN_CONTEXTS
    return pct_ci(cell.get(key), cell.get(f"{key}_ci"), withheld(cell.get("n_contexts"), minimum))


def _pp(cell: Mapping[str, Any], key: str) -> str:
    return pp_ci(cell.get(key), cell.get(f"{key}_ci"), withheld(cell.get("n_contexts"), MIN_CONTEXTS))


def systematicity_table(sys_report: Mapping[str, Any]) -> Table | None:
    rows = []
    for model, fmt, level, entry in pooled_levels(sys_report):
        diag = (entry.get("biases") or {}).get(POOLED) or {}
        acc = entry.get("accuracy") or {}
        polarity = ([_share(diag, "polarity", False), _share(diag, "polarity_strict", True)]
                    if fmt == "binary" else ["–", "–"])
        rows.append([model, FORMAT_NAMES.get(fmt, fmt), level_name(level), n_cell(diag.get("n_contexts")),
                     *polarity, _share(diag, "invariance", False), _share(diag, "invariance_strict", True),
                     _pp(acc, "framing_effect"), _pp(acc, "rewording_effect"), _pp(acc, "difference")])
    if not rows:
        return None
    return Table(
        title="Systematicity (%), all tasks: polarity, paraphrase, framing against rewording",
        caption="n: contexts. Polarity: share of a context's plain/negated pairs answered consistently "
        "(opposite answers), right or wrong; strict: every pair (binary only). Paraphrase: share of its "
        "rewording triples (Q1-Q3; propositional: the premise's rewordings) answered alike; strict: every "
        "triple. Framing: correct- minus incorrect-bias accuracy (pp); Rewording: how often swapping one "
        "rewording for another changes whether the answer is right (mean |difference| over a triple's "
        "pairs, pp); Framing − rewording: their per-context difference, positive where framing moves "
        "answers more. Brackets: 95 % t interval over contexts (strict: score interval), stratified by "
        "task (docs/report.md#systematicity)." + withheld_note(rows) + small_n_note(rows, 3, "contexts"),
        header=["Model", "Format", "Level", "n", "Polarity", "Polarity strict", "Paraphrase",
                "Paraphrase strict", "Framing (pp)", "Rewording (pp)", "Framing − rewording (pp)"],
        rows=rows, figures=(FIGURE,))


def probability_table(sys_report: Mapping[str, Any]) -> Table | None:
    """Constrained runs: the spread of P(gold), the P(gold) comparison and the variance shares."""
    rows = []
    for model, fmt, level, entry in pooled_levels(sys_report):
        p_gold = entry.get("p_gold")
        if not p_gold:
            continue
        diag = (entry.get("biases") or {}).get(POOLED) or {}
        variance = (sys_report[model][POOLED][fmt].get("variance") or {}) if level == POOLED else {}
        rows.append([model, FORMAT_NAMES.get(fmt, fmt), level_name(level), n_cell(p_gold.get("n_contexts")),
                     _share(diag, "spread", False), _pp(p_gold, "framing_effect"),
                     _pp(p_gold, "rewording_effect"), _pp(p_gold, "difference"),
                     *(pct(variance.get(k)) for k in ("framing", "polarity", "rewording", "residual"))])
    if not rows:
        return None
    return Table(
        title="Systematicity of P(gold), all tasks (constrained answers)",
        caption="Spread: max − min P(gold) over a rewording triple (pp). Framing: mean P(gold) under "
        "correct- minus incorrect-bias framing; Rewording: mean |P_i − P_j| over a triple's pairs "
        "(POSIX-like); Framing − rewording: their per-context difference. Variance (%, all levels): "
        "the within-context variance of P(gold) split, nested, between framing (bias × level cells), "
        "polarity (forms within them), rewording (rewordings within those) and the rest (distractors, "
        "evidence sets). Brackets: 95 % t interval over contexts, stratified by task."
        + withheld_note(rows) + small_n_note(rows, 3, "contexts"),
        header=["Model", "Format", "Level", "n", "Spread (pp)", "Framing (pp)", "Rewording (pp)",
                "Framing − rewording (pp)", "Var. framing", "Var. polarity", "Var. rewording", "Var. rest"],
        rows=rows)


# ---------------------------------------------------------------- the finding in words


def comparison_words(cmp: Mapping[str, Any], unit: str = "answers") -> str:
    """Which moves ``unit`` more, framing or rewording, as far as the interval of their paired
    difference allows (an inverted framing effect is compared by its size)."""
    framing, rewording = cmp.get("framing_effect"), cmp.get("rewording_effect")
    if framing is None or rewording is None:
        return ""
    inverted = excludes_zero(cmp.get("framing_effect_ci")) and framing < 0
    key = "inverted_difference" if inverted else "difference"
    diff, ci = cmp.get(key), cmp.get(f"{key}_ci")
    what = "the inverted framing" if inverted else "framing"
    head = (f"framing effect {pp_words(framing, cmp.get('framing_effect_ci'))} beside rewording effect "
            f"{pp_words(rewording, cmp.get('rewording_effect_ci')).replace('+', '')}")
    if excludes_zero(ci) is None:
        return f"{head} (no interval for their difference)"
    if not excludes_zero(ci):
        return f"{head}: which moves {unit} more is not distinguishable (difference {pp_words(diff, ci)})"
    if diff > 0:
        times = f", {abs(framing) / rewording:.1f}× as much" if rewording > 0 else ""
        return f"{head}: {what} moves {unit} more{times} (difference {pp_words(diff, ci)})"
    return f"{head}: rewording moves {unit} more than {what} does (difference {pp_words(diff, ci)})"


def model_sentences(formats: Mapping[str, Any]) -> list[str]:
    out = []
    for fmt in ordered(formats, FORMAT_NAMES):
        entry = (formats[fmt].get("levels") or {}).get(POOLED) or {}
        diag = (entry.get("biases") or {}).get(POOLED) or {}
        parts = []
        if fmt == "binary" and diag.get("polarity") is not None:
            parts.append(f"polarity consistency {pct_words(diag['polarity'], diag.get('polarity_ci'))}")
        if diag.get("invariance") is not None:
            parts.append(f"paraphrase invariance {pct_words(diag['invariance'], diag.get('invariance_ci'))}")
        cmp, unit = ((entry["p_gold"], "P(right answer)") if entry.get("p_gold")
                     else (entry.get("accuracy") or {}, "answers"))
        parts.append(comparison_words(cmp, unit))
        parts = [p for p in parts if p]
        if parts:
            n = diag.get("n_contexts", cmp.get("n_contexts"))
            out.append(f"Systematicity, FramingQA {FORMAT_NAMES.get(fmt, fmt).lower()}, {n} contexts: "
                       + "; ".join(parts) + ".")
    return out


def systematicity_finding(sys_report: Mapping[str, Any]) -> dict[str, list[str]]:
    return {model: model_sentences(sys_report[model].get(POOLED) or {}) for model in ordered(sys_report)}


class Systematicity(ReportPart):
    """FramingQA's systematicity diagnostics (paper §2.3) and framing against rewording."""

    name = "systematicity"
    title = TITLE
    order = 12

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        if inputs.quick:
            return None
        from framebench.text_eval.framingqa.systematicity_scores import score_systematicity

        return score_systematicity(inputs.records) or None

    def report_sections(self, report):
        tables = [systematicity_table(report[self.name]), probability_table(report[self.name])]
        return [Section(self.title, [t for t in tables if t is not None])]

    def report_figures(self, report):
        from framebench.text_eval.framingqa.systematicity_figure import systematicity_figure

        return [(FIGURE, systematicity_figure(report[self.name]))]

    def finding(self, report):
        return systematicity_finding(report[self.name])


SYSTEMATICITY = Systematicity()
