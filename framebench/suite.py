"""The ``Suite`` interface: what a benchmark contributes to framebench, as three parts.

A suite composes its *items* (``SuiteItems``: the ``task`` values and records contract of its rows,
and for a text suite items -> jobs -> record rows, what ``framebench text`` and ``build`` need), its
*metrics* (``SuiteMetrics``: a report part, ``framebench.scoring.parts.ReportPart``, whose entry in
``report.json`` is its metrics, with its tables, figures, summary and what the report compares
between models) and its *view* (``SuiteView``: how report.html's drill-down and ``framebench view``
show its rows). The suite's name, title and place in the report are its metrics' (its report part's).
Suites register through the ``framebench.suites`` entry-point group (``framebench.registry``);
the core finds them there and never imports a suite package.

The text runner (``framebench text``) serves every suite whose items carry its name in the
``suite`` field; ``framebench score`` asks every registered suite's metrics for their entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError
from framebench.records import STANDARD_ANSWERS, SuiteRecords
from framebench.registry import DEFAULT_ANSWER_MODE
from framebench.scoring.parts import ReportPart, SuiteView

if TYPE_CHECKING:
    from framebench.scoring.comparisons import Comparison

__all__ = ["Job", "Suite", "SuiteItems", "SuiteMetrics", "SuiteView", "TextOptions", "standard_formats"]


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


def standard_formats(*names: str) -> dict[str, tuple[str, ...]]:
    """``SuiteRecords.formats`` for the standard formats (binary ``Yes``/``No``, mc ``A``-``D``)."""
    return {name: STANDARD_ANSWERS[name] for name in names}


@dataclass(frozen=True)
class SuiteItems:
    """A suite's items: what its rows are and, for a text suite, items -> jobs -> record rows.

    ``tasks``: the ``task`` values its records may carry, or a function that lists them (FramingQA:
    its registered domains); read them with ``task_names()``. ``records``: its part of the records
    contract, its formats and their answer sets among it (``framebench.records.SuiteRecords``).
    ``item_fields`` / ``item_extras``: the ``items.jsonl`` fields its items must / may carry;
    ``former_fields``: an item field's earlier name -> its name now (FramingQA: variant ->
    phrasing), so an ``items.jsonl`` written before the rename still reads.
    ``task_help``: a task -> one line on it (``framebench list tasks``; default: the suite's title).
    A suite without text jobs (embodied) keeps the defaults of the methods.
    """

    tasks: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    records: SuiteRecords = field(default_factory=SuiteRecords)
    item_fields: Mapping[str, type] = field(default_factory=dict)
    item_extras: Mapping[str, type] = field(default_factory=dict)
    former_fields: Mapping[str, str] = field(default_factory=dict)
    task_help: Mapping[str, str] = field(default_factory=dict)

    def task_names(self) -> tuple[str, ...]:
        return self.tasks() if callable(self.tasks) else self.tasks

    @property
    def makes_jobs(self) -> bool:
        """Whether ``items.jsonl`` may hold its items (it turns items into jobs)."""
        return type(self).jobs is not SuiteItems.jobs

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, where: str) -> list[Job]:
        """Its items' jobs; ``where`` (the items file, or the log they came from) heads its error lines."""
        raise NotImplementedError(f"{type(self).__name__} makes no text jobs")

    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """(field, problem) when an item is inconsistent (``items.jsonl``); the default: a
        ``gold`` answer must be one of its format's answers."""
        allowed = self.records.formats.get(item["format"], ())
        if allowed and "gold" in item and item["gold"] not in allowed:
            return "gold", f"must be one of {', '.join(allowed)}, got {item['gold']!r}"
        return None

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        """The record row for a job whose ``output`` is set (``framebench.records.make_row``)."""
        raise NotImplementedError(f"{type(self).__name__} makes no text records")

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        """``--answer constrained``: the answers a job may be given, in tie-break order."""
        raise UserError(f"suite {job.item['suite']!r} does not support --answer constrained")

    def reasons_first(self, job: Job) -> bool:
        """``--answer constrained``: whether the model writes its reasoning (generation with the
        job's decoding) before its answer is scored."""
        return False

    def conditions_listing(self) -> list[tuple[str, str]]:
        """(name, one-line summary) of the per-job conditions it offers (``framebench list
        conditions``)."""
        return []

    def run_selection(self, jobs: list[Job]) -> dict[str, Any]:
        """Selection entries of run.json (and of the run id) that its jobs determine."""
        return {}


@dataclass
class SuiteMetrics(ReportPart):
    """A suite's metrics: its report part (``compute``: its ``report.json`` entry,
    ``report[self.name]``; ``report_sections``, ``report_figures``, ``summary_tables``, ...;
    ``framebench.scoring.parts.ReportPart``), what the report compares between models and its
    own Inspect AI metrics. ``name`` is the suite's name (the records' ``suite`` value and the
    report.json key), ``title`` its section title, ``order`` its place in the report (low first),
    ``comparison`` what the report compares between models on the same items
    (``framebench.scoring.comparisons``; None: no model comparisons)."""

    name: str
    title: str
    order: int = 50
    comparison: Comparison | None = None

    def inspect_metrics(self) -> list[Any]:
        """Inspect AI metrics of its own for its task under Inspect (``inspect eval framebench/NAME``;
        ``framebench.interop.inspect_tasks``), beside accuracy and its clustered error."""
        return []


@dataclass(frozen=True)
class Suite:
    """A benchmark: its items, its metrics (whose name, title and order are the suite's) and its view."""

    items: SuiteItems
    metrics: SuiteMetrics
    view: SuiteView = field(default_factory=SuiteView)

    @property
    def name(self) -> str:
        return self.metrics.name

    @property
    def title(self) -> str:
        return self.metrics.title

    @property
    def order(self) -> int:
        return self.metrics.order
