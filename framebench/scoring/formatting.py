"""Cell formatting for report tables: percentages with one decimal, signed percentage points,
intervals as ``value (lo, hi)`` (or ``value (n < K)`` where too few contexts give no interval),
counts flagged when small, p-values. Every report part formats its cells with these, so all
tables share one unit convention."""

from __future__ import annotations

import math
import re
from typing import Any

from framebench.scoring.sections import MISSING
from framebench.scoring.stats import MIN_CONTEXTS, MIN_CONTEXTS_BINARY, SMALL_N

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


def _with_interval(text: str, ci: Any, minimum: int | None, unit: Any) -> str:
    """``text (lo, hi)`` with the bounds formatted by ``unit``; without an interval, ``text (n <
    minimum)`` when ``minimum`` is given (the interval was withheld for too few contexts: see
    :func:`withheld`), else ``text``."""
    if text == MISSING:
        return text
    bounds = ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)
    lo, hi = unit(bounds[0]), unit(bounds[1])
    if MISSING not in (lo, hi):
        return f"{text} ({lo}, {hi})"
    return text if minimum is None else f"{text} ({WITHHELD.format(minimum)})"


WITHHELD = "n < {}"


def withheld(n: Any, minimum: int) -> int | None:
    """``minimum`` when ``n`` (the contexts a value is over) is below it, so that a missing
    interval reads as withheld for too few contexts (``(n < minimum)``); None otherwise."""
    number = as_number(n)
    return minimum if number is not None and number < minimum else None


def pp_ci(value: Any, ci: Any, minimum: int | None = None) -> str:
    """``+12.5 (+3.0, +22.0)``: signed percentage points and their interval (see
    :func:`_with_interval` for ``minimum``)."""
    return _with_interval(points(value), ci, minimum, points)


def withheld_note(rows: list[list[str]], unit: str = "contexts") -> str:
    """A caption sentence explaining the ``(n < K)`` cells (empty when there are none)."""
    pattern = re.compile(re.escape(WITHHELD).replace(r"\{\}", r"(\d+)"))
    found = sorted({int(m) for row in rows for cell in row for m in pattern.findall(cell)})
    if not found:
        return ""
    kinds = {MIN_CONTEXTS: "a mean", MIN_CONTEXTS_BINARY: "a 0/1 measure such as a strict one"}
    limits = " or ".join(f"{k} {unit} ({kinds[k]})" if k in kinds else f"{k} {unit}" for k in found)
    return (f" n < K: no interval; with fewer than {limits}, a 95 % interval's coverage depends "
            "more on the data than on the method, so none is shown (docs/statistics.md#small-samples).")


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


def pct_ci(value: Any, ci: Any, minimum: int | None = None) -> str:
    """``27.7 (20.1, 35.0)``: a percentage and its interval, when the interval is known (see
    :func:`_with_interval` for ``minimum``)."""
    return _with_interval(pct(value), ci, minimum, pct)


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
