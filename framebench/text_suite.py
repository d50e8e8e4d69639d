"""A text suite with the common defaults (``framebench.plugin.text_suite``), so a yes/no or
multiple-choice benchmark is one short file (docs/extending.md, "A suite in one file").

Its items need the core fields plus ``gold`` and the suite's own ``fields`` (and may carry
``bias`` and ``level``, the framing every suite shares). Each item is one job: the suite's
``prompt`` filled with the item's fields (default: its ``question``) as the one user turn, after
the suite's ``system`` turn if any, answered in at most ``max_new_tokens`` tokens. The output is
parsed strictly: after outer whitespace, quotes, asterisks and a final period, it must be one of
the format's answers (any case); anything else is ``unparsed`` and wrong. An answer mode that
keeps probabilities (``--answer constrained``) answers with its most probable allowed answer.
The metrics are accuracy per model, overall and per framing (``bias``), in report.json, the
report's table and the console summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from framebench.answering import keeps_probs
from framebench.backends.base import Decoding
from framebench.backends.constrained import pick
from framebench.errors import UserError
from framebench.records import SuiteRecords, encode_answer_probs, make_row
from framebench.scoring.parts import ReportInput, SuiteView, SummaryTable
from framebench.scoring.sections import Section, Table
from framebench.suite import Job, Suite, SuiteItems, SuiteMetrics, TextOptions, standard_formats
from framebench.vocabulary import BIASES, NEUTRAL

__all__ = ["TextSuiteItems", "TextSuiteMetrics", "strict_answer", "text_suite"]

_EDGE = " \t\r\n*\"'`"
FRAMINGS = (NEUTRAL, *BIASES)


def strict_answer(output: str, allowed: tuple[str, ...]) -> str:
    """The allowed answer ``output`` is, ignoring case, outer quotes and a final period ("" if none)."""
    text = output.strip(_EDGE).removesuffix(".").strip(_EDGE).lower()
    return next((a for a in allowed if a.lower() == text), "")


@dataclass(frozen=True)
class TextSuiteItems(SuiteItems):
    """One job per item (its prompt, after an optional system turn); its record parsed strictly."""

    prompt: str = "{question}"
    system: str = ""
    max_new_tokens: int = 8

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, where: str) -> list[Job]:
        system = [{"role": "system", "content": self.system}] if self.system else []
        decoding = Decoding(max_new_tokens=self.max_new_tokens)
        return [Job(item, item["item_id"], [*system, {"role": "user", "content": self._prompt(item, where)}],
                    decoding, decoding_name=item["suite"]) for item in items]

    def _prompt(self, item: dict[str, Any], where: str) -> str:
        try:
            return self.prompt.format_map(item)
        except (KeyError, IndexError, ValueError) as exc:
            raise UserError(f"{where}: item {item['item_id']!r}: the {item['suite']} prompt cannot be filled "
                            f"from its fields ({type(exc).__name__}: {exc})") from None

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        item, output = job.item, job.output or ""
        answer = pick(job.probs) if keeps_probs(job) and job.probs else \
            strict_answer(output, self.answer_choices(job))
        return make_row(run_id=run_id, model=model, suite=item["suite"], task=item["task"], format=item["format"],
                        context_id=item["context_id"], item_id=job.record_id, bias=item.get("bias", NEUTRAL),
                        level=item.get("level", ""), gold=item["gold"], answer=answer,
                        parse="ok" if answer else "unparsed", correct=answer == item["gold"], output=output,
                        answer_mode=job.answer_mode, answer_probs=encode_answer_probs(job.probs))

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        return self.records.formats[job.item["format"]]


def _accuracy(rows: Any) -> dict[str, Any]:
    return {"n": int(len(rows)), "accuracy": float(rows["correct"].mean())}


def _pct(entry: Mapping[str, Any] | None) -> str:
    return f"{100 * entry['accuracy']:.1f}" if entry else ""


@dataclass
class TextSuiteMetrics(SuiteMetrics):
    """Accuracy per model, overall and per framing (``bias``) present in its records."""

    def compute(self, inputs: ReportInput) -> dict[str, Any] | None:
        mine = inputs.records[inputs.records["suite"] == self.name]
        if mine.empty:
            return None
        return {model: {**_accuracy(rows), "by_bias": {b: _accuracy(r) for b, r in rows.groupby("bias")}}
                for model, rows in mine.groupby("model")}

    def _rows(self, report: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
        entry = report[self.name]
        biases = [b for b in FRAMINGS if any(b in m["by_bias"] for m in entry.values())]
        header = ["Model", "Items", "Accuracy (%)", *(f"{b} (%)" for b in biases if len(biases) > 1)]
        rows = [[model, str(m["n"]), _pct(m), *(_pct(m["by_bias"].get(b)) for b in biases if len(biases) > 1)]
                for model, m in sorted(entry.items())]
        return header, rows

    def report_sections(self, report: Mapping[str, Any]) -> list[Section]:
        header, rows = self._rows(report)
        caption = "share of items answered right (unparsed = wrong), overall and per framing"
        return [Section(self.title, [Table(f"{self.title}: accuracy", caption, header, rows)])]

    def summary_tables(self, report: Mapping[str, Any]) -> list[SummaryTable]:
        header, rows = self._rows(report)
        return [SummaryTable(self.title, header, rows)]


def text_suite(name: str, title: str, *, prompt: str = "{question}", fields: Mapping[str, type] | None = None,
               system: str = "", max_new_tokens: int = 8, tasks: tuple[str, ...] | None = None,
               formats: tuple[str, ...] = ("binary",), order: int = 90) -> Suite:
    """A text suite named ``name`` (the items' ``suite`` field), titled ``title`` in the report:
    the user turn (``prompt``, a ``str.format`` template over the item's fields), the fields its
    items must carry besides the core ones and ``gold`` (``fields``: name -> type), an optional
    system turn, the answer's token budget, its ``tasks`` (default: its name), its ``formats``
    among the standard ones (``binary``: Yes/No; ``mc``: A-D) and its place in the report
    (``order``, low first)."""
    items = TextSuiteItems(tasks=tuple(tasks or (name,)), records=SuiteRecords(formats=standard_formats(*formats)),
                           item_fields={"gold": str, **(fields or {})}, item_extras={"bias": str, "level": str},
                           prompt=prompt, system=system, max_new_tokens=max_new_tokens)
    view = SuiteView(drilldown_columns=("item_id", "bias", "gold", "answer", "parse", "correct"))
    return Suite(items, TextSuiteMetrics(name, title, order=order), view)
