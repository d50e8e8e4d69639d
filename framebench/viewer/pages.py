"""What the viewer's pages show, as plain values for the templates: the records list's rows, the
context grid (a row per variant, a column per model) and one record's page.

Column names come from the suites (``SuiteView``: ``list_columns``, ``result_columns``,
``grid_groups``, ``grid_pair``, ``reference``, ``record_panels``); nothing here names a suite.
Every text is untrusted and reaches the page through the templates' autoescaping.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from framebench.scoring import viewer_links as links
from framebench.scoring.html import Cell, format_cell, suite_view
from framebench.scoring.parts import SuiteView
from framebench.viewer.data import RunData

SNIPPET = 300  # characters of a question or output sent per list row (the cell cuts it further)
TITLE_TEXT = 2000  # characters of the full text put in a cut cell's tooltip
LIST_START = ["model", "task", "format", "context"]
LIST_END = ["question", "output", "answer", "gold", "correct"]
HIDDEN_FIELDS = ("prompt", "run_dir", "output", "answer_probs")  # shown in their own panels


def shown_columns(name: str) -> tuple[str, ...]:
    """The columns the records list and the context grid show for a suite's rows: its view's
    ``list_columns``, else its own record columns."""
    from framebench.registry import suites

    found = suites().get(name)
    if found is None:
        return ()
    return found.view.list_columns or tuple(found.items.records.columns)


def cut(text: Any, limit: int = SNIPPET) -> str:
    text = "" if _missing(text) else str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _filled(rows: pd.DataFrame, column: str) -> bool:
    if column not in rows:
        return False
    values = rows[column]
    return bool((values.notna() & (values.astype(str) != "")).any())


def result_mark(suite: SuiteView, record: Mapping[str, Any]) -> Cell:
    """A record's right/wrong mark; where it has no gold answer to be right about (and the mark
    is plain correctness), whether it parsed."""
    mark_column = suite.result_columns[1]
    if not graded(suite, record):
        parse = record.get("parse")
        return Cell("") if parse == "ok" else format_cell("parse", parse)
    return format_cell(mark_column, record.get(mark_column))


def graded(suite: SuiteView, record: Mapping[str, Any]) -> bool:
    """Whether a record can be right or wrong (a gold answer, or a suite's own mark)."""
    return suite.result_columns[1] != "correct" or bool(record.get("gold"))


def breaks_strict(suite: SuiteView, record: Mapping[str, Any]) -> bool:
    return result_mark(suite, record).css == "bad"


def record_link(record: Mapping[str, Any]) -> str:
    return links.record_url("/", str(record["suite"]), str(record["item_id"]), str(record["model"]),
                            str(record.get("run_id") or ""))


# ---------------------------------------------------------------- the records list


def list_columns(data: RunData, shown: pd.DataFrame, suites: Sequence[str]) -> list[str]:
    """The suite columns of the list: those the selection's suites show, where a shown row has a
    value."""
    columns = dict.fromkeys(c for name in suites for c in shown_columns(name))
    return [c for c in columns if c in data.records and _filled(shown, c)]


def list_row(data: RunData, record: dict[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    suite = suite_view(str(record["suite"]))
    value_column, _ = suite.result_columns
    question = data.question(record)
    output = "" if _missing(record.get("output")) else str(record["output"])
    return {
        "cells": {c: format_cell(c, record.get(c)) for c in ["model", "task", "format", *columns]},
        "context": str(record["context_id"]),
        "context_url": links.context_url("/", str(record["suite"]), str(record["context_id"])),
        "record_url": record_link(record),
        "question": cut(question), "question_full": cut(question, TITLE_TEXT),
        "output": cut(output), "output_full": cut(output, TITLE_TEXT),
        "answer": format_cell(value_column, record.get(value_column)),
        "gold": format_cell("gold", record.get("gold")),
        "mark": result_mark(suite, record),
    }


# ---------------------------------------------------------------- the context grid


@dataclass
class GridCell:
    text: str
    css: str
    url: str
    title: str


@dataclass
class GridRow:
    group: str
    labels: list[Cell]
    questions: list[tuple[str, str, str]]  # (pair value, cut question, full question)
    cells: list[GridCell | None]  # per model, per pair value
    disagree: bool = False
    breaks: bool = False


@dataclass
class Grid:
    models: list[str]
    pair_values: list[str]
    labels: list[str]
    rows: list[GridRow] = field(default_factory=list)
    strict: list[dict[str, Any]] = field(default_factory=list)  # per model: summary, broken-by count
    graded: bool = False  # whether any row can be right or wrong (else nothing breaks strict)


def context_grid(data: RunData, suite_name: str, rows: pd.DataFrame, show: str = "") -> Grid:
    """The context's variants as rows (grouped by the suite's ``grid_groups``) and its models as
    columns (and, with a ``grid_pair``, one sub-column per pair value)."""
    suite = suite_view(suite_name)
    models = list(dict.fromkeys(rows["model"]))
    several_formats = rows["format"].nunique() > 1
    groups = (["format"] if several_formats else []) + [c for c in suite.grid_groups if _filled(rows, c)]
    pair = suite.grid_pair if _filled(rows, suite.grid_pair) else ""
    pair_values = list(dict.fromkeys(rows[pair])) if pair else [""]
    labels = [c for c in shown_columns(suite_name) if c not in groups and c != pair and _filled(rows, c)]
    keys = list(dict.fromkeys(["format", *groups, *labels]))
    references = _reference_answers(suite, rows)
    passage = data.passage(suite_name, str(rows["context_id"].iloc[0]))
    grid = Grid(models, pair_values if pair else [], labels)
    by_key: dict[tuple, dict[tuple[str, str], dict[str, Any]]] = {}
    for record in rows.to_dict("records"):
        key = tuple(str(record.get(k) or "") for k in keys) if pair else (str(record["item_id"]),)
        by_key.setdefault(key, {}).setdefault((record["model"], record.get(pair, "") if pair else ""), record)
    for cells_of in by_key.values():
        grid.rows.append(_grid_row(suite, cells_of, models, pair, pair_values, groups, labels, passage,
                                   references))
    grid.rows = [r for r in grid.rows if show == "" or (show == "disagree" and r.disagree)
                 or (show == "breaks" and r.breaks)]
    for model in models:
        mine = rows[rows["model"] == model]
        broken = sum(breaks_strict(suite, r) for r in mine.to_dict("records"))
        grid.strict.append({"model": model, "summary": suite.model_summary(mine), "broken": broken})
    grid.graded = any(graded(suite, r) for r in rows.to_dict("records"))
    return grid


def _reference_answers(suite: SuiteView, rows: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(model, format) -> the model's answer on the context's reference row (a neutral question)."""
    if suite.reference is None or suite.reference[0] not in rows:
        return {}
    column, value = suite.reference
    value_column = suite.result_columns[0]
    found = rows[rows[column] == value]
    return {(str(r["model"]), str(r["format"])): str(r.get(value_column)) for r in found.to_dict("records")}


def _grid_row(suite: SuiteView, cells_of: dict[tuple[str, str], dict[str, Any]], models: list[str],
              pair: str, pair_values: list[str], groups: list[str], labels: list[str], passage: str,
              references: dict[tuple[str, str], str]) -> GridRow:
    first = next(iter(cells_of.values()))
    group = " · ".join(str(first.get(c)) if c == "format" else f"{c} {first.get(c)}"
                       for c in groups if first.get(c))
    questions = []
    for value in pair_values:
        record = next((r for (_, v), r in cells_of.items() if v == value), None)
        if record is not None:
            text = str(record.get("prompt") or "")[len(passage):].strip()
            questions.append((value, cut(text, 400), cut(text, TITLE_TEXT)))
    row = GridRow(group, [format_cell(c, first.get(c)) for c in labels], questions, [])
    for value in pair_values:
        answers = set()
        for model in models:
            record = cells_of.get((model, value))
            row.cells.append(None if record is None else _grid_cell(suite, record, references))
            if record is not None:
                answers.add(str(record.get(suite.result_columns[0])))
                row.breaks |= breaks_strict(suite, record)
        row.disagree |= len(answers) > 1
    return row


def _grid_cell(suite: SuiteView, record: dict[str, Any], references: dict[tuple[str, str], str]) -> GridCell:
    value_column = suite.result_columns[0]
    value = record.get(value_column)
    mark = result_mark(suite, record)
    text = format_cell(value_column, "—" if _missing(value) or value == "" else value).text
    css = mark.css
    reference = references.get((str(record["model"]), str(record["format"])))
    is_reference = suite.reference is not None and record.get(suite.reference[0]) == suite.reference[1]
    if reference is not None and not is_reference and str(value) != reference:
        css += " flip"
    parse = str(record.get("parse") or "")
    title = cut(record.get("output"), TITLE_TEXT) + (f"\n[{parse}]" if parse and parse != "ok" else "")
    return GridCell(f"{text} {mark.text}".strip(), css.strip(), record_link(record), title)


# ---------------------------------------------------------------- one record


def find_record(data: RunData, suite: str, item_id: str, model: str, run_id: str) -> tuple[dict[str, Any], pd.DataFrame] | None:
    """The record (and every row of its item) that a record URL names, or None."""
    rows = data.item_rows(suite, item_id)
    mine = rows[(rows["model"] == model) & ((rows["run_id"] == run_id) if run_id else True)]
    if mine.empty:
        return None
    return mine.iloc[0].to_dict(), rows


def record_page(data: RunData, record: dict[str, Any], same_item: pd.DataFrame) -> dict[str, Any]:
    suite = suite_view(str(record["suite"]))
    value_column, _ = suite.result_columns
    fields = [(c, format_cell(c, record.get(c)).text) for c in data.records.columns
              if c not in HIDDEN_FIELDS and not _missing(record.get(c)) and str(record.get(c)) != ""]
    others = [{"model": str(r["model"]), "run_id": str(r["run_id"]),
               "answer": format_cell(value_column, r.get(value_column)).text,
               "mark": result_mark(suite, r), "url": record_link(r)}
              for r in same_item.to_dict("records")
              if (r["model"], r["run_id"]) != (record["model"], record["run_id"])]
    return {
        "record": {"suite": str(record["suite"]), "item_id": str(record["item_id"]),
                   "model": str(record["model"]), "task": str(record["task"]),
                   "format": str(record["format"]), "parse": str(record.get("parse") or "")},
        "answer": format_cell(value_column, record.get(value_column)),
        "gold": format_cell("gold", record.get("gold")),
        "mark": result_mark(suite, record),
        "turns": data.chat(record),
        "output": "" if _missing(record.get("output")) else str(record["output"]),
        "probs": answer_probs(record.get("answer_probs")),
        "fields": fields,
        "others": others,
        "panels": suite.record_panels(Path(str(record["run_dir"])), record),
        "context_url": links.context_url("/", str(record["suite"]), str(record["context_id"])),
        "context_id": str(record["context_id"]),
    }


def answer_probs(raw: Any) -> list[tuple[str, str]]:
    """A constrained record's answer probabilities, most likely first ([] when it has none)."""
    if _missing(raw) or not raw:
        return []
    try:
        probs = json.loads(str(raw))
    except ValueError:
        return [("(unreadable)", str(raw))]
    if not isinstance(probs, dict):
        return [("(unreadable)", str(raw))]
    ranked = sorted(probs.items(), key=lambda kv: -kv[1] if isinstance(kv[1], (int, float)) else 0)
    return [(str(k), f"{v:.4f}" if isinstance(v, (int, float)) else str(v)) for k, v in ranked]
