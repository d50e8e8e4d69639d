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

``answer="constrained"`` replaces free generation by scored answers (``text_eval.constrained``):
each job's allowed answers get a probability, the record keeps them and the most probable one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from framebench import records as rec
from framebench.backends import Backend, Decoding, load_backend
from framebench.console import ProgressReporter, warn
from framebench.errors import UserError
from framebench.items import ITEMS_FILE, read_items
from framebench.registry import engine_for, suite
from framebench.runinfo import file_sha256, now_iso
from framebench.runs import PROMPTS_FILE, RunInfo, RunSummary, run_id_for, write_run
from framebench.store import STORE_FILE, ResultStore, result_key, stable_json
from framebench.suite import Job, TextOptions

__all__ = ["CALL_SIZE", "Job", "PROMPTS_FILE", "RunSummary", "build_jobs", "run_text", "select_items"]

CALL_SIZE = 256

ANSWER_MODES = ("generate", "constrained")


def _split(values: Sequence[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [v.strip() for chunk in values for v in chunk.split(",") if v.strip()]


def select_items(items: list[dict], tasks: Sequence[str] | None, formats: Sequence[str] | None,
                 limit: int | None) -> list[dict]:
    tasks, formats = _split(tasks), _split(formats)
    known = rec.known_tasks()
    for t in tasks:
        if t not in known:
            raise UserError(f"--tasks: unknown task {t!r} (known: {', '.join(known)})")
    known_formats = tuple(dict.fromkeys(f for fs in rec.suite_formats(text_only=True).values() for f in fs))
    for f in formats:
        if f not in known_formats:
            raise UserError(f"--formats: unknown format {f!r} (use {', '.join(known_formats)})")
    chosen = [it for it in items if (not tasks or it["task"] in tasks) and (not formats or it["format"] in formats)]
    if limit is not None:
        if limit < 1:
            raise UserError(f"--limit must be a positive integer, got {limit}")
        chosen = chosen[:limit]
    return chosen


def build_jobs(items: list[dict], conditions: Sequence[str], items_path: Path,
               answer: str = "generate") -> list[Job]:
    """Each item's jobs from its registered suite (FramingQA: one per item; OMIT: one per
    condition), in items order, each answered the ``answer`` way."""
    options = TextOptions(conditions=tuple(conditions))
    jobs = [job for item in items for job in suite(item["suite"]).jobs([item], options, str(items_path))]
    for job in jobs:
        job.answer_mode = answer
    return jobs


def make_record(job: Job, run_id: str, model: str) -> dict[str, Any]:
    return suite(job.item["suite"]).record(job, run_id, model)


def _is_failure(job: Job) -> bool:
    return make_record(job, "", "")["parse"] != "ok"


def job_key(fingerprint: str, job: Job) -> str:
    """The result-store key: model, record, prompt and how it is answered (a constrained and a
    generated answer are never served for each other)."""
    if job.answer_mode == "constrained":
        from text_eval.constrained import scoring_settings

        return result_key(fingerprint, job.record_id, job.chat, scoring_settings(job))
    return result_key(fingerprint, job.record_id, job.chat, job.decoding.as_dict())


def restore_result(job: Job, stored: Mapping[str, Any]) -> None:
    """Fill a job from its stored result (the store sorts keys: the allowed answers' order, which
    breaks ties, comes back from the suite)."""
    job.output = stored["output"]
    if job.answer_mode == "constrained":
        from text_eval.constrained import job_choices

        job.probs = {a: stored["probs"][a] for a in job_choices(job) if a in stored["probs"]}


def is_done(job: Job) -> bool:
    return (job.probs if job.answer_mode == "constrained" else job.output) is not None


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
            outputs = backend.generate(chats, decoding, on_batch=store_batch)
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
    """--answer constrained: reasoning first where the suite asks for it (stored under its
    generation key, so it is shared with --answer generate), then the scored answers."""
    from dataclasses import replace

    from text_eval.constrained import score_jobs

    def reasoning_key(job: Job) -> str:
        return result_key(fingerprint, job.record_id, job.chat, job.decoding.as_dict())

    def generate(jobs: list[Job]) -> None:
        copies = [replace(j, key=reasoning_key(j), output=None, answer_mode="generate") for j in jobs]
        _generate_pending(backend, copies, store, lambda done: None)
        for job, copy in zip(jobs, copies, strict=True):
            job.output = copy.output

    sources = []
    for run_dir in reasoning_from:
        if not (Path(run_dir) / STORE_FILE).is_file():
            raise UserError(f"--reasoning-from {run_dir}: no result store (store.sqlite) there")
        sources.append(ResultStore(run_dir))
    try:
        score_jobs(backend, [j for call in _calls(pending) for j in call], store, reasoning_key, generate,
                   on_done, reasoning_stores=sources)
    finally:
        for source in sources:
            source.close()


def model_options(model: str | None, model_args: Mapping[str, Any] | None = None,
                  **flags: Any) -> dict[str, Any]:
    """The options for the model engine ``model`` names: the convenience flags it declares
    (``--batch-size``, ``--concurrency``, ``--base-url``; None = not given), then ``--model-arg``
    values, which win. An undeclared ``--model-arg`` is an error when the engine is built."""
    from framebench.backends import DEFAULT_MODEL

    engine = engine_for(model or DEFAULT_MODEL, "model")
    options = {k: v for k, v in flags.items() if v is not None and engine.option(k) is not None}
    options.update(model_args or {})
    return options


def run_text(model: str | None, data: Path, out: Path, *, tasks: Sequence[str] | None = None,
             formats: Sequence[str] | None = None, limit: int | None = None,
             batch_size: int | str = "auto", concurrency: int = 8,
             conditions: Sequence[str] | None = None, progress: bool = True,
             backend: Backend | None = None, base_url: str | None = None,
             model_args: Mapping[str, Any] | None = None, force: bool = False,
             answer: str = "generate", reasoning_from: Sequence[Path] = ()) -> RunSummary:
    from framebench.paths import check_out_folder
    from framebench.runinfo import check_reuse

    started, t0 = now_iso(), time.perf_counter()
    if answer not in ANSWER_MODES:
        raise UserError(f"--answer must be one of {', '.join(ANSWER_MODES)}, got {answer!r}")
    if reasoning_from and answer != "constrained":
        raise UserError("--reasoning-from applies to --answer constrained only")
    if answer == "constrained" and backend is None:
        from framebench.backends import DEFAULT_MODEL
        from text_eval.constrained import check_engine

        check_engine(model or DEFAULT_MODEL)  # before reading data or loading any model
    data, out = Path(data), check_out_folder(Path(out))
    items_path = data / ITEMS_FILE if data.is_dir() else data
    every = select_items(read_items(items_path), tasks, formats, None)
    items = select_items(every, None, None, limit)
    if not items:
        raise UserError(f"{items_path}: no items match the selection (tasks={tasks}, formats={formats})")
    jobs = build_jobs(items, _split(conditions) or ["M0"], items_path, answer)
    dataset_hash = file_sha256(items_path)
    selection: dict[str, Any] = {"tasks": _split(tasks), "formats": _split(formats), "limit": limit,
                                 "conditions": []}
    for name in dict.fromkeys(j.item["suite"] for j in jobs):
        selection.update(suite(name).run_selection([j for j in jobs if j.item["suite"] == name]))
    if answer != "generate":
        selection["answer"] = answer  # generate runs keep their earlier run ids
    identity = {"model": model or (backend.spec if backend is not None else "smollm2"),
                "dataset_hash": dataset_hash, "selection": selection}
    check_reuse(out, identity, force)  # before any model is loaded
    warn_about_selection(items_path, every, items, limit, _split(conditions))

    if backend is None:
        backend = load_backend(model, **model_options(model, model_args, batch_size=batch_size,
                                                      concurrency=concurrency, base_url=base_url))
    spec = backend.spec
    fingerprint = backend.fingerprint()
    if answer == "constrained":
        from text_eval.constrained import check_backend, scoring_settings

        check_backend(backend)
        decodings = sorted({stable_json(scoring_settings(j)) for j in jobs})
    else:
        decodings = sorted({stable_json(j.decoding.as_dict()) for j in jobs})
    run_id = run_id_for(spec, [fingerprint, dataset_hash, selection, decodings])

    for job in jobs:
        job.key = job_key(fingerprint, job)
    out.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out)
    try:
        found = store.get_many(j.key for j in jobs)
        for job in jobs:
            if job.key in found:
                restore_result(job, found[job.key])
        pending = [j for j in jobs if not is_done(j)]
        n_cached = len(jobs) - len(pending)
        failures = sum(_is_failure(j) for j in jobs if is_done(j))

        reporter = ProgressReporter(spec, len(jobs), completed=n_cached, enabled=progress,
                                    fields={"parse failures": failures})

        def on_done(done: list[Job]) -> None:  # once per finished batch
            nonlocal failures
            failures += sum(_is_failure(j) for j in done)
            reporter.advance(len(done), **{"parse failures": failures})

        with reporter:
            if pending and answer == "constrained":
                _score_pending(backend, pending, store, on_done, fingerprint, reasoning_from)
            elif pending:
                _generate_pending(backend, pending, store, on_done)
    finally:
        store.close()

    rows = [make_record(j, run_id, spec) for j in jobs]
    parse_counts = {p: sum(r["parse"] == p for r in rows) for p in rec.PARSES}
    seconds = time.perf_counter() - t0
    model_info = backend.info()
    write_run(out, rows, ((j.record_id, j.prompt) for j in jobs), RunInfo(
        run_id=run_id, model=spec, fingerprint=fingerprint,
        decoding={j.decoding_name: j.decoding.as_dict() for j in jobs},
        dataset_hash=dataset_hash, started=started, producer="text", model_info=model_info,
        extra={"chat_template_hash": model_info.get("chat_template_hash", ""), "data": str(items_path),
               "selection": selection, "n_records": len(rows), "n_generated": len(pending),
               "n_from_store": n_cached, "parse_counts": parse_counts, "seconds": round(seconds, 3),
               "identity": identity, "answer_mode": answer},
    ))
    return RunSummary(out, run_id, len(rows), len(pending), n_cached, parse_counts, seconds)
