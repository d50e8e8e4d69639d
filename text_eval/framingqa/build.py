"""The FramingQA build pipeline: sources -> contexts -> answer sheets -> Table 7 items -> files.

Source layouts (``--source``):
- a folder laid out like ``../shared/data`` (``legalbench/``, ``fiqa/``, ``diagnosisarena/``), or
  ``hf`` (the same loaders fed by HF ``datasets``);
- a prepared folder holding ``contexts.jsonl`` and ``answer_sheets.jsonl`` (the demo set's
  hand-authored sources, or an earlier build's output): used as they are.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from framebench.text_eval.framingqa.answer_sheets import AnswerSheet, read_sheets, write_sheets
from framebench.text_eval.framingqa.build_report import BuildResult
from framebench.text_eval.framingqa.contexts import Context, Dropped
from framebench.text_eval.framingqa.domains import domain, task_names
from framebench.text_eval.framingqa.expansion import expand, expected_counts
from framebench.text_eval.framingqa.premises import ExtractiveSettings, extractive_sheets

from framebench.errors import UserError
from framebench.items import validate_item, write_items
from framebench.jsonl import read_jsonl
from framebench.schema import check_fields


@dataclass
class BuildOptions:
    source: str
    out: Path
    generator: str = "extractive"  # extractive | llm
    tasks: tuple[str, ...] = ()  # () = every registered domain
    finance_posts: Path | None = None  # Stack Exchange Posts.xml instead of the FiQA titles
    extractive: ExtractiveSettings = field(default_factory=ExtractiveSettings)
    backend: Any = None  # llm generator: a framebench Backend
    review: Path | None = None  # llm generator: the review JSONL
    progress: bool = True
    rotate_options: bool = False  # add each MC item's cyclic option rotations (framebench.text_eval.framingqa.rotation)


def is_prepared(source: str) -> bool:
    return source != "hf" and (Path(source) / "contexts.jsonl").is_file() and (
        Path(source) / "answer_sheets.jsonl").is_file()


def load_contexts(opts: BuildOptions) -> tuple[list[Context], list[Dropped], list[str], dict[str, Any]]:
    """Contexts of the requested tasks from a source folder or HF."""
    source = opts.source
    if source != "hf" and not Path(source).is_dir():
        raise UserError(f"{source}: source folder not found (give a folder laid out like ../shared/data, or 'hf')")
    contexts: list[Context] = []
    dropped: list[Dropped] = []
    notes: list[str] = []
    pools: dict[str, Any] = {}
    for task in task_names():  # in the registry's order, whatever the order of opts.tasks
        if opts.tasks and task not in opts.tasks:
            continue
        loaded = domain(task).load(opts)
        contexts += loaded.contexts
        dropped += loaded.dropped
        notes += loaded.notes
        if loaded.pool is not None:
            pools[task] = loaded.pool
    return contexts, dropped, notes, pools


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
        sheets.append(sheet)
    return contexts, sheets


def build(opts: BuildOptions) -> BuildResult:
    """Run the whole pipeline and write OUT (items, contexts, answer sheets, report)."""
    from rich.progress import track

    started = time.perf_counter()
    if not opts.tasks:
        opts = replace(opts, tasks=task_names())
    for task in opts.tasks:
        domain(task)  # an unknown task is a user error naming the known ones
    dropped: list[Dropped] = []
    notes: list[str] = []
    pools: dict[str, Any] = {}
    if is_prepared(opts.source):
        contexts, sheets = read_prepared(Path(opts.source), opts.tasks)
    else:
        contexts, dropped, notes, pools = load_contexts(opts)
        sheets = []
        for task in opts.tasks:
            sheets += extractive_sheets([c for c in contexts if c.task == task], opts.extractive)
    if opts.generator == "llm":
        from framebench.text_eval.framingqa.premise_llm import apply_review, propose

        if opts.backend is None or opts.review is None:
            raise UserError("--generator llm needs --model SPEC and a review file (--review PATH)")
        propose(contexts, sheets, opts.backend, opts.review, progress=opts.progress)
        sheets, lost, review_notes = apply_review(sheets, opts.review)
        dropped += lost
        notes += review_notes
        kept = {s.context_id for s in sheets}
        contexts = [c for c in contexts if c.context_id in kept]
    elif opts.generator != "extractive":
        raise UserError(f"unknown generator {opts.generator!r} (use extractive or llm)")

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
    items = binary + mc
    if opts.rotate_options:
        from framebench.text_eval.framingqa.rotation import with_rotations

        items = with_rotations(items)
    for n, item in enumerate(items, 1):
        validate_item(item, "built items", n)
    result = BuildResult(contexts, [sheet_of[c.context_id] for c in contexts], items, dropped, notes, pools)
    result.seconds = time.perf_counter() - started
    write_outputs(result, opts.out, opts.source)
    return result


def write_outputs(result: BuildResult, out: Path, source: str) -> None:
    from framebench.text_eval.framingqa.build_report import render_report

    from framebench.runinfo import write_text_atomic

    out.mkdir(parents=True, exist_ok=True)
    text = render_report(result, source)  # render first: nothing is written if it fails
    write_text_atomic("".join(json.dumps(c.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                              for c in result.contexts), out / "contexts.jsonl")
    write_sheets(result.sheets, out / "answer_sheets.jsonl")
    write_items(result.items, out / "items.jsonl")
    write_text_atomic(text, out / "build_report.md")
