"""What ``framebench build framingqa`` produced (``text_eval.build.build``), as its build report
(``text_eval.build_report``) reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from text_eval.answer_sheets import AnswerSheet
from text_eval.contexts import Context, Dropped


@dataclass
class BuildResult:
    contexts: list[Context]
    sheets: list[AnswerSheet]
    items: list[dict[str, Any]]
    dropped: list[Dropped]
    notes: list[str]
    pools: dict[str, Any]
    seconds: float = 0.0
