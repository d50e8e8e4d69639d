"""The one report loop: every registered report part (``framebench.scoring.parts``), in order.

``compute_report`` builds ``report.json``: ``{part name: its entry}``, each suite's metrics under its
name plus the report-wide parts (``meta``: provenance; ``headline``; ``susceptibility``; any a plugin
registers); an entry only when the part has something to say, JSON-ready (no NaN or numpy scalars:
a missing value is None). The
renderers take sections, figures and summary tables from ``sections_by_part``,
``report_figures`` and ``summary_tables``, which ask the same parts. Nothing here names a part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from framebench.scoring.parts import Figure, ReportInput, ReportPart, SummaryTable

if TYPE_CHECKING:
    from framebench.run_folder import Runs
    from framebench.scoring.sections import Section

READS_ALL = 2  # the stage of parts that read every other entry, the concurrent parts' included


def parts() -> list[ReportPart]:
    """Every registered part (suites and the report-wide parts), in report order."""
    from framebench.registry import report_parts

    return report_parts()


def compute_report(records: pd.DataFrame | Runs, *, quick: bool = False) -> dict[str, Any]:
    """Each part's entry, stage 0 (from the runs) before stage 1 (which reads stage-0 entries);
    keys in report order, JSON-ready. ``records``: the scored runs (``framebench.run_folder.load_runs``),
    or a bare records frame (then a model's constrained rows are labelled as a model of their own here)."""
    from framebench.run_folder import Runs
    from framebench.scoring.forked import Forked

    runs = records if isinstance(records, Runs) else Runs.of(records)
    inputs = ReportInput(runs, quick)
    # concurrent parts (reading the runs alone) run in a second process meanwhile, unless quick
    concurrent = [] if quick else [p for p in parts() if p.concurrent]
    for part in concurrent:
        part.preload(inputs)
    forked = [(part, Forked(part.compute, inputs)) for part in concurrent]
    staged = sorted((p for p in parts() if p not in concurrent), key=lambda p: p.stage)  # stable
    try:
        for part in (p for p in staged if p.stage < READS_ALL):
            _add(inputs, part, part.compute(inputs))
        for part, running in forked:
            _add(inputs, part, running.result())
        for part in (p for p in staged if p.stage >= READS_ALL):
            _add(inputs, part, part.compute(inputs))
    finally:
        for _, running in forked:
            running.cancel()  # nothing left to stop unless a part raised
    order = [p.name for p in parts()]
    return jsonable({name: inputs.report[name] for name in order if name in inputs.report})


def _add(inputs: ReportInput, part: ReportPart, entry: Mapping[str, Any] | None) -> None:
    if entry:
        inputs.report[part.name] = entry


def jsonable(value: Any) -> Any:
    """``value`` with NaN/inf as None and numpy/pandas scalars as Python ones."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def present(report: Mapping[str, Any]) -> list[ReportPart]:
    """The parts whose entry the report holds, in report order (a ``last`` part at the end)."""
    return sorted((p for p in parts() if report.get(p.name)), key=lambda p: p.last)


def sections_by_part(report: Mapping[str, Any]) -> list[tuple[ReportPart, Section]]:
    """(part, section) for every section of the report, in report order."""
    return [(part, section) for part in present(report) for section in part.report_sections(report)]


def report_figures(report: Mapping[str, Any]) -> list[tuple[str, Figure]]:
    """(title, figure) for every figure of the report (parts with nothing to draw give None)."""
    return [(title, fig) for _, title, fig in figures_by_part(report)]


def figures_by_part(report: Mapping[str, Any]) -> list[tuple[str, str, Figure]]:
    """(part name, title, figure) for every figure of the report, in report order."""
    return [(part.name, title, fig) for part in present(report)
            for title, fig in part.report_figures(report) if fig is not None]


def summary_tables(report: Mapping[str, Any]) -> list[SummaryTable]:
    return [table for part in present(report) for table in part.summary_tables(report)]


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    return [line for part in present(report) for line in part.summary_lines(report)]


def task_order() -> tuple[str, ...]:
    """Tasks in report order: the registered suites' tasks, then the pooled "all"."""
    from framebench.registry import ordered_suites

    return (*dict.fromkeys(t for s in ordered_suites() for t in s.items.task_names()), "all")
