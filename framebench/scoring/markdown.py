"""Report tables (shaped like FramingQA Tables 3-6 and OMIT Tables 2 and 11) and their Markdown.

``report_sections(report)`` turns a report dict (fractions, as in ``report.json``) into display
tables of pre-formatted strings; ``render_markdown`` and the HTML renderer both draw from it, so the
two reports always show the same numbers. Percentages carry one decimal; strict metrics show their
95 % interval as ``value (lo, hi)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from framebench.scoring.view import (
    FORMAT_NAMES,
    LEVEL_NAMES,
    MISSING,
    Section,
    Table,
    natural_key,
    ordered,
    task_name,
    task_order,
)
from framebench.vocabulary import LEVELS

DIRECTIONS = ("correct", "incorrect", "all")
EMBODIED_ROWS = {
    "overall": "Overall",
    "root": "Root",
    "propositional": "Propositional",
    "global": "Global",
    "none": "No constraint",
    "spatial": "Spatial",
    "temporal": "Temporal",
    "heterogeneous": "Heterogeneous",
}
EMBODIED_METRICS = {
    "completion": "Task completion (%) ↑",
    "replans": "Number of replans (execution instability) ↓",
    "steps": "Number of steps (planning inefficiency) ↓",
}
_EMBODIED_SETS = ("Neu / correct / incorrect: the neutral instruction and the correct- and "
                  "incorrect-bias framings. Rows: overall; Root / Propositional / Global: the biased "
                  "variants at that level (Mean Neu over every neutral variant); then each constraint "
                  "type. n: episodes.")
EMBODIED_CAPTIONS = {
    "completion": "Task completion: share of the episode's evaluation propositions satisfied at the "
    "end (PARTNR percent complete), averaged over variants. Strict: share of episodes whose every "
    "variant in the set (its 3 correct-bias, 3 incorrect-bias, or all 6 biased variants; at one "
    "level the 1 or 2 there) succeeds. " + _EMBODIED_SETS,
    "replans": "Replans: LLM planner calls per variant, the first call and the final Done[] call "
    "included (PARTNR's replanning_count; at most the replan cap + 1). Mean over variants; strict: "
    f"mean over the variants of the episodes counted in strict completion ({MISSING} when none "
    f"qualifies). Oracle and script planners make no LLM calls: {MISSING} (n/a). " + _EMBODIED_SETS,
    "steps": "Steps: simulator steps per variant (the symbolic backend's cost model; not comparable "
    "to Habitat's). Mean over variants; strict: mean over the variants of the episodes counted in "
    f"strict completion ({MISSING} when none qualifies). " + _EMBODIED_SETS,
}
SIGNIFICANCE = 0.05


# ---------------------------------------------------------------- formatting


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def pct(value: Any) -> str:
    """A fraction as a percentage with one decimal; a non-zero value that would round to 0.0
    shows as ``<0.1`` (expected strict accuracy can be 1e-15: not zero, and no scientific
    notation in a percent table)."""
    number = _number(value)
    if number is None:
        return MISSING
    percent = 100.0 * number
    if 0 < percent < 0.05:
        return "<0.1"
    if -0.05 < percent < 0:
        return ">-0.1"
    return f"{percent:.1f}"


def points(value: Any) -> str:
    """A difference of two fractions in percentage points, signed: ``+12.5``."""
    number = _number(value)
    return MISSING if number is None else f"{100.0 * number:+.1f}"


def pp_ci(value: Any, ci: Any) -> str:
    text = points(value)
    if text == MISSING or not isinstance(ci, list | tuple) or len(ci) != 2:
        return text
    lo, hi = points(ci[0]), points(ci[1])
    return text if MISSING in (lo, hi) else f"{text} ({lo}, {hi})"


SMALL_N = 30  # contexts, episodes or pairs below which a row is flagged: its interval is wide
SMALL_MARK = "†"


def n_cell(value: Any) -> str:
    """A count, flagged with ``†`` when below ``SMALL_N``."""
    text = count(value)
    number = _number(value)
    return f"{text} {SMALL_MARK}" if number is not None and number < SMALL_N else text


def small_n_note(rows: list[list[str]], index: int, unit: str) -> str:
    """A caption sentence warning about the flagged rows (empty when none is flagged)."""
    flagged = sum(1 for row in rows if row[index].endswith(SMALL_MARK))
    if not flagged:
        return ""
    return (f" {SMALL_MARK} Small sample: fewer than {SMALL_N} {unit} in {flagged} row(s); their "
            "percentages move a lot with a single item, read them with their intervals.")


def pct_ci(value: Any, ci: Any) -> str:
    """``27.7 (20.1, 35.0)``: a percentage and its interval, when the interval is known."""
    text = pct(value)
    if text == MISSING or not isinstance(ci, list | tuple) or len(ci) != 2:
        return text
    lo, hi = pct(ci[0]), pct(ci[1])
    if MISSING in (lo, hi):
        return text
    return f"{text} ({lo}, {hi})"


def num(value: Any, digits: int = 1) -> str:
    number = _number(value)
    return MISSING if number is None else f"{number:.{digits}f}"


def count(value: Any) -> str:
    number = _number(value)
    return MISSING if number is None else str(int(number))


def p_value(value: Any) -> str:
    number = _number(value)
    if number is None:
        return MISSING
    return f"{number:.2e}" if number < 1e-3 else f"{number:.4f}"


# ---------------------------------------------------------------- FramingQA


def _framingqa_cells(fqa: Mapping[str, Any], fmt: str) -> Iterable[tuple[str, str, Mapping]]:
    """(model, task, metrics) for one format, models and tasks in report order."""
    for model in ordered(fqa):
        for task in ordered(fqa[model], task_order()):
            metrics = fqa[model][task].get(fmt)
            if metrics:
                yield model, task, metrics


def _strict(metrics: Mapping[str, Any], name: str) -> str:
    return pct_ci(metrics.get(name), metrics.get(f"{name}_ci"))


def framingqa_accuracy_table(fqa: Mapping[str, Any], fmt: str) -> Table | None:
    """FramingQA Table 3 for one format, extended with the per-direction strict metrics."""
    extra = ["All (Yes)", "All (No)"] if fmt == "binary" else ["Neutral"]
    header = ["Model", "Task", "n", "Unparsed", "Mean", "Strict correct", "Strict incorrect",
              "Strict pair", "Strict all", *extra]
    rows = []
    for model, task, m in _framingqa_cells(fqa, fmt):
        if fmt == "binary":
            tail = [_strict(m, "strict_all_yes"), _strict(m, "strict_all_no")]
        else:
            tail = [pct(m.get("neutral"))]
        rows.append([model, task_name(task), n_cell(m.get("n_contexts")), pct(m.get("unparsed_rate")),
                     pct(m.get("mean")), _strict(m, "strict_correct"), _strict(m, "strict_incorrect"),
                     _strict(m, "strict_pair"), _strict(m, "strict_all"), *tail])
    if not rows:
        return None
    return Table(
        title=f"{FORMAT_NAMES.get(fmt, fmt)}: context-level accuracy (%) (cf. FramingQA Table 3)",
        caption="n: contexts. Unparsed: share of answers that could not be read as "
        f"{'Yes/No' if fmt == 'binary' else 'an option letter'} (they count as wrong). "
        "Mean: share of a context's questions answered correctly, averaged over contexts. "
        "Strict correct / incorrect / all: the context scores only if every correct-bias / "
        "incorrect-bias (per distractor) / every question is correct; pair: all correct-bias "
        "questions plus all questions of one distractor. "
        + ("All (Yes) / All (No): the context scores only if every question whose gold answer is "
           "Yes / No is correct. " if fmt == "binary" else
           "Neutral: accuracy on the unframed question. ")
        + "Brackets: 95 % Wilson interval over contexts (docs/statistics.md#wilson-intervals)."
        + small_n_note(rows, 2, "contexts"),
        header=header,
        rows=rows,
    )


def framingqa_expected_table(fqa: Mapping[str, Any]) -> Table | None:
    """FramingQA Table 4: observed vs expected strict accuracy under independent errors."""
    header = ["Model", "Task", "Format"]
    for direction in DIRECTIONS:
        header += [f"{direction.capitalize()} Exp.", f"{direction.capitalize()} Act."]
    rows = []
    for fmt in FORMAT_NAMES:
        for model, task, m in _framingqa_cells(fqa, fmt):
            row = [model, task_name(task), fmt]
            for direction in DIRECTIONS:
                row += [pct(m.get(f"expected_{direction}")), _strict(m, f"strict_{direction}")]
            rows.append(row)
    if not rows:
        return None
    return Table(
        title="Observed (Act.) and expected (Exp.) strict accuracy (%) (cf. FramingQA Table 4)",
        caption="Expected: the product of each question slot's accuracy over the task's contexts, "
        "i.e. strict accuracy if errors were independent across a context's questions.",
        header=header,
        rows=rows,
    )


def framingqa_level_table(fqa: Mapping[str, Any], stat: str) -> Table | None:
    """FramingQA Table 5 (one half: ``stat`` is ``mean`` or ``strict``)."""
    header = ["Model", "Task", "Format"]
    header += [f"{d.capitalize()} {LEVEL_NAMES[lv]}" for d in DIRECTIONS for lv in LEVELS]
    rows = []
    for fmt in FORMAT_NAMES:
        for model, task, m in _framingqa_cells(fqa, fmt):
            levels = m.get("levels") or {}
            cells = [pct(((levels.get(lv) or {}).get(d) or {}).get(stat))
                     for d in DIRECTIONS for lv in LEVELS]
            if any(cell != MISSING for cell in cells):
                rows.append([model, task_name(task), fmt, *cells])
    if not rows:
        return None
    what = ("Mean: accuracy over the level's questions" if stat == "mean"
            else "Strict: the context scores only if every question at the level is correct")
    return Table(
        title=f"Accuracy (%) by structural level, {stat} (cf. FramingQA Table 5)",
        caption=f"{what}. Correct / Incorrect: bias framing direction; All: both.",
        header=header,
        rows=rows,
    )


def framingqa_tables(fqa: Mapping[str, Any]) -> list[Table]:
    tables = [framingqa_accuracy_table(fqa, fmt) for fmt in FORMAT_NAMES]
    tables += [framingqa_expected_table(fqa)]
    tables += [framingqa_level_table(fqa, stat) for stat in ("mean", "strict")]
    return [t for t in tables if t is not None]


# ---------------------------------------------------------------- embodied


def embodied_table(emb: Mapping[str, Any], metric: str) -> Table | None:
    """One block of FramingQA Table 6, models stacked."""
    fmt = pct if metric == "completion" else num
    header = ["Model", "Row", "n", "Mean Neu", "Mean correct", "Mean incorrect",
              "Strict correct", "Strict incorrect", "Strict all"]
    keys = [f"{metric}_mean_neutral", f"{metric}_mean_correct", f"{metric}_mean_incorrect",
            f"{metric}_strict_correct", f"{metric}_strict_incorrect", f"{metric}_strict_all"]
    rows = []
    for model in ordered(emb):
        for row in ordered(emb[model], EMBODIED_ROWS):
            values = emb[model][row]
            rows.append([model, EMBODIED_ROWS.get(row, row), n_cell(values.get("n_episodes")),
                         *(fmt(values.get(k)) for k in keys)])
    if not rows:
        return None
    return Table(
        title=f"Embodied: {EMBODIED_METRICS[metric]} (cf. FramingQA Table 6)",
        caption=EMBODIED_CAPTIONS[metric] + small_n_note(rows, 2, "episodes"),
        header=header,
        rows=rows,
    )


def embodied_evaluation_table(evaluation: Mapping[str, Any] | None,
                              meanings: Mapping[str, str] | None = None) -> Table | None:
    """Which evaluation semantics each model's embodied scores come from (run.json ``evaluation``;
    ``meanings``: mode -> description, from the embodied suite)."""
    meanings = meanings or {}
    rows = [[model, mode, meanings.get(mode, "run.json does not say")]
            for model in ordered(evaluation or {}) for mode in evaluation[model]]
    if not rows:
        return None
    return Table(
        title="Embodied: evaluation semantics",
        caption="intended: PARTNR's documented semantics; partnr-compat: PARTNR's evaluation quirks "
        "reproduced; partnr-habitat: PARTNR's own scores (with its quirks). See datasets/robotics.md.",
        header=["Model", "Evaluation", "Meaning"],
        rows=rows,
    )


def embodied_tables(emb: Mapping[str, Any], evaluation: Mapping[str, Any] | None = None,
                    meanings: Mapping[str, str] | None = None) -> list[Table]:
    tables = [embodied_table(emb, metric) for metric in EMBODIED_METRICS]
    return [t for t in (*tables, embodied_evaluation_table(evaluation, meanings)) if t]


# ---------------------------------------------------------------- OMIT


def omit_rates_table(rates: Mapping[str, Any]) -> Table | None:
    """OMIT Table 2, one row per model and condition."""
    header = ["Model", "Condition", "n", "OBR (95% CI)", "ABR", "FCR", "Unparsed pairs"]
    rows = []
    for model in ordered(rates):
        for condition in ordered(rates[model]):
            r = rates[model][condition]
            obr = pct_ci(r.get("OBR"), [r.get("OBR_low"), r.get("OBR_high")])
            rows.append([model, condition, n_cell(r.get("n")), obr, pct(r.get("ABR")),
                         pct(r.get("FCR")), count(r.get("unparsed_pairs"))])
    if not rows:
        return None
    return Table(
        title="OMIT: framing-invariant bias rates (%) (cf. OMIT Table 2)",
        caption="n: scenario pairs with both frames parsed; Unparsed pairs: pairs left out because "
        "an answer could not be read. In (action, omission) order: OBR = (No, No), ABR = (Yes, Yes), "
        "FCR = (Yes, No) or (No, Yes), as shares of the n pairs. Brackets: Wilson 95 % interval. "
        "Only evaluated models: the dataset's persona panel is not a model."
        + small_n_note(rows, 2, "pairs"),
        header=header,
        rows=rows,
    )


def omit_conditions_table(rates: Mapping[str, Any]) -> Table | None:
    """OMIT Table 11: conditions side by side, with the unweighted mean over models."""
    conditions = ordered({c for by_condition in rates.values() for c in by_condition})
    if len(conditions) < 2:
        return None
    stats = ("OBR", "ABR", "FCR")
    header = ["Model"] + [f"{c} {s}" for c in conditions for s in stats]
    models = ordered(rates)
    rows = [[model] + [pct((rates[model].get(c) or {}).get(s)) for c in conditions for s in stats]
            for model in models]
    mean_row = ["Mean"]
    for c in conditions:
        for s in stats:
            values = [_number((rates[m].get(c) or {}).get(s)) for m in models]
            values = [v for v in values if v is not None]
            mean_row.append(pct(sum(values) / len(values)) if values else MISSING)
    return Table(
        title="OMIT: outcome rates (%) by intervention condition (cf. OMIT Table 11)",
        caption="M0 is the baseline. Mean: unweighted mean across models.",
        header=header,
        rows=rows + [mean_row],
    )


def omit_mcnemar_table(tests: list[Mapping[str, Any]]) -> Table | None:
    rows = [[t.get("model", ""), t.get("condition", ""), count(t.get("b")), count(t.get("c")),
             p_value(t.get("p")), p_value(t.get("p_holm")),
             "*" if (_number(t.get("p_holm")) or 1.0) < SIGNIFICANCE else ""]
            for t in sorted(tests, key=lambda t: (str(t.get("model")),
                                                  natural_key(str(t.get("condition")))))]
    if not rows:
        return None
    return Table(
        title="OMIT: intervention tests (exact one-sided McNemar vs M0, Holm-corrected)",
        caption="b: scenarios (No, No) at M0 but not at the condition; c: the reverse. "
        "H1: the condition has fewer (No, No) pairs. * = Holm-adjusted p < .05.",
        header=["Model", "Condition", "b", "c", "p", "p (Holm)", "sig."],
        rows=rows,
    )


def omit_conflicts_table(conflicts: Mapping[str, Any]) -> Table | None:
    labels = ordered({label for by_condition in conflicts.values()
                      for by_label in by_condition.values() for label in by_label})
    rows = [[model, condition, *(pct(conflicts[model][condition].get(label)) for label in labels)]
            for model in ordered(conflicts) for condition in ordered(conflicts[model])]
    if not rows or not labels:
        return None
    return Table(
        title="OMIT: OBR (%) by persona conflict",
        caption="Scenarios grouped by the philosophical conflicts the persona panel disagreed on.",
        header=["Model", "Condition", *labels],
        rows=rows,
    )


def omit_tables(omit: Mapping[str, Any]) -> list[Table]:
    rates = omit.get("rates") or {}
    tables = [omit_rates_table(rates), omit_conditions_table(rates),
              omit_mcnemar_table(omit.get("mcnemar") or []),
              omit_conflicts_table(omit.get("conflicts") or {})]
    return [t for t in tables if t is not None]


# ---------------------------------------------------------------- headline


def headline_table(report: Mapping[str, Any]) -> Table | None:
    """One row per model and format: its framing effect, before the detailed tables."""
    headline = report.get("headline") or {}
    rows = []
    for model in ordered(headline):
        for fmt in ordered(headline[model], FORMAT_NAMES):
            h = headline[model][fmt]
            rows.append([model, FORMAT_NAMES.get(fmt, fmt), n_cell(h.get("n_contexts")),
                         pct_ci(h.get("accuracy_correct"), h.get("accuracy_correct_ci")),
                         pct_ci(h.get("accuracy_incorrect"), h.get("accuracy_incorrect_ci")),
                         pp_ci(h.get("framing_effect"), h.get("framing_effect_ci")),
                         pct_ci(h.get("strict_all"), h.get("strict_all_ci"))])
    embodied = report.get("embodied") or {}
    for model in ordered(embodied):
        o = embodied[model].get("overall") or {}
        c, i = _number(o.get("completion_mean_correct")), _number(o.get("completion_mean_incorrect"))
        rows.append([model, "Robotics (completion)", n_cell(o.get("n_episodes")), pct(c), pct(i),
                     points(None if c is None or i is None else c - i), pct(o.get("completion_strict_all"))])
    if not rows:
        return None
    return Table(
        title="Headline: the framing effect per model",
        caption="All tasks pooled. n: contexts (robotics: episodes). Correct- / incorrect-bias: "
        "accuracy on the questions whose framing names the gold option / a distractor (per context, "
        "then averaged over contexts; robotics: mean task completion). Framing effect: their "
        "difference in percentage points (large = the framing moves the answers). Strict (all): "
        "share of contexts whose every question is right. Brackets: 95 % cluster-bootstrap "
        "interval over contexts; strict accuracy: 95 % Wilson interval." + small_n_note(rows, 2, "contexts or episodes"),
        header=["Model", "Format", "n", "Correct-bias accuracy (%)", "Incorrect-bias accuracy (%)",
                "Framing effect (pp)", "Strict accuracy, all (%)"],
        rows=rows,
    )


# ---------------------------------------------------------------- assembly


def report_sections(report: Mapping[str, Any]) -> list[Section]:
    """The report's tables: each registered suite's sections, for the suites present."""
    from framebench.registry import ordered_suites

    sections: list[Section] = []
    headline = headline_table(report)
    if headline is not None:
        sections.append(Section("Headline", [headline]))
    for suite in ordered_suites():
        if report.get(suite.name):
            sections += suite.report_sections(report)
    if report.get("susceptibility"):
        from framebench.scoring.susceptibility_report import susceptibility_section

        section = susceptibility_section(report)
        if section is not None:
            sections.append(section)
    return sections


def _md_cell(text: str) -> str:
    """A table cell: pipes and backslashes escaped, no line breaks, no raw HTML (names come from
    data and model specs, and Markdown viewers would render tags)."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    for char in "[]`":  # no links or code spans made of data
        text = text.replace(char, "\\" + char)
    # "<" before a digit ("<0.1") cannot open an HTML tag, so it stays readable in the raw file
    return re.sub(r"<(?!\d)", "&lt;", text).replace(">", "&gt;")


def table_markdown(table: Table) -> str:
    lines = [f"### {_md_cell(table.title)}", "", f"_{_md_cell(table.caption)}_", ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in table.header) + " |")
    lines.append("|" + "|".join("---:" if numeric_column(table, i) else "---"
                                for i in range(len(table.header))) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


# a number (thousands commas, decimals, exponent, "<0.1"), then optionally " (lo, hi)" or " †"
NUMERIC_CELL = re.compile(r"^[<>]?[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( .*)?$")


def numeric_column(table: Table, index: int) -> bool:
    cells = [row[index] for row in table.rows if row[index] != MISSING]
    return bool(cells) and all(NUMERIC_CELL.match(c) for c in cells)


def render_markdown(report: Mapping[str, Any]) -> str:
    """``report.md``: every table of the report, percentages with one decimal."""
    parts = ["# framebench report"]
    meta = report.get("meta")
    if meta:
        from framebench.scoring.provenance import meta_summary, meta_table

        parts += [f"_{_md_cell(meta_summary(meta))}_", table_markdown(meta_table(meta))]
    sections = report_sections(report)
    if not sections:
        parts.append("No records to report.")
    for section in sections:
        parts.append(f"## {section.title}")
        parts += [table_markdown(t) for t in section.tables]
    return "\n\n".join(parts) + "\n"
