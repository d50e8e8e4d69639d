"""Everything a suite or engine author imports, from one module (docs/extending.md).

The shortest suite is ``text_suite(...)`` (``framebench.text_suite``: one job per item, strict
parsing, accuracy per model and framing); a suite of its own composes ``Suite(SuiteItems,
SuiteMetrics, SuiteView)`` (``framebench.suite``). Run one from its file without installing
anything: ``framebench text --suite FILE.py:OBJECT`` and ``framebench score --suite FILE.py:OBJECT``
(``framebench.suite_file``); a package registers it under the ``framebench.suites`` entry point.
"""

from __future__ import annotations

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError
from framebench.records import SuiteRecords, make_row
from framebench.registry import Engine, Option
from framebench.scoring.parts import ReportInput, ReportPart, SuiteView, SummaryTable
from framebench.scoring.sections import Section, Table
from framebench.suite import Job, Suite, SuiteItems, SuiteMetrics, TextOptions, standard_formats
from framebench.text_suite import TextSuiteItems, TextSuiteMetrics, strict_answer, text_suite

__all__ = [
    "Chat", "Decoding", "Engine", "Job", "Option", "ReportInput", "ReportPart", "Section", "Suite", "SuiteItems",
    "SuiteMetrics", "SuiteRecords", "SuiteView", "SummaryTable", "Table", "TextOptions", "TextSuiteItems",
    "TextSuiteMetrics", "UserError", "make_row", "standard_formats", "strict_answer", "text_suite",
]
