"""The finding in words, which opens the report (after its cautions) and the console summary: per
model, what the numbers of every other part say, in sentences those parts write from their own
``report.json`` entries (``ReportPart.finding``). A report part registered under
``framebench.report_parts``; it names no part, and computes last (stage 2), when every other entry,
the model comparisons' included, is known.

Its entry: ``{"models": [{"model", "baseline", "sentences"}]}``, evaluated models first, then the
trivial baselines (engines declared ``trivial``, e.g. constant answers), each in the order the
parts first name them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.formatting import as_number, count, pct, points
from framebench.scoring.parts import ReportInput, ReportPart
from framebench.scoring.sections import Section

HOW_TO_READ = (
    "Generated from the numbers of the tables below, per model. Brackets: 95 % intervals. An effect "
    "is called one only where its interval excludes 0; otherwise it is not distinguishable from noise "
    "at that n (contexts, episodes or scenario pairs), which is not evidence of no effect. A "
    "difference without an interval is descriptive only. ⚑: what makes a model's numbers hard to "
    "read as its own (equal to, or not distinguishable from, a trivial baseline on the same items; "
    "answers dominated by one answer or option letter).")
BASELINE_NOTE = " (trivial baseline: its answers ignore the question)"
CONSOLE_TITLE = "What the numbers say"


# ---------------------------------------------------------------- wording the parts share


def _bounds(ci: Any) -> tuple[float, float] | None:
    if not isinstance(ci, list | tuple) or len(ci) != 2:
        return None
    lo, hi = as_number(ci[0]), as_number(ci[1])
    return None if lo is None or hi is None else (lo, hi)


def excludes_zero(ci: Any) -> bool | None:
    """Whether a 95 % interval excludes 0 (None: no interval)."""
    bounds = _bounds(ci)
    return None if bounds is None else bounds[0] > 0 or bounds[1] < 0


def pp_words(value: Any, ci: Any) -> str:
    """``+14.1 pp (+6.7 to +22.5)``: a difference of shares and its 95 % interval, if any."""
    bounds = _bounds(ci)
    text = f"{points(value)} pp"
    return text if bounds is None else f"{text} ({points(bounds[0])} to {points(bounds[1])})"


def pct_words(value: Any, ci: Any = None) -> str:
    """``8.3 % (1.5 to 35.4)``: a share and its 95 % interval, if any."""
    bounds = _bounds(ci)
    text = f"{pct(value)} %"
    return text if bounds is None else f"{text} ({pct(bounds[0])} to {pct(bounds[1])})"


def effect_words(what: str, value: Any, ci: Any, n: Any, unit: str, mde: Any = None,
                 positive: str = "", negative: str = "") -> str:
    """An effect in words that claim no more than its interval: ``what +x pp (lo to hi), excluding
    0: <positive|negative>`` when the interval excludes 0; ``what +x pp (lo to hi): not
    distinguishable from noise at n = N unit`` when it does not (with the smallest effect the
    sample detects at 80 % power, ``mde``, when known); the value alone without an interval."""
    if as_number(value) is None:
        return ""
    excludes = excludes_zero(ci)
    if excludes is None:
        return f"{what} {pp_words(value, None)} (no interval)"
    if excludes:
        meaning = positive if as_number(value) > 0 else negative
        return f"{what} {pp_words(value, ci)}, excluding 0" + (f": {meaning}" if meaning else "")
    detectable = as_number(mde)
    tail = ("" if not detectable else f" (80 % power from about {100 * detectable:.1f} pp)" if detectable < 1
            else f" (too few {unit} to detect any effect with 80 % power)")
    return f"{what} {pp_words(value, ci)}: not distinguishable from noise at n = {count(n)} {unit}{tail}"


# ---------------------------------------------------------------- the part


def collect(report: Mapping[str, Any], parts: list[ReportPart]) -> dict[str, list[str]]:
    """Every part's sentences, per model, in report order."""
    by_model: dict[str, list[str]] = {}
    for part in parts:
        for model, sentences in (part.finding(report) or {}).items():
            by_model.setdefault(str(model), []).extend(s for s in sentences if s)
    return {model: sentences for model, sentences in by_model.items() if sentences}


def finding_entry(report: Mapping[str, Any], parts: list[ReportPart]) -> dict[str, Any] | None:
    """The part's ``report.json`` entry (None: no part has anything to say)."""
    from framebench.registry import trivial_model

    by_model = collect(report, parts)
    models = [m for m in by_model if not trivial_model(m)] + [m for m in by_model if trivial_model(m)]
    if not models:
        return None
    return {"models": [{"model": m, "baseline": trivial_model(m), "sentences": by_model[m]}
                       for m in models]}


def items(entry: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(lead, sentences) per model: its name (marked when a trivial baseline) and what its
    numbers say."""
    return [(str(m["model"]) + (BASELINE_NOTE if m.get("baseline") else ""), list(m["sentences"]))
            for m in entry.get("models") or []]


class Finding(ReportPart):
    name = "finding"
    title = "Finding"
    order = 2  # after the cautions, before the headline
    stage = 2  # reads every other entry

    def compute(self, inputs: ReportInput) -> Mapping[str, Any] | None:
        from framebench.scoring.report import present

        return finding_entry(inputs.report, [p for p in present(inputs.report) if p is not self])

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        return [Section(self.title, note=HOW_TO_READ, items=items(report[self.name]))]

    def summary_lines(self, report: Mapping[str, Any]) -> list[str]:
        lines = [f"{CONSOLE_TITLE} (brackets: 95 % intervals):"]
        for lead, sentences in items(report[self.name]):
            lines += [f"• {lead}", *(f"  - {sentence}" for sentence in sentences)]
        return lines


FINDING = Finding()
