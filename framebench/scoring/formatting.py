"""Cell formatting for report tables: percentages with one decimal, signed percentage points,
intervals as ``value (lo, hi)``, counts flagged when small, p-values. Every report part formats
its cells with these, so all tables share one unit convention."""

from __future__ import annotations

import math
from typing import Any

from framebench.scoring.sections import MISSING

SIGNIFICANCE = 0.05


def as_number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def pct(value: Any) -> str:
    """A fraction as a percentage with one decimal; a non-zero value that would round to 0.0
    shows as ``<0.1`` (expected strict accuracy can be 1e-15: not zero, and no scientific
    notation in a percent table)."""
    number = as_number(value)
    if number is None:
        return MISSING
    percent = 100.0 * number
    if 0 < percent < 0.05:
        return "<0.1"
    if -0.05 < percent < 0:
        return ">-0.1"
    return f"{percent:.1f}"


def points(value: Any) -> str:
    """A difference of two fractions in percentage points, signed: ``+12.5``."""
    number = as_number(value)
    return MISSING if number is None else f"{100.0 * number:+.1f}"


def pp_ci(value: Any, ci: Any) -> str:
    text = points(value)
    if text == MISSING or not isinstance(ci, list | tuple) or len(ci) != 2:
        return text
    lo, hi = points(ci[0]), points(ci[1])
    return text if MISSING in (lo, hi) else f"{text} ({lo}, {hi})"


SMALL_N = 30  # contexts, episodes or pairs below which a row is flagged: its interval is wide
SMALL_MARK = "†"


def n_cell(value: Any) -> str:
    """A count, flagged with ``†`` when below ``SMALL_N``."""
    text = count(value)
    number = as_number(value)
    return f"{text} {SMALL_MARK}" if number is not None and number < SMALL_N else text


def small_n_note(rows: list[list[str]], index: int, unit: str) -> str:
    """A caption sentence warning about the flagged rows (empty when none is flagged)."""
    flagged = sum(1 for row in rows if row[index].endswith(SMALL_MARK))
    if not flagged:
        return ""
    return (f" {SMALL_MARK} Small sample: fewer than {SMALL_N} {unit} in {flagged} row(s); their "
            "percentages move a lot with a single item, read them with their intervals.")


def pct_ci(value: Any, ci: Any) -> str:
    """``27.7 (20.1, 35.0)``: a percentage and its interval, when the interval is known."""
    text = pct(value)
    if text == MISSING or not isinstance(ci, list | tuple) or len(ci) != 2:
        return text
    lo, hi = pct(ci[0]), pct(ci[1])
    if MISSING in (lo, hi):
        return text
    return f"{text} ({lo}, {hi})"


def num(value: Any, digits: int = 1) -> str:
    number = as_number(value)
    return MISSING if number is None else f"{number:.{digits}f}"


def count(value: Any) -> str:
    number = as_number(value)
    return MISSING if number is None else str(int(number))


def p_value(value: Any) -> str:
    number = as_number(value)
    if number is None:
        return MISSING
    return f"{number:.2e}" if number < 1e-3 else f"{number:.4f}"
