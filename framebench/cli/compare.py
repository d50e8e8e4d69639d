"""``framebench compare`` and ``framebench power``: model comparisons over chosen runs, and the
effects a study of N contexts per task could detect (``framebench.api.compare`` / ``plan``)."""

from __future__ import annotations

from pathlib import Path

import typer

from framebench.bounds import CONTEXTS, option


def _print(tables, console) -> None:
    from rich.table import Table as RichTable
    from rich.text import Text

    for table in tables:
        out = RichTable(title=table.title, title_justify="left", caption=table.caption,
                        caption_justify="left")
        for col in table.header:
            out.add_column(col, overflow="fold")
        for row in table.rows:  # Text: a cell is never console markup ("m [constrained]" keeps its tag)
            out.add_row(*(Text(cell) for cell in row))
        console.print(out)


def compare(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders holding records.parquet."),
    allow_mixed: bool = typer.Option(False, "--allow-mixed-datasets", help="Pool one model's runs over "
                                     "different datasets (refused by default)."),
) -> None:
    """Compare every pair of models on the items they share: paired differences with intervals,
    exact McNemar tests, Holm-adjusted (docs/statistics.md)."""
    from framebench import api
    from framebench.console import console
    from framebench.scoring.comparisons_report import comparison_section

    report = {"comparisons": api.compare(run_dirs, allow_mixed=allow_mixed)}
    _print(comparison_section(report).tables, console())


def power(
    pilot: list[Path] = typer.Option(..., "--from", metavar="RUN_DIR",
                                     help="Pilot run folder(s); repeat for several."),
    contexts: int = option(CONTEXTS, ..., help="Contexts per task in the planned run."),
    allow_mixed: bool = typer.Option(False, "--allow-mixed-datasets", help="Pool one model's pilot runs over "
                                     "different datasets (refused by default)."),
) -> None:
    """Print the framing effect and the between-model differences detectable at 80 % power,
    alpha 0.05, with N contexts per task, from a pilot run's per-context variance."""
    from framebench import api
    from framebench.console import console
    from framebench.scoring.power import plan_table

    _print([plan_table(api.power_plan(pilot, contexts, allow_mixed=allow_mixed), contexts)], console())
