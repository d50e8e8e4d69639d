"""The compact metric tables printed at the end of ``text``, ``embodied``, ``score`` and ``demo``
(like lm-eval's): FramingQA mean and strict_all per model, task and format; OMIT OBR/ABR/FCR per
model and condition; embodied completion per planner. Percentages, one decimal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

TEXT_COLUMNS = {"model", "task", "format", "condition", "planner", "level", "bias"}
SUMMARY_RESAMPLES = 200  # the summary shows no intervals; the report keeps the full bootstrap


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}"


def summary_tables(report: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(suite, header, rows)`` per suite present in a report dict (fractions), percent cells."""
    from framebench.scoring.view import ordered, task_order

    tables = []
    fqa = report.get("framingqa", {})
    rows = [[model, "all tasks" if task == "all" else task, fmt, str(m.get("n_contexts", "")),
             _pct(m.get("mean")), _pct(m.get("strict_all"))]
            for model in ordered(fqa) for task in ordered(fqa[model], task_order())
            for fmt, m in fqa[model][task].items()]
    if rows:
        tables.append(("FramingQA", ["model", "task", "format", "n", "mean", "strict_all"], rows))
    rates = report.get("omit", {}).get("rates", {})  # evaluated models only: no persona-panel rows
    rows = [[model, condition, str(m.get("n", "")), _pct(m.get("OBR")), _pct(m.get("ABR")), _pct(m.get("FCR"))]
            for model in ordered(rates) for condition, m in rates[model].items()]
    if rows:
        tables.append(("OMIT", ["model", "condition", "n pairs", "OBR", "ABR", "FCR"], rows))
    emb = report.get("embodied", {})
    rows = [[model, str(o.get("n_episodes", "")),
             *(_pct(o.get(k)) for k in ("completion_mean_neutral", "completion_mean_correct",
                                        "completion_mean_incorrect", "completion_strict_all"))]
            for model in ordered(emb) for o in [emb[model].get("overall", {})]]
    if rows:
        tables.append(("Robotics completion", ["planner", "n episodes", "neutral", "correct", "incorrect",
                                               "strict all"], rows))
    from framebench.scoring.susceptibility_report import summary_rows

    tables += summary_rows(report.get("susceptibility") or {})
    return tables


def summary_report(df: pd.DataFrame) -> dict[str, Any]:
    """The report sections the summary shows, computed from records (no OMIT analysis)."""
    from framebench.scoring.compute import jsonable
    from framebench.scoring.embodied import score_embodied
    from framebench.scoring.framingqa import score_framingqa
    from framebench.scoring.omit import score_omit

    report: dict[str, Any] = {}
    for name, part in (("framingqa", score_framingqa(df, n_resamples=SUMMARY_RESAMPLES)),
                       ("embodied", score_embodied(df)), ("omit", score_omit(df))):
        if part:
            report[name] = part
    return jsonable(report)


def print_summary(report: Mapping[str, Any], title: str = "framebench", console=None) -> None:
    """Print one compact table per suite (nothing when the report has no metrics)."""
    from rich.table import Table

    from framebench.console import console as make_console

    out = console or make_console()
    for suite, header, rows in summary_tables(report):
        caption = f"{title} summary: {suite} (%)"
        table = Table(title=caption, title_justify="left", min_width=len(caption))  # the title on one line
        for col in header:
            table.add_column(col, justify="left" if col in TEXT_COLUMNS else "right", overflow="fold")
        for row in rows:
            table.add_row(*row)
        out.print(table)
