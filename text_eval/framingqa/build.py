"""The FramingQA build pipeline: sources -> contexts -> answer sheets -> Table 7 items -> files.

Sources (``--source``):
- a folder laid out like ``../shared/data`` (``legalbench/``, ``fiqa/``, ``diagnosisarena/``), or
  ``hf`` (the same loaders fed by HF ``datasets``): every source row is a candidate, and the
  benchmark's contexts are the reviewed ones (``framebench.text_eval.framingqa.review``), with their sheets;
  ``--unreviewed`` instead takes each task's automatic selection and extractive premises (to audit
  the review: such a build fails ``--check``);
- a prepared folder holding ``contexts.jsonl`` and ``answer_sheets.jsonl`` (the demo set, a user's
  accepted sheets from ``framebench sheets accept``, or an earlier build's output): used as they are.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.items import validate_item, write_items
from framebench.jsonl import read_jsonl
from framebench.schema import check_fields
from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, read_sheets, write_sheets
from framebench.text_eval.framingqa.build_report import BuildResult
from framebench.text_eval.framingqa.contexts import SOURCE_LAYOUT, Context, Dropped
from framebench.text_eval.framingqa.domains import domain, task_names
from framebench.text_eval.framingqa.expansion import expand, expected_counts
from framebench.text_eval.framingqa.premises import ExtractiveSettings, extractive_sheets


@dataclass
class BuildOptions:
    source: str
    out: Path
    tasks: tuple[str, ...] = ()  # () = every registered domain
    finance_posts: Path | None = None  # Stack Exchange Posts.xml instead of the FiQA titles
    unreviewed: bool = False  # the automatic selection and extractive premises, for audits
    extractive: ExtractiveSettings = field(default_factory=ExtractiveSettings)
    progress: bool = True
    rotate_options: bool = False  # add each MC item's cyclic option rotations (framebench.text_eval.framingqa.rotation)


def is_prepared(source: str) -> bool:
    return source != "hf" and (Path(source) / "contexts.jsonl").is_file() and (
        Path(source) / "answer_sheets.jsonl").is_file()


def load_contexts(opts: BuildOptions) -> tuple[list[Context], list[AnswerSheet], list[Dropped], list[str], dict[str, Any]]:
    """Contexts and sheets of the requested tasks from a source folder or HF."""
    from framebench.text_eval.framingqa.review import apply_decisions

    source = opts.source
    if source != "hf" and not Path(source).is_dir():
        raise UserError(f"{source}: no such folder (looked for {Path(source).resolve()}); {SOURCE_LAYOUT}")
    contexts: list[Context] = []
    sheets: list[AnswerSheet] = []
    dropped: list[Dropped] = []
    notes: list[str] = []
    pools: dict[str, Any] = {}
    for task in task_names():  # in the registry's order, whatever the order of opts.tasks
        if opts.tasks and task not in opts.tasks:
            continue
        dom = domain(task)
        loaded = dom.load(opts)
        notes += loaded.notes
        if opts.unreviewed:
            chosen = dom.select(loaded.contexts) if dom.select else loaded
            found = chosen.contexts
            dropped += loaded.dropped + chosen.dropped
            notes += chosen.notes
            if chosen.pool is not None:
                pools[task] = chosen.pool
            sheets += extractive_sheets(found, opts.extractive)
        else:
            found, task_sheets = apply_decisions(task, loaded.contexts)
            sheets += task_sheets
        contexts += found
    return contexts, sheets, dropped, notes, pools


CONTEXT_FIELDS: dict[str, Any] = {"context_id": str, "task": str, "text": str, "gold": str,
                                  "options": list[str], "provenance": dict}


def read_prepared(source: Path, tasks: tuple[str, ...]) -> tuple[list[Context], list[AnswerSheet]]:
    contexts: list[Context] = []
    path = source / "contexts.jsonl"
    lines = read_jsonl(path, "context")
    if not lines:
        raise UserError(f"{path}: holds no contexts (an empty file)")
    seen: dict[str, int] = {}
    for n, data in lines:
        check_fields(data, CONTEXT_FIELDS, f"{path}: line {n}: context", optional=("provenance",))
        ctx = Context(**data)
        where = f"{path}: line {n}: context {ctx.context_id!r}"
        if not ctx.context_id.strip():
            raise UserError(f"{path}: line {n}: field 'context_id' is empty")
        if ctx.context_id in seen:
            raise UserError(f"{where}: field 'context_id' repeats line {seen[ctx.context_id]}")
        seen[ctx.context_id] = n
        if ctx.task not in task_names() or not ctx.text.strip() or ctx.gold not in ctx.options:
            raise UserError(f"{where} needs a known task, a text and a gold among its options")
        if len(set(ctx.options)) != len(ctx.options) or len(ctx.options) < 2 or \
                any(not o.strip() for o in ctx.options):
            raise UserError(f"{where}: field 'options' must hold two or more distinct, non-empty options")
        if ctx.task in tasks:
            contexts.append(ctx)
    if not contexts:
        raise UserError(f"{path}: holds no context of the tasks asked for ({', '.join(tasks)})")
    sheet_list = read_sheets(source / "answer_sheets.jsonl")
    by_id = {s.context_id: s for s in sheet_list}
    if len(by_id) != len(sheet_list):
        repeated = next(s.context_id for i, s in enumerate(sheet_list)
                        if any(t.context_id == s.context_id for t in sheet_list[:i]))
        raise UserError(f"{source / 'answer_sheets.jsonl'}: context {repeated!r}: field 'context_id' has "
                        "two answer sheets")
    sheets = []
    for ctx in contexts:
        sheet = by_id.get(ctx.context_id)
        if sheet is None or sheet.gold != ctx.gold or sheet.task != ctx.task:
            raise UserError(f"{source / 'answer_sheets.jsonl'}: no answer sheet matching context "
                            f"{ctx.context_id!r} (same task and gold)")
        if not set(sheet.distractors) <= set(ctx.options):
            raise UserError(f"{source / 'answer_sheets.jsonl'}: context {ctx.context_id!r}: field 'distractors' "
                            f"names options that are not among the context's options")
        sheets.append(sheet)
    return contexts, sheets


def build(opts: BuildOptions) -> BuildResult:
    """Run the whole pipeline, check the result and write OUT (items, contexts, answer sheets, report)."""
    from rich.progress import track

    from framebench.text_eval.framingqa.check import find_defects

    started = time.perf_counter()
    if not opts.tasks:
        opts = replace(opts, tasks=task_names())
    for task in opts.tasks:
        domain(task)  # an unknown task is a user error naming the known ones
    dropped: list[Dropped] = []
    notes: list[str] = []
    pools: dict[str, Any] = {}
    if is_prepared(opts.source):
        if opts.unreviewed:
            raise UserError(f"{opts.source}: --unreviewed takes a source folder or 'hf', not a prepared folder")
        contexts, sheets = read_prepared(Path(opts.source), opts.tasks)
    else:
        contexts, sheets, dropped, notes, pools = load_contexts(opts)

    sheet_of = {s.context_id: s for s in sheets}
    binary: list[dict[str, Any]] = []
    mc: list[dict[str, Any]] = []
    for ctx in track(contexts, description="expanding (Table 7)", disable=not opts.progress, transient=True):
        sheet = sheet_of[ctx.context_id]
        b, m = expand(ctx, sheet)
        want_b, want_m = expected_counts(len(sheet.evidence))
        if len(b) != want_b or (m and len(m) != want_m):  # an internal invariant, not a user error
            raise AssertionError(f"{ctx.context_id}: {len(b)}/{len(m)} items, Table 1 says {want_b}/{want_m}")
        binary += b
        mc += m
    defects = find_defects(contexts, [sheet_of[c.context_id] for c in contexts], binary + mc)
    items = binary + mc
    if opts.rotate_options:
        from framebench.text_eval.framingqa.rotation import with_rotations

        items = with_rotations(items)
    for n, item in enumerate(items, 1):
        validate_item(item, "built items", n)
    result = BuildResult(contexts, [sheet_of[c.context_id] for c in contexts], items, dropped, notes, pools,
                         defects=defects, reviewed=not opts.unreviewed and not is_prepared(opts.source))
    result.seconds = time.perf_counter() - started
    write_outputs(result, opts.out, opts.source)
    return result


def write_outputs(result: BuildResult, out: Path, source: str) -> None:
    from framebench.files import write_text_atomic
    from framebench.text_eval.framingqa.build_report import render_report

    out.mkdir(parents=True, exist_ok=True)
    text = render_report(result, source)  # render first: nothing is written if it fails
    write_text_atomic("".join(json.dumps(c.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                              for c in result.contexts), out / "contexts.jsonl")
    write_sheets(result.sheets, out / "answer_sheets.jsonl")
    write_items(result.items, out / "items.jsonl")
    defects = out / "defects.jsonl"
    if result.defects:
        write_text_atomic("".join(json.dumps(dataclasses.asdict(d), ensure_ascii=False, sort_keys=True) + "\n"
                                  for d in result.defects), defects)
    else:
        defects.unlink(missing_ok=True)
    write_text_atomic(text, out / "build_report.md")
