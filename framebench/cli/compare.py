"""``framebench compare`` and ``framebench plan``: model comparisons over chosen runs, and the
effects a study of N contexts per task could detect (``framebench.api.compare`` / ``plan``)."""

from __future__ import annotations

from pathlib import Path

import typer

from framebench.bounds import CONTEXTS, RESAMPLES, option


def _print(tables, console) -> None:
    from rich.table import Table as RichTable

    for table in tables:
        out = RichTable(title=table.title, title_justify="left", caption=table.caption,
                        caption_justify="left")
        for col in table.header:
            out.add_column(col, overflow="fold")
        for row in table.rows:
            out.add_row(*row)
        console.print(out)


def compare(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders holding records.parquet."),
    resamples: int = option(RESAMPLES, 2000, help="Bootstrap resamples per interval."),
) -> None:
    """Compare every pair of models on the items they share: paired differences with intervals,
    exact McNemar tests, Holm-adjusted (docs/statistics.md)."""
    from framebench import api
    from framebench.console import console
    from framebench.scoring.comparisons_report import comparison_section

    report = {"comparisons": api.compare(run_dirs, n_resamples=resamples)}
    _print(comparison_section(report).tables, console())


def plan(
    pilot: list[Path] = typer.Option(..., "--from", metavar="RUN_DIR",
                                     help="Pilot run folder(s); repeat for several."),
    contexts: int = option(CONTEXTS, ..., help="Contexts per task in the planned run."),
) -> None:
    """Print the framing effect and the between-model differences detectable at 80 % power,
    alpha 0.05, with N contexts per task, from a pilot run's per-context variance."""
    from framebench import api
    from framebench.console import console
    from framebench.scoring.power import plan_table

    _print([plan_table(api.plan(pilot, contexts), contexts)], console())
