"""The compact metric tables printed at the end of ``text``, ``embodied``, ``score`` and ``demo``
(like lm-eval's): every report part's ``summary_tables``, percentages with one decimal.

After a run the summary is computed quickly from its records (``quick``: no analyses, no model
comparisons); after ``score`` it is the full report's. Both open with the finding in words
(``framebench.scoring.finding``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

TEXT_COLUMNS = {"model", "task", "format", "planner", "level", "bias"}  # and the suites' filter columns


def summary_report(df: pd.DataFrame) -> dict[str, Any]:
    """The report entries the summary shows, computed from records (``quick``)."""
    from framebench.scoring.report import compute_report

    return compute_report(df, quick=True)  # labels as the report's


def print_summary(report: Mapping[str, Any], title: str = "framebench", console=None) -> None:
    """Print every part's summary lines (the finding in words), then its summary tables (nothing
    when the report has no metrics)."""
    from rich.table import Table
    from rich.text import Text

    from framebench.console import console as make_console
    from framebench.scoring.report import summary_lines, summary_tables
    from framebench.scoring.viewer_links import suite_filters

    out = console or make_console()
    for line in summary_lines(report):
        out.print(Text(line))  # Text: model names are never console markup
    left = TEXT_COLUMNS | set(suite_filters())
    for summary in summary_tables(report):
        caption = f"{title} summary: {summary.title} (%)"
        table = Table(title=caption, title_justify="left", min_width=len(caption))  # the title on one line
        for col in summary.header:
            table.add_column(col, justify="left" if col in left else "right", overflow="fold")
        for row in summary.rows:  # Text: cells are never console markup ("m [constrained]" would lose its tag)
            table.add_row(*(Text(cell) for cell in row))
        out.print(table)
