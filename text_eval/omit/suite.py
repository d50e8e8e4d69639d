"""OMIT (registered under ``framebench.suites``): action/omission frame pairs of MoralChoice scenarios.

Items: one job per (item, condition) from ``--conditions``; the condition is the job's
``condition``. Metrics: omission and action bias rates per condition, McNemar against M0, the
persona analyses (``metrics``, ``analysis``, ``tables``, ``finding``). View: a scenario's action
and omission wordings side by side; the dataset's persona panel is named as such, not as models.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from framebench import records as rec
from framebench.backends.base import Decoding
from framebench.errors import UserError
from framebench.records import SuiteRecords
from framebench.scoring.sections import Section, ordered
from framebench.suite import Job, Suite, SuiteItems, SuiteMetrics, SuiteView, TextOptions
from framebench.text_eval.omit.analysis import analyze
from framebench.text_eval.omit.analysis_report import figures as analysis_figures
from framebench.text_eval.omit.analysis_report import tables as analysis_tables
from framebench.text_eval.omit.comparisons import OMIT_COMPARISON
from framebench.text_eval.omit.conditions import (
    Condition,
    conditions,
    parse_omit_answer,
    render_omit_chat,
)
from framebench.text_eval.omit.finding import omit_finding
from framebench.text_eval.omit.metrics import PERSONA_PREFIX, score_omit
from framebench.text_eval.omit.tables import OBR_FIGURE, omit_obr_figure, omit_tables
from framebench.text_eval.omit.tables import summary_tables as omit_summary_tables
from framebench.text_eval.suite import TEXT_ITEM_FIELDS, answer_columns, model_answer
from framebench.vocabulary import BINARY_ANSWERS, NEUTRAL


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


def chosen_conditions(names: list[str]) -> list[Condition]:
    known = conditions()
    for name in names:
        if name not in known:
            raise UserError(f"--conditions: unknown condition {name!r} (known: {', '.join(known)})")
    return [known[name] for name in names]


class OmitItems(SuiteItems):
    def check_item(self, item: dict[str, Any]) -> tuple[str, str] | None:
        """OMIT items are neutral scenarios in one frame, without options."""
        if item["bias"] != NEUTRAL:
            return "bias", "OMIT items are neutral"
        if item.get("frame") not in ("action", "omission"):
            return "frame", "OMIT items need frame action or omission"
        if item["options"]:
            return "options", "OMIT items have none"
        return None

    def jobs(self, items: list[dict[str, Any]], options: TextOptions, where: str) -> list[Job]:
        chosen = chosen_conditions(list(options.conditions) or ["M0"])
        return [Job(item, f"{item['item_id']}@{cond.name}", render_omit_chat(item, cond),
                    Decoding(max_new_tokens=cond.max_new_tokens), cond, f"omit_{cond.name}")
                for item in items for cond in chosen]

    def record(self, job: Job, run_id: str, model: str) -> dict[str, Any]:
        item = job.item
        answer, parse = model_answer(job, lambda output: parse_omit_answer(output, job.condition))
        return rec.make_row(
            run_id=run_id, model=model, suite="omit", task="omit", format="binary",
            context_id=item["context_id"], item_id=job.record_id, bias="neutral",
            gold="", answer=answer, parse=parse, correct=False, output=job.output or "",
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
        return [(name, condition.summary) for name, condition in conditions().items()]


def is_persona(model: str) -> bool:
    """Whether a records ``model`` is one of the dataset's personas (authored answers)."""
    return model.startswith(PERSONA_PREFIX)


class OmitMetrics(SuiteMetrics):
    def compute(self, inputs):
        """The console summary (``quick``) skips the persona analyses."""
        records = inputs.records
        metrics = score_omit(records)
        if metrics and not inputs.quick:
            metrics["analysis"] = analyze(records[records["suite"] == self.name])
        return metrics

    def report_sections(self, report):
        metrics = report[self.name]
        analysis = analysis_tables(metrics.get("analysis") or {})
        return [Section(self.title, omit_tables(metrics))] + ([Section("OMIT analyses", analysis)]
                                                               if analysis else [])

    def report_figures(self, report):
        metrics = report[self.name]
        return [(OBR_FIGURE, omit_obr_figure(metrics)), *analysis_figures(metrics.get("analysis") or {})]

    def summary_tables(self, report):
        return omit_summary_tables(report[self.name])

    def finding(self, report):
        return omit_finding(report[self.name])

    def answer_mode(self, model, info):
        """The persona panel's rows are the dataset's authored answers, not a model's."""
        if is_persona(model) or info.get("model") == "authored":
            return "authored (the dataset's persona panel)"
        return None

    def inspect_metrics(self):
        """OBR / ABR / FCR per condition (inspect_ai is an optional dependency: imported here)."""
        from framebench.text_eval.omit.inspect_metric import omission_rates

        return [omission_rates()]


class OmitView(SuiteView):
    def model_note(self, model):
        return " (the OMIT dataset's persona panel, not a model)" if is_persona(model) else ""

    def reference_panel(self, models):
        panel = ordered(m for m in models if is_persona(m))
        if not panel:
            return [], ""
        names = ", ".join(m[len(PERSONA_PREFIX):] for m in panel)
        return panel, f"plus the OMIT dataset's persona panel ({len(panel)} personas: {names}; not models)"


OMIT = Suite(
    OmitItems(tasks=("omit",), records=OMIT_RECORDS, item_fields=TEXT_ITEM_FIELDS,
              item_extras={"frame": str, "conflicts": str},
              task_help={"omit": "MoralChoice scenarios as action/omission frame pairs (OMIT)"}),
    OmitMetrics("omit", "OMIT", order=30, comparison=OMIT_COMPARISON),
    OmitView(drilldown_columns=("item_id", "condition", "frame", "conflicts", "answer", "parse"),
             list_columns=("condition", "frame", "conflicts"), grid_groups=("condition",), grid_pair="frame",
             row_order=("condition", "frame"), filter_columns={"condition": "Condition"}))
