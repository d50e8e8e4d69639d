"""``report.md``: the report's sections as Markdown.

``report_sections(report)`` collects every present report part's sections (``scoring.report``);
``render_markdown`` and the HTML renderer both draw from them, so the two reports always show the
same numbers. The tables come formatted (``scoring.formatting``); this module only escapes and
lays them out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from framebench.scoring.sections import MISSING, Section, Table

# ---------------------------------------------------------------- assembly


def report_sections(report: Mapping[str, Any]) -> list[Section]:
    """The report's sections: every present part's, in report order (``scoring.report``)."""
    from framebench.scoring.report import sections_by_part

    return [section for _, section in sections_by_part(report)]


def _md_cell(text: str) -> str:
    """A table cell: pipes and backslashes escaped, no line breaks, no raw HTML (names come from
    data and model specs, and Markdown viewers would render tags)."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    for char in "[]`":  # no links or code spans made of data
        text = text.replace(char, "\\" + char)
    # "<" before a digit ("<0.1") cannot open an HTML tag, so it stays readable in the raw file
    return re.sub(r"<(?!\d)", "&lt;", text).replace(">", "&gt;")


def _md_text(text: str) -> str:
    """Running text (a list item): a table cell's escapes, and no emphasis made of data."""
    escaped = _md_cell(text)
    for char in "*_":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def table_markdown(table: Table) -> str:
    lines = [f"### {_md_cell(table.title)}", "", f"_{_md_cell(table.caption)}_", ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in table.header) + " |")
    lines.append("|" + "|".join("---:" if numeric_column(table, i) else "---"
                                for i in range(len(table.header))) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


# a number (thousands commas, decimals, exponent, "<0.1"), then optionally " (lo, hi)" or " †"
NUMERIC_CELL = re.compile(r"^[<>]?[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( .*)?$")


def numeric_column(table: Table, index: int) -> bool:
    cells = [row[index] for row in table.rows if row[index] != MISSING]
    return bool(cells) and all(NUMERIC_CELL.match(c) for c in cells)


def render_markdown(report: Mapping[str, Any]) -> str:
    """``report.md``: every table of the report, percentages with one decimal."""
    parts = ["# framebench report"]
    sections = report_sections(report)
    if not any(s.tables for s in sections):
        parts.append("No records to report.")
    for section in sections:
        if section.heading:
            parts.append(f"## {_md_cell(section.title)}")
        if section.note:
            parts.append(f"_{_md_cell(section.note)}_")
        if section.items:
            parts.append("\n".join(f"- **{_md_text(lead)}**\n" + "\n".join(f"  - {_md_text(line)}" for line in lines)
                                   for lead, lines in section.items))
        parts += [table_markdown(t) for t in section.tables]
    return "\n\n".join(parts) + "\n"
