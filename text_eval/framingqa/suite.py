"""FramingQA, and its rotated-options control (registered under ``framebench.suites``).

Items: one job per item (binary or MC), parsed strictly against the item's options. Metrics:
FramingQA's report (``metrics``, ``tables``, ``figures``, ``headline``, ``finding``); the control
reports only the option-position table (``rotation``). View: a context passes when every question
is answered right (strict). The figures (matplotlib) load when report.html is made.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa

from framebench import records as rec
from framebench.backends.constrained import allowed_answers
from framebench.errors import UserError
from framebench.records import SuiteRecords
from framebench.scoring.sections import Section
from framebench.suite import (
    Job,
    Suite,
    SuiteItems,
    SuiteMetrics,
    SuiteView,
    TextOptions,
    standard_formats,
)
from framebench.text_eval.framingqa.comparison import COMPARISON as FRAMINGQA_COMPARISON
from framebench.text_eval.framingqa.domains import task_names
from framebench.text_eval.framingqa.finding import framingqa_finding, rotation_finding
from framebench.text_eval.framingqa.headline import score_headline
from framebench.text_eval.framingqa.metrics import score_framingqa
from framebench.text_eval.framingqa.prompts import decoding_for, render_chat
from framebench.text_eval.framingqa.rotation import rotation_table, score_rotation
from framebench.text_eval.framingqa.tables import framingqa_headline_rows, framingqa_tables
from framebench.text_eval.framingqa.tables import summary_tables as framingqa_summary_tables
from framebench.text_eval.parsing import parse_answer
from framebench.text_eval.suite import TEXT_ITEM_FIELDS, answer_columns, model_answer
from framebench.vocabulary import BINARY_ANSWERS, FORMS, MC_ANSWERS, PHRASINGS

TEXT_FORMATS = ("binary", "mc")
MIN_OPTIONS, MAX_OPTIONS = 2, len(MC_ANSWERS)

# FramingQA's record columns (docs/design.md "Records"): an item's form and phrasing (records
# schema 1-2 and items before issue 52 named it ``variant``), the option it names, its distractor
# and its slot in the context's design (which embodied's rows share)
FRAMINGQA_COLUMNS: dict[str, tuple[pa.DataType, Any]] = {
    "form": (pa.string(), ""), "phrasing": (pa.string(), ""), "option": (pa.string(), ""),
    "distractor": (pa.string(), ""), "slot": (pa.string(), ""),
}
FRAMINGQA_RECORDS = SuiteRecords(
    formats=standard_formats(*TEXT_FORMATS), columns=FRAMINGQA_COLUMNS,
    enums={"form": (*FORMS, ""), "phrasing": (*PHRASINGS, "")},
    former_names={"variant": ("phrasing", 3)}, column_order=5)

DOMAIN_HELP = {
    "law_issue_spotting": "LegalBench issue spotting: which legal area a situation raises",
    "law_hearsay": "LegalBench hearsay: is the evidence hearsay",
    "finance": "personal-finance posts (Stack Exchange): which product or step fits",
    "medicine": "DiagnosisArena cases: which diagnosis fits",
}


class FramingQAItems(SuiteItems):
    """One job per item; its answer parsed strictly against the item's options."""

    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """Binary items have no options; MC items 2-4, the gold among their letters (the phrasing,
        one of Table 7's, is checked by the records column's vocabulary)."""
        options = item["options"]
        if any(not isinstance(o, str) or not o.strip() for o in options):
            return "options", "must hold non-empty strings"
        if item["format"] == "binary":
            if options:
                return "options", f"binary items have none (got {len(options)})"
            allowed = BINARY_ANSWERS
        else:
            if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
                return "options", f"mc items need {MIN_OPTIONS}-{MAX_OPTIONS} options, got {len(options)}"
            allowed = MC_ANSWERS[: len(options)]
        if item["gold"] not in allowed:
            return "gold", f"must be one of {', '.join(allowed)}, got {item['gold']!r}"
        return None

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, where: str) -> list[Job]:
        return [self._job(item, where) for item in items]

    @staticmethod
    def _job(item: dict[str, Any], items_where: str) -> Job:
        where = f"{items_where}: item {item['item_id']!r}"
        if item["format"] not in TEXT_FORMATS:
            raise UserError(f"{where}: field 'format' must be binary or mc for the text evaluator, "
                            f"got {item['format']!r}")
        try:
            chat = render_chat(item)
        except ValueError as exc:
            raise UserError(f"{where}: field 'options': {exc}") from None
        return Job(item, item["item_id"], chat, decoding_for(item["format"]), decoding_name=item["format"])

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        item = job.item
        answer, parse = model_answer(job, lambda output: parse_item(item, output))
        return rec.make_row(
            run_id=run_id, model=model, suite=item["suite"], task=item["task"], format=item["format"],
            context_id=item["context_id"], item_id=job.record_id, bias=item["bias"], level=item["level"],
            form=item["form"], phrasing=item["phrasing"], option=item["option"],
            distractor=item["distractor"], slot=item["slot"], gold=item["gold"], answer=answer,
            parse=parse, correct=parse == "ok" and answer == item["gold"], output=job.output or "",
            **answer_columns(job),
        )

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        return allowed_answers(job.item["format"], len(job.item.get("options") or []))


def parse_item(item: dict[str, Any], output: str) -> tuple[str, str]:
    """(answer, parse) of a generated output, parsed strictly against the item's options."""
    parsed = parse_answer(output, item["format"], item["options"] or None)
    return parsed.answer, parsed.parse


class FramingQAMetrics(SuiteMetrics):
    """Accuracy, strict accuracy and framing effects per task, format, bias and level."""

    headline_note = ("FramingQA: per context the share of its questions of that bias answered "
                     "right, averaged over contexts.")

    def compute(self, inputs):
        return score_framingqa(inputs.records)

    def report_sections(self, report):
        return [Section(self.title, framingqa_tables(report[self.name]))]

    def report_figures(self, report):
        from framebench.text_eval.framingqa.figures import framingqa_figures

        return framingqa_figures(report[self.name])

    def summary_tables(self, report):
        return framingqa_summary_tables(report[self.name])

    def headline(self, inputs):
        return score_headline(inputs.records, inputs.report[self.name]) if inputs.report.get(self.name) else None

    def headline_rows(self, report):
        return framingqa_headline_rows(report.get("headline") or {})

    def finding(self, report):
        return framingqa_finding(report)


class RotatedMetrics(SuiteMetrics):
    """Option position only (``framebench.text_eval.framingqa.rotation``), next to the same model's
    fixed-order rows; never mixed into FramingQA's metrics."""

    def compute(self, inputs):
        return score_rotation(inputs.records)

    def report_sections(self, report):
        return [Section(self.title, [rotation_table(report[self.name])])]

    def finding(self, report):
        return rotation_finding(report[self.name])


def systematicity_breaks(rows) -> str:
    """`` · polarity breaks b/n · paraphrase breaks b/n``: a model's plain/negated pairs answered
    inconsistently and rewording triples answered differently in one context (docs/report.md
    "Systematicity"; empty where it has neither)."""
    from framebench.text_eval.framingqa.systematicity import (
        polarity_pairs,
        prepared,
        rewording_triples,
    )

    if not {"form", "phrasing", "slot", "distractor", "level"} <= set(rows.columns):
        return ""
    found = prepared(rows)
    pairs, triples = polarity_pairs(found)["consistent"], rewording_triples(found)["alike"]
    return "".join(f" · {what} breaks {int((values == 0).sum())}/{len(values)}"
                   for what, values in (("polarity", pairs), ("paraphrase", triples)) if len(values))


class FramingQAView(SuiteView):
    """Strict: a context passes when every question is answered right."""

    def context_summary(self, records):
        k = sum(bool(r.get("correct")) and r.get("parse") == "ok" for r in records)
        passed = k == len(records)
        return f"{k}/{len(records)} correct · strict {'✓' if passed else '✗'}", "pass" if passed else "fail"

    def model_summary(self, rows):
        k = int((rows["correct"].fillna(False).astype(bool) & (rows["parse"] == "ok")).sum())
        return f"{k}/{len(rows)} correct · strict {'✓' if k == len(rows) else '✗'}" + systematicity_breaks(rows)


ITEMS = FramingQAItems(
    tasks=task_names, records=FRAMINGQA_RECORDS, item_fields=TEXT_ITEM_FIELDS, task_help=DOMAIN_HELP,
    former_fields={"variant": "phrasing"})  # items written before issue 52 name it variant
VIEW = FramingQAView(
    drilldown_columns=("item_id", "bias", "level", "form", "phrasing", "option", "distractor", "gold",
                       "answer", "parse", "correct"),
    list_columns=("bias", "level", "form", "phrasing", "option", "distractor"), reference=("bias", "neutral"),
    row_order=("bias", "level", "distractor", "form", "phrasing"))

FRAMINGQA = Suite(ITEMS, FramingQAMetrics("framingqa", "FramingQA (text)", order=10, comparison=FRAMINGQA_COMPARISON), VIEW)
# MC items in rotated option orders (``framebench.text_eval.framingqa.rotation``), run like FramingQA
FRAMINGQA_ROTATED = Suite(
    replace(ITEMS, records=replace(FRAMINGQA_RECORDS, formats=standard_formats("mc"))),
    RotatedMetrics("framingqa_rotated", "FramingQA option position (rotated multiple choice)", order=15), VIEW)
