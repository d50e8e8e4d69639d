"""The ``Suite`` interface: what a benchmark contributes to framebench.

A suite turns items into jobs (text suites), a job and its output into a record row, records into
metrics (its section of ``report.json``) and metrics into report tables, figures and console
summary tables: a suite is a report part (``framebench.scoring.parts.ReportPart``) whose entry is
its metrics. It names the columns its drill-down shows and how the viewer sums up a context.
Suites register through the ``framebench.suites`` entry-point group (``framebench.registry``);
the core finds them there and never imports a suite package.

The text runner (``framebench text``) serves every suite whose items carry its name in the
``suite`` field; ``framebench score`` asks every registered suite for its metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from framebench.backends.base import Chat, Decoding
from framebench.records import STANDARD_ANSWERS, SuiteRecords
from framebench.registry import DEFAULT_ANSWER_MODE
from framebench.scoring.parts import RecordsView, ReportPart

if TYPE_CHECKING:
    from framebench.scoring.comparisons import Comparison


@dataclass
class Job:
    """One model call: the item, the id of its record, the chat and the decoding.

    ``condition`` is the suite's own per-job experimental condition (OMIT: M0-M4), ``decoding_name`` the
    label under which run.json lists this job's decoding. ``answer_mode`` is ``generate`` (free
    text in ``output``) or ``constrained`` (``probs``: the probability of each allowed answer;
    ``output``: the reasoning generated first, if the suite asks for one).
    """

    item: dict[str, Any]
    record_id: str
    chat: Chat
    decoding: Decoding
    condition: Any = None
    decoding_name: str = ""
    key: str = ""
    output: str | None = None
    answer_mode: str = DEFAULT_ANSWER_MODE
    probs: dict[str, float] | None = None

    @property
    def prompt(self) -> str:
        return self.chat[-1]["content"]


@dataclass(frozen=True)
class TextOptions:
    """The text runner's selection flags, as a suite sees them."""

    conditions: Sequence[str] = ()


@dataclass
class Suite(ReportPart, RecordsView):
    """Base class with the defaults; a suite overrides what it uses.

    ``name`` is the records' ``suite`` value and the report.json key; ``tasks`` the ``task``
    values its records may carry; ``order`` places its report section (low first); ``records``
    its part of the records contract (formats and answer sets, own columns and vocabularies, a
    row check: ``framebench.records.SuiteRecords``).
    How the drill-down and the viewer sum up its records: ``RecordsView``.
    """

    name: str
    title: str
    tasks: tuple[str, ...]
    order: int = 50
    drilldown_columns: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()  # the ``format`` values its records and items may carry
    selection: dict[str, Any] = field(default_factory=dict)
    records: SuiteRecords = field(default_factory=SuiteRecords)  # its part of the records contract
    item_fields: Mapping[str, type] = field(default_factory=dict)  # fields its items must carry
    item_extras: Mapping[str, type] = field(default_factory=dict)  # fields its items may carry
    # an item field -> the records column it fills, where the two names differ (FramingQA:
    # variant -> phrasing): the column's vocabulary checks the field when the items are read
    item_columns: Mapping[str, str] = field(default_factory=dict)
    result_columns: tuple[str, str] = ("answer", "correct")
    list_columns: tuple[str, ...] = ()  # default: its own record columns (``shown_columns``)
    grid_groups: tuple[str, ...] = ("bias", "level")
    grid_pair: str = ""
    reference: tuple[str, str] | None = None
    row_order: tuple[str, ...] = ("bias", "level")
    share_columns: tuple[str, ...] = ()
    filter_columns: Mapping[str, str] = field(default_factory=dict)
    stage = 0

    def __post_init__(self) -> None:
        """``formats`` and ``records.formats`` say the same: a suite that names only its formats
        gets the standard answer sets of those (``framebench.records.STANDARD_ANSWERS``)."""
        if self.records.formats:
            self.formats = self.formats or tuple(self.records.formats)
        else:
            self.records = replace(self.records, formats={f: STANDARD_ANSWERS.get(f, ()) for f in self.formats})

    def shown_columns(self) -> tuple[str, ...]:
        return self.list_columns or tuple(self.records.columns)

    @property
    def text_items(self) -> bool:
        """Whether ``items.jsonl`` may hold its items (it turns items into jobs)."""
        return type(self).jobs is not Suite.jobs

    def task_names(self) -> tuple[str, ...]:
        """The ``task`` values its records may carry (default: ``tasks``)."""
        return self.tasks

    def task_help(self, task: str) -> str:
        """One line on a task (``framebench list tasks``; default: the suite's title)."""
        return self.title

    # ---- text suites: items -> jobs -> records
    def jobs(self, items: list[dict[str, Any]], options: TextOptions, source: str) -> list[Job]:
        raise NotImplementedError(f"suite {self.name!r} has no text jobs")

    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """(field, problem) when an item of this suite is inconsistent (``items.jsonl``); the
        default: a ``gold`` answer must be one of its format's answers."""
        allowed = self.records.formats.get(item["format"], ())
        if allowed and "gold" in item and item["gold"] not in allowed:
            return "gold", f"must be one of {', '.join(allowed)}, got {item['gold']!r}"
        return None

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        """The record row for a job whose ``output`` is set (``framebench.records.make_row``)."""
        raise NotImplementedError(f"suite {self.name!r} has no text records")

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        """``--answer constrained``: the answers a job may be given, in tie-break order."""
        from framebench.errors import UserError

        raise UserError(f"suite {self.name!r} does not support --answer constrained")

    def reasons_first(self, job: Job) -> bool:
        """``--answer constrained``: whether the model writes its reasoning (generation with the
        job's decoding) before its answer is scored."""
        return False

    def conditions_listing(self) -> list[tuple[str, str]]:
        """(name, one-line summary) of the per-job conditions it offers (``framebench list
        conditions``)."""
        return []

    def run_selection(self, jobs: list[Job]) -> dict[str, Any]:
        """Selection entries of run.json (and of the run id) that this suite's jobs determine."""
        return {}

    def inspect_metrics(self) -> list[Any]:
        """Inspect AI metrics of its own for its task under Inspect (``inspect eval framebench/NAME``;
        ``framebench.interop.inspect_tasks``), beside accuracy and its clustered error."""
        return []

    # ---- records -> report: a suite is a report part (``framebench.scoring.parts.ReportPart``:
    # ``compute``, ``report_sections``, ``report_figures``, ``summary_tables``; its own entry is
    # ``report[self.name]``), plus what the report compares between models
    def comparison(self) -> Comparison | None:
        """What the report compares between models on the same items
        (``framebench.scoring.comparisons``); None: no model comparisons."""
        return None
