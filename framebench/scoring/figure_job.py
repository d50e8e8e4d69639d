"""report.html's figures, drawn in a forked process while this one writes the rest of the report.

Drawing and encoding the figures (matplotlib) is the largest single cost of writing a report and
needs nothing but the finished report dict, so ``FigureJob.start(report)`` forks a child that draws
them (the same calls, in the same order, as drawing them here) while the parent writes report.json,
report.md and the drill-down; ``result()`` collects the payloads. Where fork is not the platform's
way (not Linux), or the child fails for any reason, the figures are drawn in this process, so an
error a part's figure raises surfaces here as it would without the child.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

Payload = dict[str, str]  # {"title", "png"}: one figure as report.html shows it


def figure_payloads(report: Mapping[str, Any]) -> list[Payload]:
    """Every figure of the report (``report_figures``) as a titled base64 PNG."""
    from framebench.scoring.figures import png_base64
    from framebench.scoring.report import report_figures

    return [{"title": title, "png": png_base64(fig)} for title, fig in report_figures(report)]


def _draw(report: Mapping[str, Any], conn: Any) -> None:
    try:
        conn.send(("ok", figure_payloads(report)))
    except BaseException as exc:  # noqa: BLE001  (the parent draws them itself then)
        conn.send(("failed", repr(exc)))
    finally:
        conn.close()


class FigureJob:
    """The figures of one report, being drawn by a child process (or, without one, on demand)."""

    def __init__(self, report: Mapping[str, Any]) -> None:
        self.report = report
        self._process: Any = None
        self._conn: Any = None

    @classmethod
    def start(cls, report: Mapping[str, Any]) -> FigureJob:
        job = cls(report)
        if sys.platform.startswith("linux"):
            job._fork()
        return job

    def _fork(self) -> None:
        import multiprocessing

        try:
            context = multiprocessing.get_context("fork")
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_draw, args=(self.report, send), daemon=True)
            process.start()
        except (OSError, AssertionError):  # no process to be had (or a daemon's): draw them here
            return
        send.close()  # the child's end; the parent only reads
        self._process, self._conn = process, receive

    def result(self) -> list[Payload]:
        """The payloads, in report order (drawn here when the child did not deliver them)."""
        if self._process is None:
            return figure_payloads(self.report)
        try:
            status, payload = self._conn.recv()  # before join: the child blocks until it is read
        except (EOFError, OSError):  # the child died without sending
            status, payload = "failed", None
        finally:
            self._conn.close()
            self._process.join()
            self._process = None
        return payload if status == "ok" else figure_payloads(self.report)
