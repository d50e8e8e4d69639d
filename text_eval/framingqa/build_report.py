"""``build_report.md``: counts per task and format, ΣE, category distribution, every dropped source
record with its reason, notes, and 20 rendered items per task for a human to read; ``BuildResult``
is what ``framebench build framingqa`` produced (``framebench.text_eval.framingqa.build.build``), as the report reads it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet
from framebench.text_eval.framingqa.check import Defect, summary
from framebench.text_eval.framingqa.contexts import Context, Dropped
from framebench.text_eval.framingqa.domains import domain, task_names

SAMPLES_PER_TASK = 20
SAMPLE_TEXT_WORDS = 80
DEFECTS_PER_KIND = 5


@dataclass
class BuildResult:
    contexts: list[Context]
    sheets: list[AnswerSheet]
    items: list[dict[str, Any]]
    dropped: list[Dropped]
    notes: list[str]
    pools: dict[str, Any]
    defects: list[Defect] = field(default_factory=list)
    reviewed: bool = False  # built from framebench's reviewed decisions
    seconds: float = 0.0


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_report(result: BuildResult, source: str) -> str:
    lines = ["# FramingQA build report", "", f"Source: `{source}`", ""]
    lines += _counts(result)
    lines += _check(result)
    lines += _review(result)
    lines += _rotations(result)
    lines += _distribution(result)
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    lines += _dropped(result)
    lines += _samples(result)
    return "\n".join(lines).rstrip() + "\n"


def _counts(result: BuildResult) -> list[str]:
    sheets = {s.context_id: s for s in result.sheets}
    lines = ["## Counts", "",
             "| task | format | contexts C | ΣE | items | 54C+2ΣE / 28C+ΣE |", "|---|---|---|---|---|---|"]
    totals = {"binary": [0, 0, 0], "mc": [0, 0, 0]}
    for task in task_names():
        ctx_ids = [c.context_id for c in result.contexts if c.task == task]
        if not ctx_ids:
            continue
        sum_e = sum(len(sheets[i].evidence) for i in ctx_ids)
        for fmt in ("binary", "mc"):
            n_items = sum(1 for it in result.items if it["task"] == task and it["format"] == fmt
                          and not it.get("rotation"))
            if fmt == "mc" and n_items == 0:
                continue
            formula = 54 * len(ctx_ids) + 2 * sum_e if fmt == "binary" else 28 * len(ctx_ids) + sum_e
            lines.append(f"| {task} | {fmt} | {len(ctx_ids)} | {sum_e} | {n_items} | {formula} |")
            for k, v in zip(range(3), (len(ctx_ids), sum_e, n_items), strict=True):
                totals[fmt][k] += v
    for fmt, (c, e, n) in totals.items():
        formula = 54 * c + 2 * e if fmt == "binary" else 28 * c + e
        lines.append(f"| **all** | {fmt} | {c} | {e} | {n} | {formula} |")
    return lines + [""]


def _check(result: BuildResult) -> list[str]:
    """What ``framebench.text_eval.framingqa.check`` found (``--check`` fails on any of it)."""
    lines = ["## Check", ""]
    if not result.defects:
        return lines + ["No defects: every check of `text_eval/framingqa/check.py` passes.", ""]
    lines += [f"{len(result.defects)} defects.", "", "| task | defect | count |", "|---|---|---|"]
    lines += [f"| {t} | {k} | {n} |" for (t, k), n in summary(result.defects).items()]
    shown = _sample_per_kind(result.defects)
    lines += ["", f"Up to {DEFECTS_PER_KIND} of each kind (all {len(result.defects)} in `defects.jsonl`):", "",
              "| task | context | defect | detail |", "|---|---|---|---|"]
    lines += [f"| {d.task} | {d.context_id or '-'} | {d.kind} | {_cell(d.detail)} |" for d in shown]
    return lines + [""]


def _sample_per_kind(defects: list) -> list:
    seen: Counter = Counter()
    shown = []
    for d in defects:
        seen[d.task, d.kind] += 1
        if seen[d.task, d.kind] <= DEFECTS_PER_KIND:
            shown.append(d)
    return shown


def _review(result: BuildResult) -> list[str]:
    """The reviewed decisions behind the contexts: edits per field, rejected source rows."""
    if not result.reviewed:
        return []
    from framebench.text_eval.framingqa.review import read_decisions, rejected_counts, reviewed_path

    rejected = rejected_counts()
    lines = ["## Review", "", "Every context is a reviewed decision (`text_eval/framingqa/reviewed/`).", "",
             "| task | contexts | text edits | option edits | gold edits | source rows rejected |",
             "|---|---|---|---|---|---|"]
    for task in dict.fromkeys(c.task for c in result.contexts):
        edits = Counter(e.field for _, d in read_decisions(reviewed_path(task)) for e in d.edits)
        n = sum(1 for c in result.contexts if c.task == task)
        lines.append(f"| {task} | {n} | {edits['text']} | {edits['option']} | {edits['gold']} | "
                     f"{rejected.get(task, 0)} |")
    return lines + [""]


def _rotations(result: BuildResult) -> list[str]:
    """The option rotations' counts (``--rotate-options``): MC items x options."""
    from framebench.text_eval.framingqa.rotation import rotation_counts

    fixed, rotated = rotation_counts(result.items)
    if not rotated:
        return []
    per_task = []
    for task in task_names():
        n_fixed = sum(1 for it in result.items if it["task"] == task and it["format"] == "mc"
                      and not it.get("rotation"))
        n_rot = sum(1 for it in result.items if it["task"] == task and it.get("rotation"))
        if n_fixed:
            per_task.append(f"| {task} | {n_fixed} | {n_rot} | {n_fixed + n_rot} |")
    return ["## Option rotations", "",
            f"`--rotate-options`: each of the {fixed} fixed-order MC items also appears in its "
            f"cyclic rotations (the gold in every position, letter remapped; ids end in `@r1`…): "
            f"{rotated} rotated items, {fixed + rotated} MC items in all (MC items × options).", "",
            "| task | fixed-order MC | rotated | MC in all |", "|---|---|---|---|", *per_task, ""]


def _distribution(result: BuildResult) -> list[str]:
    lines = ["## Gold distribution", ""]
    for task in task_names():
        golds = Counter(c.gold for c in result.contexts if c.task == task)
        if not golds:
            continue
        lines.append(f"### {task}")
        lines.append("")
        describe = domain(task).describe
        if describe is not None:
            lines += describe([c for c in result.contexts if c.task == task])
        else:
            lines += ["| gold | contexts |", "|---|---|"] + [f"| {g} | {n} |" for g, n in sorted(golds.items())]
        pool = result.pools.get(task)
        if pool:
            lines += ["", "Assigned before selection: " + ", ".join(f"{k} {v}" for k, v in pool.items())]
        lines.append("")
    return lines


def _dropped(result: BuildResult) -> list[str]:
    lines = ["## Dropped source records", ""]
    if not result.dropped:
        return lines + ["None.", ""]
    reasons = Counter((d.task, d.reason.split(":")[0]) for d in result.dropped)
    lines += ["| task | reason | records |", "|---|---|---|"]
    lines += [f"| {t} | {_cell(r)} | {n} |" for (t, r), n in sorted(reasons.items())]
    lines += ["", "Every dropped record:", "", "| task | record | reason |", "|---|---|---|"]
    lines += [f"| {d.task} | {_cell(d.record)} | {_cell(d.reason)} |" for d in result.dropped]
    return lines + [""]


def render_item(item: dict[str, Any], max_words: int | None = None) -> str:
    """The item as a person reads it (the evaluator's renderer adds its own answer instruction)."""
    words = item["text"].split()
    text = item["text"] if max_words is None or len(words) <= max_words else " ".join(words[:max_words]) + " …"
    parts = [text, "", item["question"]]
    parts += [f"{'ABCD'[i]}. {opt}" for i, opt in enumerate(item["options"])]
    return "\n".join(parts)


def _samples(result: BuildResult) -> list[str]:
    lines = ["## Sample items", ""]
    for task in task_names():
        items = [it for it in result.items if it["task"] == task]
        if not items:
            continue
        step = max(1, len(items) // SAMPLES_PER_TASK)
        lines += [f"### {task}", ""]
        for item in items[::step][:SAMPLES_PER_TASK]:
            lines += [f"**{item['item_id']}** — {item['format']}, {item['bias']}, level {item['level'] or '-'}, "
                      f"form {item['form'] or '-'}, gold **{item['gold']}**", "", "```",
                      render_item(item, SAMPLE_TEXT_WORDS), "```", ""]
    return lines
