"""FramingQA's report tables (shaped like FramingQA Tables 3-5), its headline rows and console
summary, from its ``report.json`` entry (fractions)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from framebench.scoring.formatting import (
    n_cell,
    pct,
    pct_ci,
    pp_ci,
    small_n_note,
    withheld,
    withheld_note,
)
from framebench.scoring.parts import SummaryTable
from framebench.scoring.sections import (
    FORMAT_NAMES,
    LEVEL_NAMES,
    MISSING,
    Table,
    ordered,
    task_name,
)
from framebench.scoring.stats import MIN_CONTEXTS, MIN_CONTEXTS_BINARY
from framebench.vocabulary import LEVELS

DIRECTIONS = ("correct", "incorrect", "all")


def accuracy_figure_title(fmt: str) -> str:
    """The title of a format's accuracy figure, shown right after its accuracy table."""
    return f"{FORMAT_NAMES[fmt]}: mean and strict accuracy (cf. FramingQA Fig. 3)"


def task_order() -> tuple[str, ...]:
    """Tasks in report order: the registered domains', then the pooled "all"."""
    from framebench.text_eval.framingqa.domains import task_names

    return (*task_names(), "all")


def _framingqa_cells(fqa: Mapping[str, Any], fmt: str) -> Iterable[tuple[str, str, Mapping]]:
    """(model, task, metrics) for one format, models and tasks in report order."""
    for model in ordered(fqa):
        for task in ordered(fqa[model], task_order()):
            metrics = fqa[model][task].get(fmt)
            if metrics:
                yield model, task, metrics


def _strict(metrics: Mapping[str, Any], name: str) -> str:
    """A strict metric with its Wilson interval, or ``(n < 10)`` where it is withheld."""
    return pct_ci(metrics.get(name), metrics.get(f"{name}_ci"),
                  withheld(metrics.get("n_contexts"), MIN_CONTEXTS_BINARY))


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
        + "Brackets: 95 % Wilson interval over contexts; all tasks: the score interval stratified "
        "by task (docs/statistics.md#wilson-intervals)."
        + withheld_note(rows) + small_n_note(rows, 2, "contexts"),
        header=header,
        rows=rows,
        figures=(accuracy_figure_title(fmt),) if fmt in FORMAT_NAMES else (),
    )


def framingqa_expected_table(fqa: Mapping[str, Any]) -> Table | None:
    """FramingQA Table 4: observed vs expected strict accuracy under independent errors."""
    header = ["Model", "Task", "Format", "n"]
    for direction in DIRECTIONS:
        header += [f"{direction.capitalize()} Exp.", f"{direction.capitalize()} Act."]
    rows = []
    for fmt in FORMAT_NAMES:
        for model, task, m in _framingqa_cells(fqa, fmt):
            row = [model, task_name(task), fmt, n_cell(m.get("n_contexts"))]
            for direction in DIRECTIONS:
                row += [pct(m.get(f"expected_{direction}")), _strict(m, f"strict_{direction}")]
            rows.append(row)
    if not rows:
        return None
    return Table(
        title="Observed (Act.) and expected (Exp.) strict accuracy (%) (cf. FramingQA Table 4)",
        caption="Expected: the product of each question slot's accuracy over the task's contexts, "
        "i.e. strict accuracy if errors were independent across a context's questions. Brackets: "
        "95 % Wilson interval of the observed strict accuracy over contexts (all tasks: stratified "
        "by task)." + withheld_note(rows) + small_n_note(rows, 3, "contexts"),
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


def framingqa_headline_rows(headline: Mapping[str, Any]) -> list[list[str]]:
    """Headline rows per model and format from ``report["headline"]`` (its FramingQA entries)."""
    rows = []
    for model in ordered(headline):
        for fmt in ordered((f for f in headline[model] if f in FORMAT_NAMES), FORMAT_NAMES):
            h = headline[model][fmt]
            mean_short, count_short = (withheld(h.get("n_contexts"), k) for k in (MIN_CONTEXTS, MIN_CONTEXTS_BINARY))
            rows.append([model, FORMAT_NAMES.get(fmt, fmt), n_cell(h.get("n_contexts")),
                         pct_ci(h.get("accuracy_correct"), h.get("accuracy_correct_ci"), mean_short),
                         pct_ci(h.get("accuracy_incorrect"), h.get("accuracy_incorrect_ci"), mean_short),
                         pp_ci(h.get("framing_effect"), h.get("framing_effect_ci"), mean_short),
                         pct(h.get("framing_effect_mde")),
                         pct_ci(h.get("strict_all"), h.get("strict_all_ci"), count_short)])
    return rows


def summary_tables(fqa: Mapping[str, Any]) -> list[SummaryTable]:
    """Mean and strict_all per model, task and format."""
    rows = [[model, "all tasks" if task == "all" else task, fmt, str(m.get("n_contexts", "")),
             pct(m.get("mean")), pct(m.get("strict_all"))]
            for model in ordered(fqa) for task in ordered(fqa[model], task_order())
            for fmt, m in fqa[model][task].items()]
    return [SummaryTable("FramingQA", ["model", "task", "format", "n", "mean", "strict_all"], rows)] if rows else []
