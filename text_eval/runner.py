"""Run a model over built items and write records (``framebench text``).

Flow: read ``DATA/items.jsonl`` -> select (tasks, formats, limit) -> one job per item (OMIT items:
one per ``--conditions`` entry) -> serve what the result store already holds -> generate the rest,
storing each batch as soon as it finishes (so a killed run resumes where it stopped) -> parse every
output -> ``records.parquet`` (rows in items order), ``prompts.jsonl`` and ``run.json``.

Jobs are sent to the backend per decoding setting, in calls of whole contexts (about ``CALL_SIZE``
jobs); the HF backend finds the variants of a context inside a call and computes their shared
prefix once. Records are still written in items order.

``run_id`` is stable: ``<model slug>-<hash>`` over the model fingerprint, the dataset hash, the
selection (tasks, formats, limit, conditions) and the decoding settings, so a resumed run and an
uninterrupted run with the same arguments write identical records.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench import records as rec
from framebench.backends import Backend, Chat, Decoding, load_backend
from framebench.console import ProgressReporter, warn
from framebench.errors import UserError
from framebench.items import ITEMS_FILE, read_items
from framebench.runinfo import file_sha256, now_iso, write_run_info, write_text_atomic
from framebench.store import ResultStore, result_key, sha256, stable_json
from text_eval.parsing import parse_answer
from text_eval.prompts import decoding_for, render_chat

PROMPTS_FILE = "prompts.jsonl"
CALL_SIZE = 256
TEXT_FORMATS = ("binary", "mc")
ANSWER_MODES = ("generate", "constrained")


@dataclass
class Job:
    item: dict[str, Any]
    record_id: str
    chat: Chat
    decoding: Decoding
    condition: Any = None  # text_eval.omit_conditions.Condition for OMIT items
    key: str = ""
    output: str | None = None
    probs: dict[str, float] | None = None  # --answer constrained: P(allowed answer)

    @property
    def prompt(self) -> str:
        return self.chat[-1]["content"]


@dataclass
class RunSummary:
    run_dir: Path
    run_id: str
    n_records: int
    n_generated: int
    n_from_store: int
    parse_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _split(values: Sequence[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [v.strip() for chunk in values for v in chunk.split(",") if v.strip()]


def select_items(items: list[dict], tasks: Sequence[str] | None, formats: Sequence[str] | None,
                 limit: int | None) -> list[dict]:
    tasks, formats = _split(tasks), _split(formats)
    for t in tasks:
        if t not in rec.TASKS:
            raise UserError(f"--tasks: unknown task {t!r} (known: {', '.join(rec.TASKS)})")
    for f in formats:
        if f not in TEXT_FORMATS:
            raise UserError(f"--formats: unknown format {f!r} (use binary, mc)")
    chosen = [it for it in items if (not tasks or it["task"] in tasks) and (not formats or it["format"] in formats)]
    if limit is not None:
        if limit < 1:
            raise UserError(f"--limit must be a positive integer, got {limit}")
        chosen = chosen[:limit]
    return chosen


def _omit_conditions(names: Sequence[str]):
    from text_eval.omit_conditions import CONDITIONS

    chosen = []
    for name in names:
        if name not in CONDITIONS:
            raise UserError(f"--conditions: unknown condition {name!r} (known: {', '.join(CONDITIONS)})")
        chosen.append(CONDITIONS[name])
    return chosen


def build_jobs(items: list[dict], conditions: Sequence[str], items_path: Path) -> list[Job]:
    """One job per FramingQA item; one per (item, condition) for OMIT items."""
    jobs: list[Job] = []
    omit_conditions = None
    for item in items:
        if item["suite"] == "omit":
            if omit_conditions is None:
                from text_eval.omit_conditions import render_omit_chat

                omit_conditions = _omit_conditions(conditions or ["M0"])
            for cond in omit_conditions:
                jobs.append(Job(item, f"{item['item_id']}@{cond.name}", render_omit_chat(item, cond),
                                Decoding(max_new_tokens=cond.max_new_tokens), cond))
            continue
        if item["format"] not in TEXT_FORMATS:
            raise UserError(f"{items_path}: item {item['item_id']!r}: field 'format' must be binary or mc "
                            f"for the text evaluator, got {item['format']!r}")
        try:
            chat = render_chat(item)
        except ValueError as exc:
            raise UserError(f"{items_path}: item {item['item_id']!r}: field 'options': {exc}") from None
        jobs.append(Job(item, item["item_id"], chat, decoding_for(item["format"])))
    return jobs


def make_record(job: Job, run_id: str, model: str, answer_mode: str = "generate") -> dict[str, Any]:
    if answer_mode == "constrained":
        return _constrained_record(job, run_id, model)
    item, output = job.item, job.output or ""
    if job.condition is not None:
        from text_eval.omit_conditions import parse_omit_answer

        answer, parse = parse_omit_answer(output, job.condition)
        return rec.make_row(
            run_id=run_id, model=model, suite="omit", task="omit", format="binary",
            context_id=item["context_id"], item_id=job.record_id, bias="neutral",
            gold="", answer=answer, parse=parse, correct=False, output=output,
            frame=item.get("frame", ""), condition=job.condition.name, conflicts=item.get("conflicts", ""),
            answer_mode="generate",
        )
    parsed = parse_answer(output, item["format"], item["options"] or None)
    correct = parsed.parse == "ok" and parsed.answer == item["gold"]
    return rec.make_row(
        run_id=run_id, model=model, suite=item["suite"], task=item["task"], format=item["format"],
        context_id=item["context_id"], item_id=job.record_id, bias=item["bias"], level=item["level"],
        form=item["form"], variant=item["variant"], option=item["option"], distractor=item["distractor"],
        slot=item["slot"], gold=item["gold"], answer=parsed.answer, parse=parsed.parse, correct=correct,
        output=output, answer_mode="generate",
    )


def _constrained_record(job: Job, run_id: str, model: str) -> dict[str, Any]:
    from text_eval.constrained import constrained_answer

    item, output = job.item, job.output or ""
    answer, parse = constrained_answer(job.probs)
    probs = rec.encode_answer_probs(job.probs)
    if job.condition is not None:
        return rec.make_row(
            run_id=run_id, model=model, suite="omit", task="omit", format="binary",
            context_id=item["context_id"], item_id=job.record_id, bias="neutral",
            gold="", answer=answer, parse=parse, correct=False, output=output,
            frame=item.get("frame", ""), condition=job.condition.name, conflicts=item.get("conflicts", ""),
            answer_mode="constrained", answer_probs=probs,
        )
    return rec.make_row(
        run_id=run_id, model=model, suite=item["suite"], task=item["task"], format=item["format"],
        context_id=item["context_id"], item_id=job.record_id, bias=item["bias"], level=item["level"],
        form=item["form"], variant=item["variant"], option=item["option"], distractor=item["distractor"],
        slot=item["slot"], gold=item["gold"], answer=answer, parse=parse,
        correct=parse == "ok" and answer == item["gold"], output=output,
        answer_mode="constrained", answer_probs=probs,
    )


def _is_failure(job: Job) -> bool:
    if job.probs is not None:
        return not job.probs
    if job.condition is not None:
        from text_eval.omit_conditions import parse_omit_answer

        return parse_omit_answer(job.output or "", job.condition)[1] != "ok"
    return parse_answer(job.output or "", job.item["format"], job.item["options"] or None).parse != "ok"


def _model_slug(spec: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", spec.rsplit("/", 1)[-1]).strip("-").lower()
    return slug[:40] or "model"


def _calls(jobs: list[Job], size: int | None = None) -> list[list[Job]]:
    """Pack whole contexts into calls of about ``size`` jobs, so that the variants of a context
    reach the backend together (one shared prefix) and a call never splits a context. A backend
    that batches across contexts (GPU ``hf:``, ``vllm:``) asks for larger calls (``call_size``)."""
    size = size or CALL_SIZE
    by_context: dict[str, list[Job]] = {}
    for job in jobs:
        by_context.setdefault(job.item["context_id"], []).append(job)
    calls: list[list[Job]] = [[]]
    for group in by_context.values():
        if calls[-1] and len(calls[-1]) + len(group) > size:
            calls.append([])
        calls[-1].extend(group)
    return [c for c in calls if c]


def _generate_pending(backend: Backend, pending: list[Job], store: ResultStore,
                      on_done: Callable[[list[Job]], None]) -> None:
    """Generate outputs for ``pending`` (in order, per decoding), storing each batch when done."""
    accepts_on_batch = "on_batch" in inspect.signature(backend.generate).parameters
    call_size = getattr(backend, "call_size", None) or CALL_SIZE
    by_decoding: dict[Decoding, list[Job]] = {}
    for job in pending:
        by_decoding.setdefault(job.decoding, []).append(job)
    for decoding, jobs in by_decoding.items():
        for call in _calls(jobs, call_size):

            def store_batch(indices: list[int], texts: list[str], call=call) -> None:
                done = []
                for i, text in zip(indices, texts, strict=True):
                    call[i].output = text
                    done.append(call[i])
                store.put_many((j.key, j.record_id, {"output": j.output}) for j in done)
                on_done(done)

            chats = [j.chat for j in call]
            if accepts_on_batch:
                outputs = backend.generate(chats, decoding, on_batch=store_batch)
            else:
                outputs = backend.generate(chats, decoding)
            if len(outputs) != len(call):
                raise RuntimeError(f"{backend.spec}: returned {len(outputs)} outputs for {len(call)} prompts")
            missing = [i for i, j in enumerate(call) if j.output is None]
            if missing:
                store_batch(missing, [outputs[i] for i in missing])


def warn_about_selection(items_path: Path, every: list[dict], items: list[dict], limit: int | None,
                         conditions: list[str]) -> None:
    """Warn when ``--conditions`` cannot apply (no OMIT items) and when ``--limit`` cuts the set."""
    if conditions and not any(it["suite"] == "omit" for it in items):
        warn(f"--conditions {','.join(conditions)} ignored: {items_path} holds no OMIT items "
             "(conditions M0-M4 apply to OMIT only)")
    if limit is not None and limit < len(every):
        warn(f"--limit {limit}: running {len(items)} of {len(every)} selected items; contexts may be "
             "cut short, so these metrics are not the benchmark's (use --limit for smoke tests only)")


def _score_pending(backend: Backend, pending: list[Job], store: ResultStore,
                   on_done: Callable[[list[Job]], None], fingerprint: str,
                   reasoning_from: Sequence[Path] = ()) -> None:
    """--answer constrained: reasoning first where a condition needs it (stored under its
    generation key, shared with --answer generate), then the scored answers."""
    from dataclasses import replace

    from text_eval.constrained import score_jobs

    def reasoning_key(job: Job) -> str:
        return result_key(fingerprint, job.record_id, job.chat, job.decoding.as_dict())

    def generate(jobs: list[Job]) -> None:
        copies = [replace(j, key=reasoning_key(j), output=None) for j in jobs]
        _generate_pending(backend, copies, store, lambda done: None)
        for job, copy in zip(jobs, copies, strict=True):
            job.output = copy.output

    sources = []
    for run_dir in reasoning_from:
        if not (Path(run_dir) / "store.sqlite").is_file():
            raise UserError(f"--reasoning-from {run_dir}: no result store (store.sqlite) there")
        sources.append(ResultStore(run_dir))
    try:
        score_jobs(backend, [j for call in _calls(pending) for j in call], store, reasoning_key, generate,
                   on_done, reasoning_stores=sources)
    finally:
        for source in sources:
            source.close()


def run_text(model: str | None, data: Path, out: Path, *, tasks: Sequence[str] | None = None,
             formats: Sequence[str] | None = None, limit: int | None = None,
             batch_size: int | str = "auto", concurrency: int = 8,
             conditions: Sequence[str] | None = None, progress: bool = True,
             backend: Backend | None = None, base_url: str | None = None, force: bool = False,
             answer: str = "generate", reasoning_from: Sequence[Path] = ()) -> RunSummary:
    from framebench.paths import check_out_folder
    from framebench.runinfo import check_reuse

    started, t0 = now_iso(), time.perf_counter()
    if answer not in ANSWER_MODES:
        raise UserError(f"--answer must be one of {', '.join(ANSWER_MODES)}, got {answer!r}")
    constrained = answer == "constrained"
    data, out = Path(data), check_out_folder(Path(out))
    items_path = data / ITEMS_FILE if data.is_dir() else data
    every = select_items(read_items(items_path), tasks, formats, None)
    items = select_items(every, None, None, limit)
    if not items:
        raise UserError(f"{items_path}: no items match the selection (tasks={tasks}, formats={formats})")
    jobs = build_jobs(items, _split(conditions) or ["M0"], items_path)
    dataset_hash = file_sha256(items_path)
    selection = {"tasks": _split(tasks), "formats": _split(formats), "limit": limit,
                 "conditions": sorted({j.condition.name for j in jobs if j.condition is not None})}
    if constrained:
        selection["answer"] = answer  # generate keeps its earlier run ids
    identity = {"model": model or (backend.spec if backend is not None else "smollm2"),
                "dataset_hash": dataset_hash, "selection": selection}
    check_reuse(out, identity, force)  # before any model is loaded
    warn_about_selection(items_path, every, items, limit, _split(conditions))

    if backend is None:
        options: dict[str, Any] = {}
        kind = (model or "smollm2").partition(":")[0]
        if kind in ("hf", "smollm2"):
            options["batch_size"] = batch_size
        elif kind == "openai":
            options["concurrency"] = concurrency
            if base_url:
                options["base_url"] = base_url
        backend = load_backend(model, **options)
    spec = backend.spec
    fingerprint = backend.fingerprint()
    if constrained:
        from text_eval.constrained import job_choices, scoring_settings
    decodings = sorted({stable_json(scoring_settings(j) if constrained else j.decoding.as_dict()) for j in jobs})
    run_id = f"{_model_slug(spec)}-{sha256(stable_json([fingerprint, dataset_hash, selection, decodings]))[:12]}"

    for job in jobs:
        job.key = result_key(fingerprint, job.record_id, job.chat,
                             scoring_settings(job) if constrained else job.decoding.as_dict())
    out.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out)
    try:
        found = store.get_many(j.key for j in jobs)
        for job in jobs:
            if job.key in found:
                job.output = found[job.key]["output"]
                if constrained:  # the store sorts keys: restore the allowed order (tie-breaks)
                    stored = found[job.key]["probs"]
                    job.probs = {a: stored[a] for a in job_choices(job) if a in stored}
        pending = [j for j in jobs if (j.probs if constrained else j.output) is None]
        n_cached = len(jobs) - len(pending)
        failures = sum(_is_failure(j) for j in jobs if j.output is not None)

        reporter = ProgressReporter(spec, len(jobs), completed=n_cached, enabled=progress,
                                    fields={"parse failures": failures})

        def on_done(done: list[Job]) -> None:  # once per finished batch
            nonlocal failures
            failures += sum(_is_failure(j) for j in done)
            reporter.advance(len(done), **{"parse failures": failures})

        with reporter:
            if pending and constrained:
                _score_pending(backend, pending, store, on_done, fingerprint, reasoning_from)
            elif pending:
                _generate_pending(backend, pending, store, on_done)
    finally:
        store.close()

    rows = [make_record(j, run_id, spec, answer) for j in jobs]
    rec.write_records(rows, out)
    write_text_atomic("".join(json.dumps({"item_id": j.record_id, "prompt": j.prompt}, ensure_ascii=False) + "\n"
                              for j in jobs), out / PROMPTS_FILE)
    parse_counts = {p: sum(r["parse"] == p for r in rows) for p in rec.PARSES}
    seconds = time.perf_counter() - t0
    info = getattr(backend, "info", dict)()
    write_run_info(
        out, run_id=run_id, model=spec, fingerprint=fingerprint,
        decoding={(f"omit_{j.condition.name}" if j.condition is not None else j.item["format"]):
                  j.decoding.as_dict() for j in jobs},
        dataset_hash=dataset_hash, started=started,
        chat_template_hash=info.get("chat_template_hash", ""), backend=info,
        data=str(items_path), selection=selection, n_records=len(rows), n_generated=len(pending),
        n_from_store=n_cached, parse_counts=parse_counts, seconds=round(seconds, 3), identity=identity,
        answer_mode=answer,
    )
    return RunSummary(out, run_id, len(rows), len(pending), n_cached, parse_counts, seconds)
