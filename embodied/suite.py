"""The embodied suite (registered under ``framebench.suites``): episode framings run by a planner
in a simulator. Its one record builder serves the symbolic runner and PARTNR/Habitat ingest.

Items: no text jobs, its records contract and task. Metrics: completion and success per framing
(``metrics``, ``report``). View: an episode's framings, a record's planner steps (its log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from framebench.embodied.comparisons import EMBODIED_COMPARISON
from framebench.embodied.evaluation import EVALUATION_MODES
from framebench.embodied.framing import framing_slot
from framebench.embodied.metrics import score_embodied
from framebench.embodied.report import (
    COMPLETION_FIGURE,
    context_summary,
    embodied_completion_figure,
    embodied_finding,
    embodied_headline_rows,
    embodied_tables,
    evaluation_by_model,
    evaluation_mode,
    model_summary,
    planner_answers,
)
from framebench.embodied.report import summary_tables as embodied_summary_tables
from framebench.records import SuiteRecords, make_row
from framebench.run_folder import EPISODE_LOGS
from framebench.scoring.parts import Panel
from framebench.scoring.sections import Section
from framebench.suite import Suite, SuiteItems, SuiteMetrics, SuiteView


def episode_row(*, run_id: str, model: str, episode_id: str, item_id: str, bias: str, level: str,
                constraint: str, percent_complete: float, success: bool, sim_steps: int,
                replans: int | None, output: str) -> dict[str, Any]:
    """The record of one episode framing, from whichever simulator ran it (``replans`` None: the
    planner makes no LLM calls)."""
    return make_row(
        run_id=run_id, model=model, suite="embodied", task="robotics", format="episode",
        context_id=episode_id, item_id=item_id, bias=bias, level=level, slot=framing_slot(bias, level),
        gold="", answer="", parse="ok", correct=success, output=output, constraint=constraint,
        percent_complete=percent_complete, success=success, sim_steps=sim_steps, replans=replans)


STEP_TEXT = 400  # characters of a planner reply shown per step


def planner_steps(run_dir: Path, item_id: str) -> list[Panel]:
    """The ``steps`` of an episode framing's log (``episodes/<item_id>.json``) as one table; none
    when the run folder holds no log for it (e.g. ingested PARTNR stats)."""
    path = Path(run_dir) / EPISODE_LOGS / f"{item_id}.json"
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    steps = log.get("steps") if isinstance(log, dict) else None
    if not isinstance(steps, list):
        return []
    rows = [[str(step.get("decision", "")), str(step.get("action") or ""),
             _cut(str(step.get("response") or ""))] for step in steps if isinstance(step, dict)]
    title = f"Planner steps ({log.get('planner', '')}; ended: {log.get('end') or '—'})"
    return [Panel(title, ["decision", "action", "planner reply"], rows)]


def _cut(text: str) -> str:
    return text if len(text) <= STEP_TEXT else text[:STEP_TEXT] + "…"


EVALUATION_META = "embodied_evaluation"  # the report meta's key: model -> evaluation modes
CONSTRAINTS = ("none", "spatial", "temporal", "heterogeneous")  # an episode's constraint type


def episode_row_problems(rows):
    """An episode's completion is a share."""
    completion = pd.to_numeric(rows["percent_complete"], errors="coerce")
    yield rows["percent_complete"].notna() & ~completion.between(0.0, 1.0), \
        "column 'percent_complete' must lie in [0, 1]"


EMBODIED_RECORDS = SuiteRecords(
    formats={"episode": ()},  # no gold or answer: the simulator's evaluation scores the episode
    columns={"slot": (pa.string(), ""),  # FramingQA's column too: a framing's slot (neutral, <bias>/<level>)
             "constraint": (pa.string(), ""), "percent_complete": (pa.float64(), None),
             "success": (pa.bool_(), None), "sim_steps": (pa.int64(), None), "replans": (pa.int64(), None)},
    enums={"constraint": (*CONSTRAINTS, "")}, check=episode_row_problems,
    column_order=20)  # the layout records files have always had
class EmbodiedMetrics(SuiteMetrics):
    """Task completion and success per bias and level, under the evaluation mode the runs declared."""

    headline_note = "Robotics: n counts episodes, accuracy is mean task completion."

    def compute(self, inputs):
        return score_embodied(inputs.records)

    def report_sections(self, report):
        """The tables name the evaluation mode the runs declared (its provenance field)."""
        evaluation = (report.get("meta") or {}).get(EVALUATION_META)
        return [Section(self.title, embodied_tables(report[self.name], evaluation, EVALUATION_MODES))]

    def report_figures(self, report):
        return [(COMPLETION_FIGURE, embodied_completion_figure(report[self.name]))]

    def summary_tables(self, report):
        return embodied_summary_tables(report[self.name])

    def headline_rows(self, report):
        return embodied_headline_rows(report[self.name])

    def finding(self, report):
        return embodied_finding(report[self.name])

    def run_fields(self, info, records):
        return {"evaluation": evaluation_mode(info)}

    def meta_fields(self, runs):
        return {EVALUATION_META: evaluation_by_model(runs)}

    def answer_mode(self, model, info):
        return planner_answers(model)


class EmbodiedView(SuiteView):
    """A context is an episode: its framings' completion; a record page shows the planner's steps."""

    def record_panels(self, run_dir, record):
        return planner_steps(run_dir, str(record["item_id"]))

    def context_summary(self, records):
        return context_summary(records)

    def model_summary(self, rows):
        return model_summary(rows)


# no text items: the symbolic simulator and PARTNR ingest make its rows (``episode_row``)
EMBODIED = Suite(
    SuiteItems(tasks=("robotics",), records=EMBODIED_RECORDS,
               task_help={"robotics": "PARTNR-style household episodes under framed instructions"}),
    EmbodiedMetrics("embodied", "FramingQA robotics (embodied)", order=20, comparison=EMBODIED_COMPARISON),
    EmbodiedView(drilldown_columns=("item_id", "bias", "level", "constraint", "percent_complete", "success",
                                    "sim_steps", "replans"),
                 result_columns=("percent_complete", "success"), share_columns=("percent_complete",),
                 list_columns=("bias", "level", "constraint"), reference=("bias", "neutral")))
