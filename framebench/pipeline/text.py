"""The text run (``framebench text``): a model over built items, any text suite, any executor.

Flow: read ``DATA/items.jsonl`` -> select (tasks, formats, limit) -> each item's jobs from its
registered suite (OMIT items: one per ``--conditions`` entry) -> the model's fingerprint from the
executor's first worker -> serve what the result store already holds -> plan the rest as units ->
execute, storing every backend batch the moment it returns -> parse every output -> ``records.parquet``
(rows in items order), ``prompts.jsonl`` and ``run.json``.

Units are backend calls: per decoding setting, whole contexts packed to about the backend's
``call_size`` jobs (``CALL_SIZE`` by default), so the variants of a context reach the backend
together (the HF backend computes their shared prefix once) and a kill loses at most one call.
A unit carries its rendered jobs, so a worker needs neither the data folder nor the run folder.

``run_id`` is stable: ``<model slug>-<hash>`` over the model fingerprint, the dataset hash, the
selection (tasks, formats, limit, conditions) and the decoding settings, so a resumed run and an
uninterrupted run with the same arguments write identical records.

``answer="constrained"`` replaces free generation by scored answers (the ``constrained`` answer
mode a suite package registers under ``framebench.answer_modes``): each job's allowed answers get a
probability, the record keeps them and the most probable one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from framebench import records as rec
from framebench.backends import Backend, Decoding
from framebench.console import ProgressReporter, warn
from framebench.errors import UserError
from framebench.executors.base import Chunk, Recipe, Unit
from framebench.items import ITEMS_FILE, read_items
from framebench.registry import answer_mode, engine_for, suite
from framebench.run_folder import PROMPTS_FILE, RunInfo, RunSummary, run_id_for
from framebench.runinfo import file_sha256, now_iso
from framebench.store import STORE_FILE, ResultStore, result_key, stable_json
from framebench.suite import Job, TextOptions

__all__ = ["CALL_SIZE", "Job", "PROMPTS_FILE", "RunSummary", "build_jobs", "run_text", "select_items"]

CALL_SIZE = 256
T = TypeVar("T")
ANSWER_MODES = ("generate", "constrained")


def split_list(values: Sequence[str] | str | None) -> list[str]:
    """``"a,b"`` or ``["a", "b,c"]`` as a list of stripped, non-empty names."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [v.strip() for chunk in values for v in chunk.split(",") if v.strip()]


def select_items(items: list[dict], tasks: Sequence[str] | None, formats: Sequence[str] | None,
                 limit: int | None) -> list[dict]:
    tasks, formats = split_list(tasks), split_list(formats)
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


def generation_key(fingerprint: str, job: Job) -> str:
    """The store key of a job's generated text (also the reasoning a constrained job reads)."""
    return result_key(fingerprint, job.record_id, job.chat, job.decoding.as_dict())


def job_key(fingerprint: str, job: Job) -> str:
    """The result-store key: model, record, prompt and how it is answered (a constrained and a
    generated answer are never served for each other)."""
    if job.answer_mode == "constrained":
        return result_key(fingerprint, job.record_id, job.chat, answer_mode("constrained").key_settings(job))
    return generation_key(fingerprint, job)


def restore_result(job: Job, stored: Mapping[str, Any]) -> None:
    """Fill a job from its stored result."""
    if job.answer_mode == "constrained":
        answer_mode("constrained").restore(job, stored)
    else:
        job.output = stored["output"]


def apply_result(job: Job, value: Mapping[str, Any]) -> None:
    """Fill a job from a result a worker just returned (the backend's own answer order kept)."""
    job.output = value["output"]
    if job.answer_mode == "constrained":
        job.probs = dict(value["probs"])


def is_done(job: Job) -> bool:
    return (job.probs if job.answer_mode == "constrained" else job.output) is not None


def pack_calls(jobs: list[T], size: int | None = None,
               context_of: Callable[[T], str] = lambda job: job.item["context_id"]) -> list[list[T]]:
    """Pack whole contexts into calls of about ``size`` jobs, so that the variants of a context
    reach the backend together (one shared prefix) and a call never splits a context. A backend
    that batches across contexts (GPU ``hf:``, ``vllm:``) asks for larger calls (``call_size``). ``context_of``: an entry's context (a job's by default)."""
    size = size or CALL_SIZE
    by_context: dict[str, list[T]] = {}
    for job in jobs:
        by_context.setdefault(context_of(job), []).append(job)
    calls: list[list[T]] = [[]]
    for group in by_context.values():
        if calls[-1] and len(calls[-1]) + len(group) > size:
            calls.append([])
        calls[-1].extend(group)
    return [c for c in calls if c]


def generation_calls(jobs: list[Job], size: int | None) -> list[list[Job]]:
    """Jobs grouped per decoding (in order of first appearance), each group packed into calls."""
    by_decoding: dict[Decoding, list[Job]] = {}
    for job in jobs:
        by_decoding.setdefault(job.decoding, []).append(job)
    return [call for group in by_decoding.values() for call in pack_calls(group, size)]


@dataclass
class TextPayload:
    """What a worker needs of a text unit: its jobs (keyed, rendered) and, for constrained
    answers, the reasoning the driver already holds (generation key -> stored value)."""

    jobs: list[Job]
    known: dict[str, Any] = field(default_factory=dict)


class _Sink:
    """The result store as a worker's scoring code sees it: what the driver shipped with the
    unit, and every ``put_many`` handed on as a chunk."""

    def __init__(self, known: Mapping[str, Any], emit: Callable[[list], None]):
        self.known, self.emit = dict(known), emit

    def get_many(self, keys) -> dict[str, Any]:
        return {k: self.known[k] for k in keys if k in self.known}

    def put_many(self, entries) -> None:
        entries = list(entries)
        self.known.update((k, v) for k, _, v in entries)
        self.emit(entries)


class TextWorker:
    """A text worker: the loaded backend; runs units of jobs, one chunk per returned batch."""

    def __init__(self, model: str | None, options: Mapping[str, Any], answer: str = "generate",
                 backend: Backend | None = None):
        self.model, self.options, self.answer = model, dict(options), answer
        self.backend = backend

    def meta(self) -> dict[str, Any]:
        if self.backend is None:
            from framebench.backends import load_backend

            self.backend = load_backend(self.model, **self.options)
        if self.answer == "constrained":
            answer_mode("constrained").check(self.backend)
        self.fingerprint = self.backend.fingerprint()
        return {"spec": self.backend.spec, "fingerprint": self.fingerprint, "info": self.backend.info(),
                "call_size": self.call_size()}

    def call_size(self) -> int | None:
        """Jobs per backend call: the built backend's own value, else its engine's declaration
        (None: the pipeline's ``CALL_SIZE``)."""
        size = getattr(self.backend, "call_size", None)
        if size is None and self.model is not None:
            size = engine_for(self.model, "model").call_size
        return size

    def run(self, unit: Unit):
        from framebench.executors.local import streamed

        payload: TextPayload = unit.payload
        work = self._score if self.answer == "constrained" else self._generate
        for entries, done in streamed(lambda emit: work(payload, emit)):
            yield Chunk(unit.index, entries, done)

    def _generate(self, payload: TextPayload, emit: Callable[[Any], None], records: bool = True) -> None:
        """One backend call per decoding (a unit is one call); each batch emitted as it returns."""
        for call in generation_calls(payload.jobs, len(payload.jobs)):
            done: set[int] = set()

            def on_batch(indices: list[int], texts: list[str], call=call, done=done) -> None:
                fresh = [(i, t) for i, t in zip(indices, texts, strict=True) if i not in done]
                done.update(i for i, _ in fresh)
                emit(([(call[i].key, call[i].record_id, {"output": t}) for i, t in fresh],
                      len(fresh) if records else 0))

            outputs = self.backend.generate([j.chat for j in call], call[0].decoding, on_batch=on_batch)
            if len(outputs) != len(call):
                raise RuntimeError(f"{self.backend.spec}: returned {len(outputs)} outputs for {len(call)} prompts")
            missing = [i for i in range(len(call)) if i not in done]
            if missing:
                on_batch(missing, [outputs[i] for i in missing])

    def _score(self, payload: TextPayload, emit: Callable[[Any], None]) -> None:
        """Constrained answers: reasoning first where the suite asks for it (stored under its
        generation key, shared with ``--answer generate``), then the scored answers."""
        pending: list[list] = []
        sink = _Sink(payload.known, pending.append)

        def reasoning_key(job: Job) -> str:
            return generation_key(self.fingerprint, job)

        def generate(jobs: list[Job]) -> None:
            copies = [replace(j, key=reasoning_key(j), output=None, answer_mode="generate") for j in jobs]
            stored: dict[str, str] = {}

            def keep(chunk: Any) -> None:
                entries, _ = chunk
                stored.update((k, v["output"]) for k, _, v in entries)
                emit((entries, 0))  # reasoning: stored, but no record is finished yet

            self._generate(TextPayload(copies), keep, records=False)
            for job, copy in zip(jobs, copies, strict=True):
                job.output = stored[copy.key]

        def on_done(call: list[Job]) -> None:
            entries = [e for batch in pending for e in batch]
            pending.clear()
            emit((entries, len(call)))

        answer_mode("constrained").score(self.backend, payload.jobs, sink, reasoning_key, generate, on_done)


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


def warn_about_selection(items_path: Path, every: list[dict], items: list[dict], limit: int | None,
                         conditions: list[str]) -> None:
    """Warn when ``--conditions`` cannot apply (no OMIT items) and when ``--limit`` cuts the set."""
    if conditions and not any(suite(s).conditions_listing() for s in {it["suite"] for it in items}):
        warn(f"--conditions {','.join(conditions)} ignored: {items_path} holds no OMIT items "
             "(conditions M0-M4 apply to OMIT only)")
    if limit is not None and limit < len(every):
        warn(f"--limit {limit}: running {len(items)} of {len(every)} selected items; contexts may be "
             "cut short, so these metrics are not the benchmark's (use --limit for smoke tests only)")


def text_recipe(model: str | None, options: Mapping[str, Any], answer: str,
                backend: Backend | None = None, remote: bool = False) -> Recipe:
    """How the executor builds text workers: the model spec and the options that travel (a
    worker on another node gets only those), scheduled by the engine's declared device."""
    from framebench.backends import DEFAULT_MODEL
    from framebench.executors.resources import engine_device, travelling_options

    spec = model or (backend.spec if backend is not None else DEFAULT_MODEL)
    if remote:
        if backend is not None:
            raise UserError("--executor ray builds the model on each worker; pass a model spec, not a backend")
        return Recipe(TextWorker, (model, travelling_options(model, options), answer),
                      device=engine_device(model), label=spec)
    return Recipe(TextWorker, (model, dict(options), answer, backend), label=spec)


def _reasoning_sources(reasoning_from: Sequence[Path]) -> list[ResultStore]:
    sources = []
    for run_dir in reasoning_from:
        if not (Path(run_dir) / STORE_FILE).is_file():
            raise UserError(f"--reasoning-from {run_dir}: no result store (store.sqlite) there")
        sources.append(ResultStore(run_dir))
    return sources


def run_text(model: str | None, data: Path, out: Path, *, tasks: Sequence[str] | None = None,
             formats: Sequence[str] | None = None, limit: int | None = None,
             batch_size: int | str = "auto", concurrency: int = 8,
             conditions: Sequence[str] | None = None, progress: bool = True,
             backend: Backend | None = None, base_url: str | None = None,
             model_args: Mapping[str, Any] | None = None, force: bool = False,
             answer: str = "generate", reasoning_from: Sequence[Path] = (),
             executor: str = "local", ray_address: str | None = None,
             ray_workers: int | None = None) -> RunSummary:
    from framebench.executors import make_executor
    from framebench.paths import check_out_folder
    from framebench.runinfo import check_reuse

    started, t0 = now_iso(), time.perf_counter()
    if answer not in ANSWER_MODES:
        raise UserError(f"--answer must be one of {', '.join(ANSWER_MODES)}, got {answer!r}")
    if reasoning_from and answer != "constrained":
        raise UserError("--reasoning-from applies to --answer constrained only")
    if answer == "constrained" and backend is None:
        from framebench.backends import DEFAULT_MODEL

        answer_mode("constrained").check_engine(model or DEFAULT_MODEL)  # before reading data or loading any model
    data, out = Path(data), check_out_folder(Path(out))
    items_path = data / ITEMS_FILE if data.is_dir() else data
    every = select_items(read_items(items_path), tasks, formats, None)
    items = select_items(every, None, None, limit)
    if not items:
        raise UserError(f"{items_path}: no items match the selection (tasks={tasks}, formats={formats})")
    jobs = build_jobs(items, split_list(conditions), items_path, answer)  # none: each suite's default
    dataset_hash = file_sha256(items_path)
    selection: dict[str, Any] = {"tasks": split_list(tasks), "formats": split_list(formats), "limit": limit,
                                 "conditions": []}
    for name in dict.fromkeys(j.item["suite"] for j in jobs):
        selection.update(suite(name).run_selection([j for j in jobs if j.item["suite"] == name]))
    if answer != "generate":
        selection["answer"] = answer  # generate runs keep their earlier run ids
    identity = {"model": model or (backend.spec if backend is not None else "smollm2"),
                "dataset_hash": dataset_hash, "selection": selection}
    check_reuse(out, identity, force)  # before any model is loaded
    warn_about_selection(items_path, every, items, limit, split_list(conditions))
    options = {} if backend is not None else model_options(
        model, model_args, batch_size=batch_size, concurrency=concurrency, base_url=base_url)
    recipe = text_recipe(model, options, answer, backend, remote=executor != "local")
    pool = make_executor(executor, ray_address, ray_workers)
    sources = _reasoning_sources(reasoning_from)
    try:
        meta = pool.start(recipe)  # loads the model (here, or on the first Ray worker)
        summary = _execute(pool, meta, jobs, out, answer, sources, progress)
    finally:
        pool.close()
        for source in sources:
            source.close()
    spec, fingerprint = meta["spec"], meta["fingerprint"]
    if answer == "constrained":
        decodings = sorted({stable_json(answer_mode("constrained").key_settings(j)) for j in jobs})
    else:
        decodings = sorted({stable_json(j.decoding.as_dict()) for j in jobs})
    run_id = run_id_for(spec, [fingerprint, dataset_hash, selection, decodings])
    rows = [make_record(j, run_id, spec) for j in jobs]
    parse_counts = {p: sum(r["parse"] == p for r in rows) for p in rec.PARSES}
    seconds = time.perf_counter() - t0
    n_generated, n_cached, persisted = summary
    model_info = meta["info"]
    from framebench.pipeline import finalize

    finalize(out, rows, ((j.record_id, j.prompt, j.chat) for j in jobs), RunInfo(
        run_id=run_id, model=spec, fingerprint=fingerprint,
        decoding={j.decoding_name: j.decoding.as_dict() for j in jobs},
        dataset_hash=dataset_hash, started=started, producer="text", model_info=model_info,
        extra={"chat_template_hash": model_info.get("chat_template_hash", ""), "data": str(items_path),
               "selection": selection, "n_records": len(rows), "n_generated": n_generated,
               "n_from_store": n_cached, "parse_counts": parse_counts, "seconds": round(seconds, 3),
               "identity": identity, "answer_mode": answer},
    ), pool, persisted)
    return RunSummary(out, run_id, len(rows), n_generated, n_cached, parse_counts, seconds)


def _execute(pool: Any, meta: Mapping[str, Any], jobs: list[Job], out: Path, answer: str,
             sources: list[ResultStore], progress: bool) -> tuple[int, int, dict[str, Any]]:
    """Key the jobs, serve the store, run the rest as units; returns (generated, from the store,
    what persisting cost)."""
    from framebench.pipeline import persist

    fingerprint = meta["fingerprint"]
    for job in jobs:
        job.key = job_key(fingerprint, job)
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out) as store:
        found = store.get_many(j.key for j in jobs)
        for job in jobs:
            if job.key in found:
                restore_result(job, found[job.key])
        pending = [j for j in jobs if not is_done(j)]
        n_cached = len(jobs) - len(pending)
        by_key = {j.key: j for j in pending}
        failures = sum(_is_failure(j) for j in jobs if is_done(j))

        def unit_of(index: int, unit_jobs: list[Job]) -> Unit:
            known: dict[str, Any] = {}
            if answer == "constrained":  # reasoning already stored here or in --reasoning-from runs
                keys = [generation_key(fingerprint, j) for j in unit_jobs]
                for source in (*reversed(sources), store):
                    known.update(source.get_many(keys))
            return Unit(index, len(unit_jobs), TextPayload(unit_jobs, known))

        size = meta.get("call_size") or CALL_SIZE
        if answer == "constrained":  # whole contexts, every decoding together (reasoning first)
            calls = pack_calls(pending, size)
        else:
            calls = generation_calls(pending, size)
        units = [unit_of(i, call) for i, call in enumerate(calls)]

        def remaining(unit: Unit) -> Unit | None:
            left = [j for j in unit.payload.jobs if not is_done(by_key[j.key])]
            return unit_of(unit.index, left) if left else None

        reporter = ProgressReporter(meta["spec"], len(jobs), completed=n_cached, enabled=progress,
                                    fields={"parse failures": failures})

        def on_chunk(chunk: Chunk) -> None:
            nonlocal failures
            done = []
            for key, _, value in chunk.entries:
                job = by_key.get(key)
                if job is not None and not is_done(job):
                    apply_result(job, value)
                    done.append(job)
            failures += sum(_is_failure(j) for j in done)
            reporter.advance(len(done), **{"parse failures": failures})

        with reporter:
            persisted = persist(pool, units, store, out, on_chunk, remaining)
    missing = [j.record_id for j in jobs if not is_done(j)]
    if missing:
        raise RuntimeError(f"{len(missing)} jobs have no result after every unit finished (first: {missing[0]})")
    return len(pending), n_cached, persisted
