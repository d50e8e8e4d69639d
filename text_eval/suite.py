"""The FramingQA text and OMIT suites (registered under ``framebench.suites`` in pyproject.toml).

FramingQA: one job per item (binary or MC), parsed strictly against the item's options. OMIT: one
job per (item, condition) from ``--conditions``; the condition is the job's ``condition``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from framebench import records as rec
from framebench.errors import UserError
from framebench.records import SuiteRecords
from framebench.scoring.sections import ordered
from framebench.suite import Job, Suite, TextOptions
from framebench.vocabulary import BINARY_ANSWERS, FORMS, MC_ANSWERS, NEUTRAL, PHRASINGS

TEXT_FORMATS = ("binary", "mc")


def answer_columns(job: Job) -> dict[str, Any]:
    """The records' ``answer_mode`` and ``answer_probs`` cells of a job."""
    return {"answer_mode": job.answer_mode, "answer_probs": rec.encode_answer_probs(job.probs)}


# the fields of a FramingQA or OMIT text item beyond the core ones: ``text`` is the context
# (scenario), ``options`` the MC option texts in A-D order ([] for binary)
TEXT_ITEM_FIELDS: dict[str, type] = {
    "bias": str, "level": str, "form": str, "variant": str, "option": str, "distractor": str,
    "slot": str, "gold": str, "text": str, "options": list,
}
MIN_OPTIONS, MAX_OPTIONS = 2, len(MC_ANSWERS)

# FramingQA's record columns (docs/design.md "Records"): an item's form and phrasing (records
# schema 1-2 named it ``variant``, the item field's name), the option it names, its distractor
# and its slot in the context's design (which embodied's rows share)
FRAMINGQA_COLUMNS: dict[str, tuple[pa.DataType, Any]] = {
    "form": (pa.string(), ""), "phrasing": (pa.string(), ""), "option": (pa.string(), ""),
    "distractor": (pa.string(), ""), "slot": (pa.string(), ""),
}
FRAMINGQA_RECORDS = SuiteRecords(
    columns=FRAMINGQA_COLUMNS, enums={"form": (*FORMS, ""), "phrasing": (*PHRASINGS, "")},
    former_names={"variant": ("phrasing", 3)}, column_order=5)
FRAMINGQA_ITEM_COLUMNS = {"variant": "phrasing"}  # the item field keeps the name records schema 1-2 used


DOMAIN_HELP = {
    "law_issue_spotting": "LegalBench issue spotting: which legal area a situation raises",
    "law_hearsay": "LegalBench hearsay: is the evidence hearsay",
    "finance": "personal-finance posts (Stack Exchange): which product or step fits",
    "medicine": "DiagnosisArena cases: which diagnosis fits",
}


@dataclass
class FramingQAItems(Suite):
    """FramingQA's task: its items, jobs and records, and its drill-down; shared by the suite and
    its rotated-options control, which differ in what they report."""

    def task_names(self) -> tuple[str, ...]:
        """One task per registered domain (``framebench.text_eval.framingqa.domains``)."""
        from framebench.text_eval.framingqa.domains import task_names

        return task_names()

    def task_help(self, task: str) -> str:
        return DOMAIN_HELP.get(task, self.title)

    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """Binary items have no options; MC items 2-4, the gold among their letters; the phrasing
        (``variant``) one of Table 7's."""
        if item["variant"] not in (*PHRASINGS, ""):
            return "variant", f"must be one of {', '.join(PHRASINGS)} or empty, got {item['variant']!r}"
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

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, source: str) -> list[Job]:
        from framebench.text_eval.framingqa.prompts import decoding_for, render_chat

        jobs = []
        for item in items:
            if item["format"] not in TEXT_FORMATS:
                raise UserError(f"{source}: item {item['item_id']!r}: field 'format' must be binary or mc "
                                f"for the text evaluator, got {item['format']!r}")
            try:
                chat = render_chat(item)
            except ValueError as exc:
                raise UserError(f"{source}: item {item['item_id']!r}: field 'options': {exc}") from None
            jobs.append(Job(item, item["item_id"], chat, decoding_for(item["format"]),
                            decoding_name=item["format"]))
        return jobs

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        from framebench.text_eval.constrained import keeps_probs, probs_answer
        from framebench.text_eval.parsing import parse_answer

        item, output = job.item, job.output or ""
        if keeps_probs(job):
            answer, parse = probs_answer(job.probs)
        else:
            parsed = parse_answer(output, item["format"], item["options"] or None)
            answer, parse = parsed.answer, parsed.parse
        return rec.make_row(
            run_id=run_id, model=model, suite=item["suite"], task=item["task"], format=item["format"],
            context_id=item["context_id"], item_id=job.record_id, bias=item["bias"], level=item["level"],
            form=item["form"], phrasing=item["variant"], option=item["option"],
            distractor=item["distractor"], slot=item["slot"], gold=item["gold"], answer=answer,
            parse=parse, correct=parse == "ok" and answer == item["gold"], output=output,
            **answer_columns(job),
        )

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        from framebench.backends.constrained import allowed_answers

        return allowed_answers(job.item["format"], len(job.item.get("options") or []))

    def context_summary(self, records):
        """Strict: the context passes when every question is answered right."""
        k = sum(bool(r.get("correct")) and r.get("parse") == "ok" for r in records)
        passed = k == len(records)
        return f"{k}/{len(records)} correct · strict {'✓' if passed else '✗'}", "pass" if passed else "fail"

    def model_summary(self, rows):
        k = int((rows["correct"].fillna(False).astype(bool) & (rows["parse"] == "ok")).sum())
        return f"{k}/{len(rows)} correct · strict {'✓' if k == len(rows) else '✗'}"


@dataclass
class FramingQASuite(FramingQAItems):
    """FramingQA: its task, and its report (metrics, tables, figures, headline, finding)."""

    headline_note = ("FramingQA: per context the share of its questions of that bias answered "
                     "right, averaged over contexts.")

    def compute(self, inputs) -> Mapping[str, Any] | None:
        from framebench.text_eval.framingqa.metrics import score_framingqa

        return score_framingqa(inputs.records)

    def report_sections(self, report):
        from framebench.scoring.sections import Section
        from framebench.text_eval.framingqa.tables import framingqa_tables

        return [Section(self.title, framingqa_tables(report[self.name]))]

    def report_figures(self, report):
        from framebench.text_eval.framingqa.figures import framingqa_figures

        return framingqa_figures(report[self.name])

    def comparison(self):
        from framebench.text_eval.comparisons import FRAMINGQA_COMPARISON

        return FRAMINGQA_COMPARISON

    def summary_tables(self, report):
        from framebench.text_eval.framingqa.tables import summary_tables

        return summary_tables(report[self.name])

    def headline(self, inputs):
        from framebench.text_eval.framingqa.headline import score_headline

        if not inputs.report.get(self.name):
            return None
        return score_headline(inputs.records, inputs.report[self.name])

    def headline_rows(self, report):
        from framebench.text_eval.framingqa.tables import framingqa_headline_rows

        return framingqa_headline_rows(report.get("headline") or {})

    def finding(self, report):
        from framebench.text_eval.framingqa.finding import framingqa_finding

        return framingqa_finding(report)


@dataclass
class OmitSuite(Suite):
    def task_help(self, task: str) -> str:
        return "MoralChoice scenarios as action/omission frame pairs (OMIT)"

    def conditions(self, names: list[str]):
        from framebench.text_eval.omit.conditions import conditions

        known = conditions()
        for name in names:
            if name not in known:
                raise UserError(f"--conditions: unknown condition {name!r} (known: {', '.join(known)})")
        return [known[name] for name in names]

    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """OMIT items are neutral scenarios in one frame, without options."""
        if item["bias"] != NEUTRAL:
            return "bias", "OMIT items are neutral"
        if item.get("frame") not in ("action", "omission"):
            return "frame", "OMIT items need frame action or omission"
        if item["options"]:
            return "options", "OMIT items have none"
        if any(not isinstance(o, str) or not o.strip() for o in item["options"]):
            return "options", "must hold non-empty strings"
        return None

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, source: str) -> list[Job]:
        from framebench.backends.base import Decoding
        from framebench.text_eval.omit.conditions import render_omit_chat

        conditions = self.conditions(list(options.conditions) or ["M0"])
        return [Job(item, f"{item['item_id']}@{cond.name}", render_omit_chat(item, cond),
                    Decoding(max_new_tokens=cond.max_new_tokens), cond, f"omit_{cond.name}")
                for item in items for cond in conditions]

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        from framebench.text_eval.constrained import keeps_probs, probs_answer
        from framebench.text_eval.omit.conditions import parse_omit_answer

        item, output = job.item, job.output or ""
        if keeps_probs(job):
            answer, parse = probs_answer(job.probs)
        else:
            answer, parse = parse_omit_answer(output, job.condition)
        return rec.make_row(
            run_id=run_id, model=model, suite="omit", task="omit", format="binary",
            context_id=item["context_id"], item_id=job.record_id, bias="neutral",
            gold="", answer=answer, parse=parse, correct=False, output=output,
            frame=item.get("frame", ""), condition=job.condition.name, conflicts=item.get("conflicts", ""),
            **answer_columns(job),
        )

    def answer_choices(self, job: Job) -> tuple[str, ...]:
        return BINARY_ANSWERS

    def reasons_first(self, job: Job) -> bool:
        """Conditions that end with an ``ANSWER:`` line (M1, M4) reason before answering."""
        return bool(job.condition.final_answer_line)

    def run_selection(self, jobs: list[Job]) -> dict[str, Any]:
        return {"conditions": sorted({j.condition.name for j in jobs})}

    def conditions_listing(self) -> list[tuple[str, str]]:
        from framebench.text_eval.omit.conditions import conditions

        return [(name, condition.summary) for name, condition in conditions().items()]

    def compute(self, inputs) -> Mapping[str, Any] | None:
        """The console summary (``quick``) skips the persona analyses."""
        from framebench.text_eval.omit.analysis import analyze
        from framebench.text_eval.omit.metrics import score_omit

        records = inputs.records
        metrics = score_omit(records)
        if metrics and not inputs.quick:
            metrics["analysis"] = analyze(records[records["suite"] == self.name])
        return metrics

    def report_sections(self, report):
        from framebench.scoring.sections import Section
        from framebench.text_eval.omit.analysis_report import tables
        from framebench.text_eval.omit.tables import omit_tables

        metrics = report[self.name]
        analysis = tables(metrics.get("analysis") or {})
        return [Section(self.title, omit_tables(metrics))] + ([Section("OMIT analyses", analysis)]
                                                               if analysis else [])

    def report_figures(self, report):
        from framebench.text_eval.omit.analysis_report import figures
        from framebench.text_eval.omit.tables import OBR_FIGURE, omit_obr_figure

        metrics = report[self.name]
        return [(OBR_FIGURE, omit_obr_figure(metrics)),
                *figures(metrics.get("analysis") or {})]

    def comparison(self):
        from framebench.text_eval.comparisons import OMIT_COMPARISON

        return OMIT_COMPARISON

    def summary_tables(self, report):
        from framebench.text_eval.omit.tables import summary_tables

        return summary_tables(report[self.name])

    def finding(self, report):
        from framebench.text_eval.omit.finding import omit_finding

        return omit_finding(report[self.name])

    def inspect_metrics(self):
        from framebench.text_eval.omit.inspect_metric import omission_rates

        return [omission_rates()]

    def model_note(self, model):
        from framebench.text_eval.omit.metrics import PERSONA_PREFIX

        return " (the OMIT dataset's persona panel, not a model)" if model.startswith(PERSONA_PREFIX) else ""

    def reference_panel(self, models):
        from framebench.text_eval.omit.metrics import PERSONA_PREFIX

        panel = ordered(m for m in models if m.startswith(PERSONA_PREFIX))
        if not panel:
            return [], ""
        names = ", ".join(m[len(PERSONA_PREFIX):] for m in panel)
        return panel, f"plus the OMIT dataset's persona panel ({len(panel)} personas: {names}; not models)"

    def answer_mode(self, model, info):
        """The persona panel's rows are the dataset's authored answers, not a model's."""
        from framebench.text_eval.omit.metrics import PERSONA_PREFIX

        if model.startswith(PERSONA_PREFIX) or info.get("model") == "authored":
            return "authored (the dataset's persona panel)"
        return None


@dataclass
class FramingQARotatedSuite(FramingQAItems):
    """FramingQA MC items in rotated option orders (``framebench.text_eval.framingqa.rotation``): run like FramingQA,
    scored only as option-position control, next to the same model's fixed-order rows."""

    def compute(self, inputs) -> Mapping[str, Any] | None:
        from framebench.text_eval.framingqa.rotation import score_rotation

        return score_rotation(inputs.records)

    def report_sections(self, report):
        from framebench.scoring.sections import Section
        from framebench.text_eval.framingqa.rotation import rotation_table

        return [Section(self.title, [rotation_table(report[self.name])])]

    def finding(self, report):
        from framebench.text_eval.framingqa.finding import rotation_finding

        return rotation_finding(report[self.name])


FRAMINGQA = FramingQASuite(
    "framingqa", "FramingQA (text)",
    tasks=(), order=10, formats=("binary", "mc"), item_fields=TEXT_ITEM_FIELDS, records=FRAMINGQA_RECORDS, item_columns=FRAMINGQA_ITEM_COLUMNS,
    drilldown_columns=("item_id", "bias", "level", "form", "phrasing", "option", "distractor", "gold",
                       "answer", "parse", "correct"),
    list_columns=("bias", "level", "form", "phrasing", "option", "distractor"), reference=("bias", "neutral"),
    row_order=("bias", "level", "distractor", "form", "phrasing"))
FRAMINGQA_ROTATED = FramingQARotatedSuite(
    "framingqa_rotated", "FramingQA option position (rotated multiple choice)",
    tasks=(), order=15, formats=("mc",), item_fields=TEXT_ITEM_FIELDS, records=FRAMINGQA_RECORDS, item_columns=FRAMINGQA_ITEM_COLUMNS,
    drilldown_columns=FRAMINGQA.drilldown_columns, list_columns=FRAMINGQA.list_columns,
    reference=FRAMINGQA.reference, row_order=FRAMINGQA.row_order)
def omit_row_problems(rows):
    """OMIT rows name their frame and their condition (``M<k>``)."""
    condition = rows["condition"].fillna("").astype(str)
    yield ~rows["frame"].isin(("action", "omission")), "OMIT rows need frame action or omission"
    yield condition == "", "OMIT rows need a condition (M0, M1, ...)"
    yield ~condition.str.fullmatch(r"M\d+"), "column 'condition' must be M<k> (M0, M1, ...) on OMIT rows"


OMIT_RECORDS = SuiteRecords(
    formats={"binary": BINARY_ANSWERS}, gold_optional=True,  # a scenario has no right answer
    columns={"frame": (pa.string(), ""), "condition": (pa.string(), ""), "conflicts": (pa.string(), "")},
    enums={"frame": ("action", "omission", "")}, check=omit_row_problems,
    key_columns=("condition", "frame"),  # one response per scenario, frame and condition
    column_order=10)  # the layout records files have always had
OMIT = OmitSuite("omit", "OMIT", tasks=("omit",), order=30, records=OMIT_RECORDS,
                 item_fields=TEXT_ITEM_FIELDS, item_extras={"frame": str, "conflicts": str},
                 drilldown_columns=("item_id", "condition", "frame", "conflicts", "answer", "parse"),
                 list_columns=("condition", "frame", "conflicts"), grid_groups=("condition",), grid_pair="frame",
                 row_order=("condition", "frame"), filter_columns={"condition": "Condition"})
