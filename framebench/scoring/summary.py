"""The compact metric table printed at the end of ``text``, ``embodied``, ``score`` and ``demo``
(like lm-eval's): FramingQA mean and strict_all per model, task and format; OMIT OBR/ABR/FCR per
model and condition; embodied completion per planner. Percentages, one decimal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

HEADER = ("suite", "model", "slice", "n", "metric", "value (%)")
SUMMARY_RESAMPLES = 200  # the summary shows no intervals; the report keeps the full bootstrap


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}"


def summary_rows(report: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """``HEADER``-shaped rows for the suites present in a report dict (fractions)."""
    from framebench.scoring.markdown import TASK_ORDER, ordered

    rows: list[tuple[str, ...]] = []
    for model in ordered(report.get("framingqa", {})):
        tasks = report["framingqa"][model]
        for task in ordered(tasks, TASK_ORDER):
            for fmt, m in tasks[task].items():
                rows.append(("FramingQA", model, f"{'all tasks' if task == 'all' else task}, {fmt}",
                             str(m.get("n_contexts", "")), "mean / strict_all",
                             f"{_pct(m.get('mean'))} / {_pct(m.get('strict_all'))}"))
    omit = report.get("omit", {})
    for model in ordered(omit.get("rates", {})):  # evaluated models only: no persona-panel rows
        for condition, m in omit["rates"][model].items():
            rows.append(("OMIT", model, condition, str(m.get("n", "")), "OBR / ABR / FCR",
                         f"{_pct(m.get('OBR'))} / {_pct(m.get('ABR'))} / {_pct(m.get('FCR'))}"))
    for model in ordered(report.get("embodied", {})):
        m = report["embodied"][model].get("overall", {})
        rows.append(("Robotics", model, "overall", str(m.get("n_episodes", "")),
                     "completion neutral / correct / incorrect / strict all",
                     " / ".join(_pct(m.get(k)) for k in ("completion_mean_neutral", "completion_mean_correct",
                                                         "completion_mean_incorrect", "completion_strict_all"))))
    return rows


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
    """Print the summary table (nothing when the report has no metrics)."""
    from rich.table import Table

    from framebench.console import console as make_console

    rows = summary_rows(report)
    if not rows:
        return
    table = Table(title=f"{title} summary (percent)")
    for col in HEADER:
        table.add_column(col, justify="right" if col in ("n", "value (%)") else "left")
    for row in rows:
        table.add_row(*row)
    (console or make_console()).print(table)
