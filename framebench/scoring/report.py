"""The one report loop: every registered report part (``framebench.scoring.parts``), in order.

``compute_report`` builds ``report.json`` (each present part's entry under its name); the
renderers take sections, figures and summary tables from ``sections_by_part``,
``report_figures`` and ``summary_tables``, which ask the same parts. Nothing here names a part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from framebench.scoring.parts import Figure, ReportInput, ReportPart, SummaryTable

if TYPE_CHECKING:
    from framebench.runs import Runs
    from framebench.scoring.view import Section


def parts() -> list[ReportPart]:
    """Every registered part (suites and the report-wide parts), in report order."""
    from framebench.registry import report_parts

    return report_parts()


def compute_report(runs: Runs, n_resamples: int, *, quick: bool = False) -> dict[str, Any]:
    """Each part's entry, stage 0 (from the runs) before stage 1 (which reads stage-0 entries);
    keys in report order."""
    inputs = ReportInput(runs, n_resamples, quick)
    for part in sorted(parts(), key=lambda p: p.stage):  # stable: report order within a stage
        entry = part.compute(inputs)
        if entry:
            inputs.report[part.name] = entry
    order = [p.name for p in parts()]
    return {name: inputs.report[name] for name in order if name in inputs.report}


def present(report: Mapping[str, Any]) -> list[ReportPart]:
    """The parts whose entry the report holds, in report order."""
    return [p for p in parts() if report.get(p.name)]


def sections_by_part(report: Mapping[str, Any]) -> list[tuple[ReportPart, Section]]:
    """(part, section) for every section of the report, in report order."""
    return [(part, section) for part in present(report) for section in part.report_sections(report)]


def report_figures(report: Mapping[str, Any]) -> list[tuple[str, Figure]]:
    """(title, figure) for every figure of the report (parts with nothing to draw give None)."""
    figures = [fig for part in present(report) for fig in part.report_figures(report)]
    return [(title, fig) for title, fig in figures if fig is not None]


def summary_tables(report: Mapping[str, Any]) -> list[SummaryTable]:
    return [table for part in present(report) for table in part.summary_tables(report)]


def task_order() -> tuple[str, ...]:
    """Tasks in report order: the registered suites' tasks, then the pooled "all"."""
    from framebench.registry import ordered_suites

    return (*dict.fromkeys(t for s in ordered_suites() for t in s.task_names()), "all")
