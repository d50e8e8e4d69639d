"""The suite-agnostic report view model: display tables of pre-formatted cells, grouped in
sections. Suites build them from their metrics; Markdown and HTML render them."""

from __future__ import annotations

from dataclasses import dataclass, field

MISSING = "–"  # a cell without a value


@dataclass(frozen=True)
class Table:
    """A display table: every cell already formatted as text."""

    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Section:
    title: str
    tables: list[Table] = field(default_factory=list)
