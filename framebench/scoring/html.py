"""``report.html``: one self-contained page with the report's tables, figures and a per-context
drill-down of the records.

Everything model- or data-derived (outputs, prompts, ids, model names) is untrusted and reaches
the page only through Jinja2 autoescaping; the page also carries a Content-Security-Policy that
forbids scripts and external loads. Figures are inline base64 PNGs; there is no JavaScript.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jinja2
import pandas as pd

from framebench.scoring.formatting import pct
from framebench.scoring.markdown import numeric_column
from framebench.scoring.parts import SuiteView
from framebench.scoring.sections import Table, ordered, task_name
from framebench.scoring.viewer_links import context_url, records_url, table_row_url
from framebench.vocabulary import BIASES, LEVELS, NEUTRAL

if TYPE_CHECKING:
    from framebench.scoring.figure_work import Payload
    from framebench.scoring.forked import Forked

DRILLDOWN_LIMIT = 5  # contexts shown per (model, suite, task, format); the rest are counted
TITLE = "framebench report"
GROUP_KEYS = ["model", "suite", "task", "format"]
DEFAULT_COLUMNS = ["item_id", "answer", "parse", "correct"]


def suite_order() -> list[str]:
    from framebench.registry import ordered_suites

    return [s.name for s in ordered_suites()]


def drilldown_columns(suite: str) -> list[str]:
    """The drill-down columns a registered suite declares (a generic set for unknown suites)."""
    return list(suite_view(suite).drilldown_columns or DEFAULT_COLUMNS)


# the core's framing columns sort in their vocabulary's order (a suite's ``row_order`` names them)
RANKS = {
    "bias": {NEUTRAL: 0, **{b: i for i, b in enumerate(BIASES, 1)}},
    "level": {"": 0, **{lv: i for i, lv in enumerate(LEVELS, 1)}},
}


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""


@dataclass(frozen=True)
class RecordRow:
    """One record's row of the drill-down: its cells, the question asked and the output."""

    cells: list[Cell]
    question: str
    output: str


@dataclass(frozen=True)
class ContextView:
    context_id: str
    summary: str
    status: str  # "pass", "fail" or "" (css class of the summary)
    rows: list[RecordRow]


@dataclass(frozen=True)
class GroupView:
    title: str
    columns: list[str]
    total: int
    contexts: list[ContextView] = field(default_factory=list)
    key: tuple[str, str, str, str] = ("", "", "", "")  # model, suite, task, format

    model = property(lambda self: self.key[0])
    suite = property(lambda self: self.key[1])
    task = property(lambda self: self.key[2])
    format = property(lambda self: self.key[3])

    @property
    def omitted(self) -> int:
        return self.total - len(self.contexts)


# ---------------------------------------------------------------- drill-down


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _true(value: Any) -> bool:
    return not _missing(value) and bool(value)


_kinds: list[tuple[object, dict[str, str]]] = []


def cell_kinds() -> dict[str, str]:
    """Record column -> how its cells show (``bool``: check marks, ``int``: a whole number,
    ``share``: a percentage), from the registered contract's types and the suites'
    ``share_columns``."""
    import pyarrow as pa

    from framebench.records import registered_schema
    from framebench.registry import ordered_suites

    schema = registered_schema()
    if not _kinds or _kinds[0][0] is not schema:
        kinds = {c: "bool" if pa.types.is_boolean(t) else "int" for c, t in schema.columns.items()
                 if pa.types.is_boolean(t) or pa.types.is_integer(t)}
        kinds.update({c: "share" for s in ordered_suites() for c in s.view.share_columns})
        _kinds[:] = [(schema, kinds)]
    return _kinds[0][1]


def format_cell(column: str, value: Any, kinds: Mapping[str, str] | None = None) -> Cell:
    """A record value as display text; booleans as check marks. ``kinds``: ``cell_kinds()``, when
    the caller formats many cells (looking it up costs more than formatting one)."""
    if _missing(value):
        return Cell("")
    kind = (cell_kinds() if kinds is None else kinds).get(column)
    if kind == "bool":
        return Cell("✓", "ok") if bool(value) else Cell("✗", "bad")
    if kind == "share":
        return Cell(pct(value) + " %", "num")
    if kind == "int":
        return Cell(str(int(value)), "num")
    return Cell(str(value))


def suite_view(name: str) -> SuiteView:
    """The view of the registered suite of that name, or the ``SuiteView`` defaults for an unknown one."""
    from framebench.registry import suites

    found = suites().get(name)
    return found.view if found is not None else SuiteView()


def _context_view(suite: str, context_id: str, records: list[dict[str, Any]],
                  prompts: Mapping[str, str]) -> ContextView:
    columns, kinds = drilldown_columns(suite), cell_kinds()
    rows = [
        RecordRow(
            cells=[format_cell(c, record.get(c), kinds) for c in columns],
            question=str(prompts.get(str(record["item_id"]), "")),
            output="" if _missing(record.get("output")) else str(record["output"]),
        )
        for record in records
    ]
    summary, status = suite_view(suite).context_summary(records)
    return ContextView(str(context_id), summary, status, rows)


def select_contexts(records: pd.DataFrame, limit: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The records of the first ``limit`` contexts (by id) of each model x suite x task x format,
    and the number of contexts of each such group."""
    contexts = records[[*GROUP_KEYS, "context_id"]].drop_duplicates()
    contexts = contexts.sort_values([*GROUP_KEYS, "context_id"])
    totals = contexts.groupby(GROUP_KEYS, sort=False).size().rename("total").reset_index()
    shown = contexts[contexts.groupby(GROUP_KEYS, sort=False).cumcount() < limit]
    subset = records.merge(shown, on=[*GROUP_KEYS, "context_id"], how="inner")
    return subset, totals


def _row_ranks(rows: pd.DataFrame) -> pd.Series:
    """Each row's place among its suite's rows by that suite's ``row_order`` (then item id)."""
    ranks = pd.Series(0, index=rows.index, dtype="int64")
    for name, own in rows.groupby("suite", sort=False):
        columns = [c for c in suite_view(str(name)).row_order if c in own.columns]
        keys = pd.DataFrame({c: (own[c].map(RANKS[c]).fillna(9) if c in RANKS else own[c].fillna("").astype(str))
                             for c in columns} | {"item_id": own["item_id"].fillna("").astype(str)},
                            index=own.index)
        order = keys.sort_values(list(keys.columns), kind="stable").index
        ranks.loc[order] = range(len(order))
    return ranks


def _display_order(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by group (model, suite, task, format), context id, then the suite's
    ``row_order`` and item id."""
    order = suite_order()
    suite_rank = {s: i for i, s in enumerate(order)}
    from framebench.scoring.report import task_order

    tasks = task_order()
    task_rank = {t: i for i, t in enumerate(tasks)}
    keys = {
        "model": rows["model"],
        "suite": rows["suite"].map(suite_rank).fillna(len(order)),
        "task_rank": rows["task"].map(task_rank).fillna(len(tasks)),
        "task": rows["task"],
        "format": rows["format"],
        "context_id": rows["context_id"],
    }
    keys["row"] = _row_ranks(rows)
    order = pd.DataFrame(keys, index=rows.index).sort_values(list(keys), kind="stable").index
    return rows.loc[order]


def drilldown(records: pd.DataFrame | None, prompts: Mapping[str, str],
              limit: int = DRILLDOWN_LIMIT) -> list[GroupView]:
    """Per-context views of the records, capped at ``limit`` contexts per group."""
    if records is None or records.empty:
        return []
    subset, totals = select_contexts(records, limit)
    total_of = {tuple(row[:4]): int(row[4]) for row in totals.itertuples(index=False)}
    rows = _display_order(subset).to_dict("records")
    groups = []
    for key, group_rows in itertools.groupby(rows, key=lambda r: tuple(r[k] for k in GROUP_KEYS)):
        model, suite, task, fmt = key
        contexts = [_context_view(suite, cid, list(ctx_rows), prompts)
                    for cid, ctx_rows in itertools.groupby(group_rows, key=lambda r: r["context_id"])]
        groups.append(GroupView(
            title=f"{model}{suite_view(suite).model_note(str(model))} · {task_name(task)} · {fmt}",
            columns=drilldown_columns(suite),
            total=total_of[key],
            contexts=contexts,
            key=(str(model), str(suite), str(task), str(fmt)),
        ))
    return groups


# ---------------------------------------------------------------- page


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("framebench.scoring", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
    )


def _table_view(table: Table, suite: str = "", viewer_url: str | None = None) -> dict[str, Any]:
    row_links = ([table_row_url(viewer_url, suite, table.header, row) for row in table.rows]
                 if viewer_url else [None] * len(table.rows))
    return {"title": table.title, "caption": table.caption, "header": table.header,
            "rows": table.rows, "links": row_links,
            "numeric": [numeric_column(table, i) for i in range(len(table.header))]}


def _meta(records: pd.DataFrame | None) -> str:
    """Records, evaluated models and suites; rows a suite says are not a model's (e.g. a dataset's
    authored reference answers, ``SuiteView.reference_panel``) are named as such and not counted."""
    if records is None or records.empty:
        return "No records."
    names = [str(m) for m in records["model"].unique()]
    suites = ordered(records["suite"].unique(), suite_order())
    panels = [suite_view(s).reference_panel(names) for s in suites]
    panel = {m for members, _ in panels for m in members}
    models = ordered(m for m in names if m not in panel)
    text = (f"{len(records):,} records · {len(models)} model(s): {', '.join(models)} · "
            f"suites: {', '.join(suites)}")
    return text + "".join(f" · {note}" for members, note in panels if members)


def render_html(report: Mapping[str, Any], records: pd.DataFrame | None,
                prompts: Mapping[str, str] | None = None, *,
                drilldown_limit: int = DRILLDOWN_LIMIT, viewer_url: str | None = None,
                figures: Forked[list[Payload]] | None = None) -> str:
    """``report.html``: tables, inline figures and the capped per-context drill-down. With a
    ``viewer_url`` (where ``framebench view`` serves these records), table rows and drill-down
    contexts link to the browser (URL scheme: ``framebench.scoring.viewer_links``); a suite's
    table rows filter on that suite. ``figures``: the report's figures, already being drawn
    (``figure_work.start_figures(report)``); without them they are drawn alongside the rest of the
    page."""
    from framebench.scoring.figure_work import start_figures

    own = figures is None
    figures = start_figures(report) if figures is None else figures
    try:
        return _page(report, records, prompts, drilldown_limit, viewer_url, figures)
    finally:
        if own:
            figures.cancel()  # nothing left to stop unless the page failed


def _page(report: Mapping[str, Any], records: pd.DataFrame | None, prompts: Mapping[str, str] | None,
          drilldown_limit: int, viewer_url: str | None, figures: Forked[list[Payload]]) -> str:
    sections, tails, unplaced = _section_views(report, viewer_url, figures.result())
    meta, groups = _meta(records), drilldown(records, prompts or {}, drilldown_limit)
    template = _environment().get_template("report.html.j2")
    return template.render(
        title=TITLE,
        meta=meta,
        sections=sections,
        tails=tails,
        figures=unplaced,
        groups=groups,
        limit=drilldown_limit,
        viewer=_viewer_links(viewer_url),
    )


def _section_views(report: Mapping[str, Any], viewer_url: str | None, payloads: list[Payload]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Payload]]:
    """The sections, those of the parts shown last (provenance, after the drill-down), and the
    figures no section shows. A figure follows the table that names it (``Table.figures``), or
    else its part's last section."""
    from framebench.registry import suites
    from framebench.scoring.report import sections_by_part

    pending: dict[str, list[Payload]] = {}
    for payload in payloads:
        pending.setdefault(payload.get("part", ""), []).append(payload)
    pairs = sections_by_part(report)
    last_of = {part.name: i for i, (part, _) in enumerate(pairs)}
    sections, tails = [], []
    for i, (part, section) in enumerate(pairs):
        own = pending.get(part.name, [])
        tables = []
        for table in section.tables:
            view = _table_view(table, part.name if part.name in suites() else "", viewer_url)
            view["figures"] = [f for f in own if f["title"] in table.figures]
            own[:] = [f for f in own if f["title"] not in table.figures]
            tables.append(view)
        trailing = list(own) if last_of[part.name] == i else []
        if trailing:
            own.clear()
        view = {"title": section.title, "note": section.note, "paragraphs": section.items,
                "tables": tables, "figures": trailing}
        (tails if part.last else sections).append(view)
    return sections, tails, [f for own in pending.values() for f in own]


def _viewer_links(viewer_url: str | None) -> dict[str, Any] | None:
    """URL builders for the template's drill-down, or None without a viewer."""
    if not viewer_url:
        return None
    return {
        "group": lambda group: records_url(viewer_url, {
            "model": group.model, "suite": group.suite, "task": group.task,
            "format": group.format}),
        "context": lambda group, context: context_url(viewer_url, group.suite, context.context_id),
    }
