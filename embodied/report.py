"""The embodied suite's report: FramingQA Table 6 (completion, replans, steps), the evaluation
semantics table, the completion figure, the console summary, its headline rows, the drill-down
and viewer summaries, and its provenance fields (the evaluation semantics of each run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from framebench.scoring.formatting import (
    as_number,
    n_cell,
    num,
    pct,
    pct_ci,
    points,
    small_n_note,
    withheld,
    withheld_note,
)
from framebench.scoring.parts import SummaryTable
from framebench.scoring.sections import MISSING, Table, ordered
from framebench.scoring.stats import MIN_CONTEXTS_BINARY

if TYPE_CHECKING:
    from matplotlib.figure import Figure

EMBODIED_ROWS = {
    "overall": "Overall",
    "root": "Root",
    "propositional": "Propositional",
    "global": "Global",
    "none": "No constraint",
    "spatial": "Spatial",
    "temporal": "Temporal",
    "heterogeneous": "Heterogeneous",
}
COMPLETION_FIGURE = "Embodied: task completion"  # shown right after the completion table
EMBODIED_METRICS = {
    "completion": "Task completion (%) ↑",
    "replans": "Number of replans (execution instability) ↓",
    "steps": "Number of steps (planning inefficiency) ↓",
}
_EMBODIED_SETS = ("Neu / correct / incorrect: the neutral instruction and the correct- and "
                  "incorrect-bias framings. Rows: overall; Root / Propositional / Global: the biased "
                  "variants at that level (Mean Neu over every neutral variant); then each constraint "
                  "type. n: episodes.")
EMBODIED_CAPTIONS = {
    "completion": "Task completion: share of the episode's evaluation propositions satisfied at the "
    "end (PARTNR percent complete), averaged over variants. Strict: share of episodes whose every "
    "variant in the set (its 3 correct-bias, 3 incorrect-bias, or all 6 biased variants; at one "
    "level the 1 or 2 there) succeeds; brackets: its 95 % Wilson interval over episodes "
    "(docs/statistics.md#wilson-intervals). " + _EMBODIED_SETS,
    "replans": "Replans: LLM planner calls per variant, the first call and the final Done[] call "
    "included (PARTNR's replanning_count; at most the replan cap + 1). Mean over variants; strict: "
    f"mean over the variants of the episodes counted in strict completion ({MISSING} when none "
    f"qualifies). Oracle and script planners make no LLM calls: {MISSING} (n/a). " + _EMBODIED_SETS,
    "steps": "Steps: simulator steps per variant (the symbolic simulator's cost model; not comparable "
    "to Habitat's). Mean over variants; strict: mean over the variants of the episodes counted in "
    f"strict completion ({MISSING} when none qualifies). " + _EMBODIED_SETS,
}


def embodied_table(emb: Mapping[str, Any], metric: str) -> Table | None:
    """One block of FramingQA Table 6, models stacked."""
    fmt = pct if metric == "completion" else num
    header = ["Model", "Row", "n", "Mean Neu", "Mean correct", "Mean incorrect",
              "Strict correct", "Strict incorrect", "Strict all"]
    keys = [f"{metric}_mean_neutral", f"{metric}_mean_correct", f"{metric}_mean_incorrect",
            f"{metric}_strict_correct", f"{metric}_strict_incorrect", f"{metric}_strict_all"]
    rows = []
    for model in ordered(emb):
        for row in ordered(emb[model], EMBODIED_ROWS):
            values = emb[model][row]
            short = withheld(values.get("n_episodes"), MIN_CONTEXTS_BINARY)
            cells = [pct_ci(values.get(k), values.get(f"{k}_ci"), short)
                     if k.startswith("completion_strict") else fmt(values.get(k)) for k in keys]
            rows.append([model, EMBODIED_ROWS.get(row, row), n_cell(values.get("n_episodes")), *cells])
    if not rows:
        return None
    return Table(
        title=f"Embodied: {EMBODIED_METRICS[metric]} (cf. FramingQA Table 6)",
        caption=EMBODIED_CAPTIONS[metric] + withheld_note(rows, "episodes") + small_n_note(rows, 2, "episodes"),
        header=header,
        rows=rows,
        figures=(COMPLETION_FIGURE,) if metric == "completion" else (),
    )


def embodied_evaluation_table(evaluation: Mapping[str, Any] | None,
                              meanings: Mapping[str, str] | None = None) -> Table | None:
    """Which evaluation semantics each model's embodied scores come from (run.json ``evaluation``;
    ``meanings``: mode -> description, from the embodied suite)."""
    meanings = meanings or {}
    rows = [[model, mode, meanings.get(mode, "run.json does not say")]
            for model in ordered(evaluation or {}) for mode in evaluation[model]]
    if not rows:
        return None
    return Table(
        title="Embodied: evaluation semantics",
        caption="intended: PARTNR's documented semantics; partnr-compat: PARTNR's evaluation quirks "
        "reproduced; partnr-habitat: PARTNR's own scores (with its quirks). See datasets/robotics.md.",
        header=["Model", "Evaluation", "Meaning"],
        rows=rows,
    )


def embodied_tables(emb: Mapping[str, Any], evaluation: Mapping[str, Any] | None = None,
                    meanings: Mapping[str, str] | None = None) -> list[Table]:
    tables = [embodied_table(emb, metric) for metric in EMBODIED_METRICS]
    return [t for t in (*tables, embodied_evaluation_table(evaluation, meanings)) if t]


def embodied_completion_figure(emb: Mapping[str, Any]) -> Figure | None:
    """Overall task completion per planner model: mean by framing and strict by variant set."""
    models = [m for m in ordered(emb) if "overall" in emb[m]]
    if not models:
        return None
    from framebench.scoring.figures import DIRECTION_COLORS, as_value, grouped_bars, plt

    fig, (ax_mean, ax_strict) = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True)
    mean = {d: [as_value(emb[m]["overall"].get(f"completion_mean_{d}")) for m in models]
            for d in ("neutral", "correct", "incorrect")}
    strict = {d: [as_value(emb[m]["overall"].get(f"completion_strict_{d}")) for m in models]
              for d in ("correct", "incorrect", "all")}
    grouped_bars(ax_mean, models, mean, colors=DIRECTION_COLORS)
    grouped_bars(ax_strict, models, strict, colors=DIRECTION_COLORS)
    ax_mean.set_title("mean completion", fontsize=9)
    ax_strict.set_title("strict completion", fontsize=9)
    ax_mean.set_ylabel("task completion (%)")
    ax_mean.legend(fontsize=7, loc="upper left", ncols=3)
    ax_strict.legend(fontsize=7, loc="upper left", ncols=3)
    fig.suptitle("Embodied: task completion (overall)", fontsize=11)
    fig.tight_layout()
    return fig


def summary_tables(emb: Mapping[str, Any]) -> list[SummaryTable]:
    """Completion per planner: mean per framing direction and strict over all variants."""
    rows = [[model, str(o.get("n_episodes", "")),
             *(pct(o.get(k)) for k in ("completion_mean_neutral", "completion_mean_correct",
                                       "completion_mean_incorrect", "completion_strict_all"))]
            for model in ordered(emb) for o in [emb[model].get("overall", {})]]
    if not rows:
        return []
    return [SummaryTable("Robotics completion", ["planner", "n episodes", "neutral", "correct",
                                                 "incorrect", "strict all"], rows)]


def embodied_headline_rows(embodied: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for model in ordered(embodied):
        o = embodied[model].get("overall") or {}
        c, i = as_number(o.get("completion_mean_correct")), as_number(o.get("completion_mean_incorrect"))
        rows.append([model, "Robotics (completion)", n_cell(o.get("n_episodes")), pct(c), pct(i),
                     points(None if c is None or i is None else c - i), MISSING,
                     pct_ci(o.get("completion_strict_all"), o.get("completion_strict_all_ci"),
                            withheld(o.get("n_episodes"), MIN_CONTEXTS_BINARY))])
    return rows


def context_summary(records: list[dict[str, Any]]) -> tuple[str, str]:
    """One planner's variants of one episode: how many succeeded, the mean completion."""
    k = sum(_true(r.get("success")) for r in records)
    completions = [float(r["percent_complete"]) for r in records if not _missing(r.get("percent_complete"))]
    mean = sum(completions) / len(completions) if completions else None
    return (f"{k}/{len(records)} variants succeeded · mean completion {pct(mean)} %",
            "pass" if k == len(records) else "fail")


def model_summary(rows: pd.DataFrame) -> str:
    return f"{int(rows['success'].fillna(False).astype(bool).sum())}/{len(rows)} variants succeeded"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NA


def _true(value: Any) -> bool:
    return not _missing(value) and bool(value)


# ---------------------------------------------------------------- provenance


def evaluation_mode(info: Mapping[str, Any]) -> str:
    """The evaluation semantics of an embodied run (run.json ``evaluation``): ``intended`` or
    ``partnr-compat`` (symbolic simulator), ``partnr-habitat`` (PARTNR ingest), else ``unknown``."""
    mode = info.get("evaluation")
    if isinstance(mode, str) and mode:
        return mode
    decoding = info.get("decoding") if isinstance(info.get("decoding"), dict) else {}
    if info.get("backend") == "symbolic":  # run.json from before the field existed
        return "partnr-compat" if decoding.get("partnr_compat") else "intended"
    return "partnr-habitat" if info.get("backend") == "habitat" else "unknown"


def evaluation_by_model(entries: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``model -> evaluation modes`` over the scored embodied run folders (provenance entries)."""
    modes: dict[str, set[str]] = {}
    for run in entries:
        if run.get("evaluation"):
            for model in run.get("models", []):
                modes.setdefault(str(model), set()).add(run["evaluation"])
    return {model: sorted(found) for model, found in sorted(modes.items())}


def scripted(model: str) -> bool:
    """Whether a planner follows a script (the oracle's plan, or a replayed one): no model."""
    return model == "oracle" or model.startswith("script:")


def planner_answers(model: str) -> str:
    """How an embodied run's actions were chosen, in words."""
    if scripted(model):
        return "scripted planner (no model)"
    if model.startswith("choice:"):
        return "choice planner: the most probable of the actions the simulator accepts"
    return "LLM planner, greedy generation, actions parsed strictly"


# ---------------------------------------------------------------- the finding in words


def embodied_finding(embodied: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{planner: [sentence]}``: mean completion under correct- vs incorrect-bias framings (a
    difference without an interval: not evidence either way) and strict completion with its
    Wilson interval (``framebench.scoring.finding``)."""
    from framebench.scoring.finding import pct_words

    out = {}
    for model in ordered(embodied):
        o = embodied[model].get("overall") or {}
        c, i = as_number(o.get("completion_mean_correct")), as_number(o.get("completion_mean_incorrect"))
        difference = ("" if c is None or i is None else
                      f"mean completion {pct(c)} % under correct-bias framings, {pct(i)} % under "
                      f"incorrect-bias ones ({points(c - i)} pp, no interval); ")
        strict = "strict completion " + pct_words(o.get("completion_strict_all"), o.get("completion_strict_all_ci"))
        note = " A scripted planner (no model)." if scripted(model) else ""
        out[model] = [f"Robotics, {o.get('n_episodes')} episode(s): {difference}{strict}.{note}"]
    return out
