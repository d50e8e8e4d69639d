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
    """A display table: every cell already formatted as text. ``figures``: the titles of its
    part's figures that report.html shows right after it (a part's other figures follow its last
    section)."""

    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]
    figures: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A titled group of tables; ``note``: a line shown above them; ``items``: (lead, lines) shown
    as a list under the note (the finding: a model, and what its numbers say);
    ``heading``: whether the title is shown as a heading."""

    title: str
    tables: list[Table] = field(default_factory=list)
    note: str = ""
    heading: bool = True
    items: list[tuple[str, list[str]]] = field(default_factory=list)


def natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def ordered(keys: Iterable[str], order: Iterable[str] = ()) -> list[str]:
    """Keys in a preferred order first, then the rest in natural order (M2 before M10)."""
    keys = list(keys)
    preferred = [k for k in order if k in keys]
    return preferred + sorted((k for k in keys if k not in preferred), key=natural_key)


def task_name(task: str) -> str:
    return "all (pooled)" if task == "all" else task
