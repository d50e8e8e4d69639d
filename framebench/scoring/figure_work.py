"""report.html's figures, drawn by a forked process while this one writes the rest of the report.

Drawing and encoding the figures (matplotlib) is the largest single cost of writing a report and
needs nothing but the finished report dict, so ``start_figures(report)`` has a child process
(``framebench.scoring.forked``) draw them, the same calls in the same order as drawing them here,
while the parent writes report.json, report.md and the drill-down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.forked import Forked

Payload = dict[str, str]  # {"part", "title", "png"}: one figure as report.html shows it


def figure_payloads(report: Mapping[str, Any]) -> list[Payload]:
    """Every figure of the report (``figures_by_part``) as a titled base64 PNG of its part."""
    from framebench.scoring.figures import png_base64
    from framebench.scoring.report import figures_by_part

    return [{"part": part, "title": title, "png": png_base64(fig)}
            for part, title, fig in figures_by_part(report)]


def start_figures(report: Mapping[str, Any]) -> Forked[list[Payload]]:
    """The report's figure payloads, being drawn; ``.result()`` collects them."""
    return Forked(figure_payloads, report)
