"""The report's model-comparison tables (one per suite), from ``report["comparisons"]``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.formatting import (
    n_cell,
    p_value,
    pp_ci,
    small_n_note,
    withheld,
    withheld_note,
)
from framebench.scoring.sections import FORMAT_NAMES, Section, Table, task_name
from framebench.scoring.stats import PAIRED_T, minimum_contexts

DOCS = "docs/statistics.md#model-comparisons"
CORE_TITLES = {"task": "Task", "format": "Format"}


def group_titles() -> dict[str, str]:
    """Group column -> its column title (the suites' ``filter_columns`` name theirs)."""
    from framebench.scoring.viewer_links import suite_filters

    return {**CORE_TITLES, **suite_filters()}


def _group_cell(level: str, value: str) -> str:
    if level == "task":
        return task_name(value)
    return FORMAT_NAMES.get(value, value) if level == "format" else value


def comparison_table(part: Mapping[str, Any], n_tests: int) -> Table:
    group, measures, test = part["group"], part["measures"], part.get("test")
    labels = {m["key"]: m["label"] for m in measures}
    titles = group_titles()
    header = [*(titles.get(g, g) for g in group), "Model A", "Model B", "n",
              *(f"Δ {m['label']} (pp)" for m in measures)]
    if test:
        header += [f"McNemar on {labels.get(test, test)}: b / c", "p", "p (Holm)"]
    rows = []
    for row in part["rows"]:
        cells = [*(_group_cell(g, row["group"].get(g, "")) for g in group), row["model_a"], row["model_b"],
                 n_cell(row["n_contexts"])]
        cells += [_diff_cell(row["measures"][m["key"]]) for m in measures]
        if test:
            t = row.get("test") or {}
            cells += [f"{t.get('b', 0)} / {t.get('c', 0)}", p_value(t.get("p")), p_value(t.get("p_holm"))]
        rows.append(cells)
    caption = ("Pairs of models on the same items (matched by item_id). Δ: model A minus model B, "
               "the mean over the shared contexts of the per-context difference, in percentage "
               "points; brackets: its 95 % interval, paired by context: for a measure that is 0 or 1 "
               "per context (strict, OBR, ABR, FCR) Tango's score interval, otherwise the t interval of "
               "the per-context differences (pooled tasks: stratified by task). n: shared contexts.")
    if test:
        means = next((m.get("means") for m in measures if m["key"] == test), "") or f"{labels.get(test, test)} is 1"
        caption += (f" McNemar: exact two-sided test on the per-context 0/1 {labels.get(test, test)}; "
                    f"b = contexts where {means} under A only, c = under B only; p (Holm): adjusted "
                    f"across all {n_tests} tests of this report.")
    caption += f" Definitions: {DOCS}." + withheld_note(rows) + small_n_note(rows, len(group) + 2, "shared contexts")
    return Table(title=f"{part['title']}: model A vs model B", caption=caption, header=header, rows=rows)


def _diff_cell(measure: Mapping[str, Any]) -> str:
    """Δ with its interval, or ``(n < K)`` where its method needs more contexts."""
    return pp_ci(measure["diff"], measure["diff_ci"],
                 withheld(measure.get("n"), minimum_contexts(measure.get("method", PAIRED_T))))


def comparison_section(report: Mapping[str, Any]) -> Section | None:
    comparisons = report.get("comparisons") or {}
    parts = comparisons.get("suites") or {}
    if not parts:
        return None
    n_tests = comparisons.get("n_tests", 0)
    return Section("Model comparisons", [comparison_table(p, n_tests) for p in parts.values()])


# ---------------------------------------------------------------- the finding: trivial baselines


def _compared(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """(model, trivial baseline) of a comparison row pairing one of each, else None."""
    from framebench.registry import trivial_model

    a, b = str(row["model_a"]), str(row["model_b"])
    if trivial_model(a) == trivial_model(b):
        return None
    return (b, a) if trivial_model(a) else (a, b)


def _likeness(part: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """``equal`` when every measure is the same for both models, ``close`` when every paired
    difference's interval includes 0 (and the McNemar test, if any, finds nothing at Holm
    p < .05), else ``""``; measures a trivial baseline scores trivially (``"baseline": false``)
    left out."""
    from framebench.scoring.finding import excludes_zero
    from framebench.scoring.formatting import SIGNIFICANCE, as_number

    skip = {m["key"] for m in part.get("measures") or [] if m.get("baseline") is False}
    measures = [m for key, m in row["measures"].items() if key not in skip]
    if all(m.get("a") == m.get("b") for m in measures):
        return "equal"
    test = row.get("test") or {}
    p = as_number(test.get("p_holm", test.get("p")))
    if any(excludes_zero(m.get("diff_ci")) is not False for m in measures) or (p is not None and p < SIGNIFICANCE):
        return ""
    return "close"


def _where(part: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """The part's title and the row's group, its pooled level left out (it means "all of them")."""
    pooled = part.get("pooled") or [None, None]
    cells = [_group_cell(level, value) for level, value in row["group"].items() if level != pooled[0]]
    return ", ".join([part["title"], *cells])


def baseline_finding(comparisons: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{model: [sentence]}``: where a model's numbers equal, or cannot be told apart from, those of
    a trivial baseline answering the same items (the pooled groups, where a suite pools them)."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for part in (comparisons.get("suites") or {}).values():
        pooled = part.get("pooled")
        for row in part["rows"]:
            pair = _compared(row)
            if pair is None or (pooled and row["group"].get(pooled[0]) != pooled[1]):
                continue
            likeness = _likeness(part, row)
            if likeness:
                found.setdefault((*pair, likeness), []).append(f"{_where(part, row)} (n = {row['n_contexts']})")
    out: dict[str, list[str]] = {}
    for (model, baseline, likeness), where in found.items():
        what = ("⚑ Equal to {b} on every measure, on the same items: {w}." if likeness == "equal"
                else "⚑ Not distinguishable from {b} on the same items (every paired difference's "
                     "interval includes 0): {w}.")
        out.setdefault(model, []).append(what.format(b=baseline, w="; ".join(where)))
    return out
