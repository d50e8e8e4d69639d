"""The suite-agnostic report view model: display tables of pre-formatted cells, grouped in
sections. Suites build them from their metrics; Markdown and HTML render them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MISSING = "–"  # a cell without a value
FORMAT_NAMES = {"binary": "Binary yes/no", "mc": "Multiple choice"}
LEVEL_NAMES = {"root": "Root", "propositional": "Prop.", "global": "Global"}


@dataclass(frozen=True)
class Table:
    """A display table: every cell already formatted as text."""

    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Section:
    """A titled group of tables; ``note``: a line shown above them; ``heading``: whether the
    title is shown as a heading (the provenance block at the top of the report has none)."""

    title: str
    tables: list[Table] = field(default_factory=list)
    note: str = ""
    heading: bool = True


def natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def ordered(keys: Iterable[str], order: Iterable[str] = ()) -> list[str]:
    """Keys in a preferred order first, then the rest in natural order (M2 before M10)."""
    keys = list(keys)
    preferred = [k for k in order if k in keys]
    return preferred + sorted((k for k in keys if k not in preferred), key=natural_key)


def task_name(task: str) -> str:
    return "all (pooled)" if task == "all" else task
