"""The headline, which leads the report: per model, the framing effect of every part that has one
(correct- vs incorrect-bias accuracy, their difference, its minimum detectable effect, strict
accuracy). A report part
registered under ``framebench.report_parts``; the suites contribute its entries and rows
(``ReportPart.headline``, ``headline_rows``), so it names none of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framebench.scoring.formatting import small_n_note, withheld_note
from framebench.scoring.parts import ReportInput, ReportPart
from framebench.scoring.sections import Section, Table

# ---------------------------------------------------------------- the part


class Headline(ReportPart):
    """The table that leads the report: per model, the framing effect of every part that has one.

    Its ``report.json`` entry merges the parts' ``headline(inputs)`` contributions (``{model:
    {row key: {...}}}``); its table stacks their ``headline_rows(report)`` in report order.
    """

    name = "headline"
    title = "Headline"
    order = 5
    stage = 1  # reads the suites' entries

    def _others(self) -> list[ReportPart]:
        from framebench.registry import report_parts

        return [p for p in report_parts() if p.name != self.name]

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        merged: dict[str, Any] = {}
        for part in self._others():
            for model, rows in (part.headline(inputs) or {}).items():
                merged.setdefault(str(model), {}).update(rows)
        return merged

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        rows, notes = [], []
        for part in self._others():
            if report.get(part.name):
                found = part.headline_rows(report)
                rows += found
                if found and part.headline_note:
                    notes.append(part.headline_note)
        if not rows:
            return []
        return [Section(self.title, [Table(
            title="Headline: the framing effect per model",
            caption="One row per model and what it was scored on, all tasks pooled. n: contexts "
            "(or episodes). Correct- / incorrect-bias: accuracy under the framings that name the "
            "right answer / a wrong one. Framing effect: their difference in percentage points "
            "(large = the framing moves the answers). Strict (all): share of contexts whose every "
            "variant is right. Brackets: 95 % t interval over contexts (mean ± t · SE, the SE "
            "stratified by task); strict accuracy: 95 % score interval, stratified by task. Both "
            "covered the truth in 93-97 % of simulated studies at 4 to 100 contexts per task "
            "(docs/statistics.md#coverage). A framing-effect interval that excludes 0 is an effect "
            "significant at the 5 % level; where no model is framed, about 1 in 20 still excludes 0. "
            "MDE: the framing effect detectable at "
            "80 % power, α = 0.05 (two-sided): 2.80 × its clustered standard error; a measured effect "
            "below it is not evidence of no effect (– where not computed). Definitions: "
            "docs/statistics.md#headline. "
            + " ".join(notes) + withheld_note(rows, "contexts or episodes")
            + small_n_note(rows, 2, "contexts or episodes"),
            header=["Model", "Format", "n", "Correct-bias accuracy (%)", "Incorrect-bias accuracy (%)",
                    "Framing effect (pp)", "MDE (pp)", "Strict accuracy, all (%)"],
            rows=rows)])]


HEADLINE = Headline()
