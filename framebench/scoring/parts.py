"""The report-part protocol: what one part of the report contributes, and the input it gets.

A *report part* computes its ``report.json`` entry from the scored runs and turns the report into
sections (tables), figures and console summary tables. Every suite's metrics
are a part (``framebench.suite.SuiteMetrics`` subclasses ``ReportPart``); the parts that are not one suite's — the
provenance block, the headline, framing susceptibility, model comparisons — register under the
``framebench.report_parts`` entry-point group::

    [project.entry-points."framebench.report_parts"]
    headline = "framebench.scoring.headline:HEADLINE"

The report loop (``framebench.scoring.report``) asks every registered part, in ``order``, and each
renderer (report.json, report.md, report.html, the console summary, ``framebench view``'s report)
iterates over the same parts: none of them names a part.

Compute order: parts of ``stage`` 0 read only the runs; parts of stage 1 also read the entries of
stage-0 parts (``ReportInput.report``), e.g. the headline. A ``concurrent`` part (model
comparisons) reads the runs alone and is computed by a forked process while the others are.
Parts of stage 2 (the finding in words) read every other entry, the concurrent parts' included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from framebench.run_folder import Runs
    from framebench.scoring.sections import Section

Figure = Any  # a matplotlib Figure, or None when there is nothing to draw


@dataclass(frozen=True)
class SummaryTable:
    """A console summary table (``framebench text``/``score``/``demo``): text cells, percent."""

    title: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class ReportInput:
    """What a part computes from: the scored runs (records labelled once, prompts, run folders),
    whether this is the quick console summary (``quick``: skip what the summary does not show),
    and the entries computed so far (stage-1 parts read them)."""

    runs: Runs
    quick: bool = False
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def records(self) -> pd.DataFrame:
        return self.runs.records


class ReportPart:
    """Base class with the defaults; a part overrides what it contributes.

    ``name`` is its ``report.json`` key, ``title`` its section title, ``order`` its place in the
    report (low first: provenance 0, headline 5, suites 10-90, cross-suite analyses after).
    """

    name: str
    title: str
    order: int = 50
    stage: int = 0
    # True when ``compute`` reads the runs alone (no other part's entry, and no part reads its
    # entry while the report is computed): it may then run in a second process alongside the others
    concurrent: bool = False
    # True for a part that is present only when something needs a warning (a clean run has none)
    warns: bool = False
    # True for a part shown after every other (in report.html after the drill-down): provenance
    last: bool = False

    def compute(self, inputs: ReportInput) -> Mapping[str, Any] | None:
        """Its ``report.json`` entry (None or empty: the part is absent from this report)."""
        return None

    def preload(self, inputs: ReportInput) -> None:
        """A ``concurrent`` part: import the modules ``compute`` will need that the other parts
        need too, before its process is forked, so the two processes import them once."""

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        """Its report sections, given the whole report (only called when its entry is present)."""
        return []

    def report_figures(self, report: Mapping[str, Any]) -> list[tuple[str, Figure]]:
        """(title, figure) pairs for report.html (a None figure is skipped)."""
        return []

    def summary_tables(self, report: Mapping[str, Any]) -> list[SummaryTable]:
        """Its console summary tables."""
        return []

    def summary_lines(self, report: Mapping[str, Any]) -> list[str]:
        """Plain-text lines the console summary prints before every table (the finding)."""
        return []

    # ---- contributions to the finding in words (framebench.scoring.finding)
    def finding(self, report: Mapping[str, Any]) -> Mapping[str, list[str]]:
        """``{model: [sentence, ...]}``: what this part's numbers say about each model, given the
        whole report. Say only what the statistics support: an effect whose 95 % interval includes
        0 is not distinguishable from noise at that sample size, and is worded so."""
        return {}

    # ---- contributions to the headline part (framebench.scoring.headline)
    # a sentence under the headline table saying what its rows mean for this part ("" = none)
    headline_note: str = ""

    def headline(self, inputs: ReportInput) -> Mapping[str, Any] | None:
        """``{model: {row key: {...}}}`` entries this part adds to ``report["headline"]``."""
        return None

    def headline_rows(self, report: Mapping[str, Any]) -> list[list[str]]:
        """Rows of the headline table: model, what, n, correct-bias, incorrect-bias, framing
        effect (pp), its MDE (pp), strict (all); cells formatted (``framebench.scoring.formatting``)."""
        return []

    # ---- contributions to the provenance part (framebench.scoring.provenance)
    def run_fields(self, info: Mapping[str, Any], records: pd.DataFrame) -> dict[str, Any]:
        """Extra fields of a scored run folder's provenance entry whose records hold this part's
        rows (e.g. the embodied evaluation semantics)."""
        return {}

    def meta_fields(self, runs: list[Mapping[str, Any]]) -> dict[str, Any]:
        """Extra fields of the report's ``meta`` block, from every run folder's entry."""
        return {}

    def answer_mode(self, model: str, info: Mapping[str, Any]) -> str | None:
        """How this part's answers were obtained, in words (None: the generic wording)."""
        return None


@dataclass(frozen=True)
class Panel:
    """A titled table on the viewer's record page; cells are plain text (escaped when shown)."""

    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class SuiteView:
    """How report.html's drill-down and ``framebench view`` show one suite's rows (an unknown suite
    gets these defaults as they are).

    ``drilldown_columns``: the record columns of its drill-down tables (default: a generic set).
    ``result_columns``: the record columns shown as a row's result and its mark (default: the
    answer, and whether it is correct). ``list_columns``: the record columns that tell its rows
    apart within a context, shown by the viewer's records list and context grid (default: the
    suite's own declared columns). ``grid_groups``: the columns whose values group the context
    grid's rows. ``grid_pair``: a column whose values sit side by side in one grid row (OMIT's
    action and omission wordings of one scenario). ``reference``: (column, value) of the row a
    model's other answers in the context are compared with (a neutral question), if any.
    ``row_order``: the columns that order its rows within a context (then ``item_id``; ``bias``
    and ``level`` in their vocabulary's order). ``share_columns``: columns holding a share in
    [0, 1], shown as a percentage. ``filter_columns``: its columns the viewer filters by, each with
    the title report tables give it (a table cell under that title links to the filtered records).
    """

    drilldown_columns: tuple[str, ...] = ()
    result_columns: tuple[str, str] = ("answer", "correct")
    list_columns: tuple[str, ...] = ()
    grid_groups: tuple[str, ...] = ("bias", "level")
    grid_pair: str = ""
    reference: tuple[str, str] | None = None
    row_order: tuple[str, ...] = ("bias", "level")
    share_columns: tuple[str, ...] = ()
    filter_columns: Mapping[str, str] = field(default_factory=dict)

    def record_panels(self, run_dir: Path, record: Mapping[str, Any]) -> list[Panel]:
        """Extra tables on the viewer's page of one record (e.g. an episode's planner steps),
        read from its run folder."""
        return []

    def context_summary(self, records: list[dict[str, Any]]) -> tuple[str, str]:
        """One line on one model's rows of one context, and its status (``pass``, ``fail`` or
        ``""``; the css class of the line)."""
        parsed = sum(1 for r in records if r.get("parse") == "ok")
        return f"{len(records)} responses, {parsed} parsed", ""

    def model_summary(self, rows: pd.DataFrame) -> str:
        """The viewer's context page: one line per model over its rows of the context."""
        return f"{int((rows['parse'] == 'ok').sum())}/{len(rows)} parsed"

    def model_note(self, model: str) -> str:
        """Said after a model's name in the drill-down (e.g. that its rows are authored answers)."""
        return ""

    def reference_panel(self, models: list[str]) -> tuple[list[str], str]:
        """Of ``models``, those whose rows are not an evaluated model's (a dataset's authored
        reference answers), and a phrase naming them; ([], "") when none."""
        return [], ""
