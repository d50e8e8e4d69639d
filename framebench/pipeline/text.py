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

How a job is answered is an answer mode (``--answer``), found in the registry
(``framebench.answer_modes``; the contract: ``framebench.answering.AnswerMode``). Keys, calls,
stored results and the reasoning step are the pipeline's, the same for every mode
(``framebench.pipeline.answers``); the core names no mode. The run itself is a front end of the
one driver (``framebench.pipeline.driver``): :class:`TextRun` supplies the selection, the workers,
the units and the records.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench import records as rec
from framebench.backends import Backend
from framebench.bounds import LIMIT
from framebench.errors import UserError
from framebench.executors import Chunk, Recipe, Unit, streamed
from framebench.executors.base import WorkerMeta
from framebench.files import file_sha256
from framebench.items import ITEMS_FILE, read_items
from framebench.pipeline.answers import CALL_SIZE, ModeRunner, job_key, pack_calls
from framebench.pipeline.driver import Execution, Lookup, Rows, Selected, UnitPlan, drive
from framebench.registry import (
    DEFAULT_ANSWER_MODE,
    answer_mode,
    answer_modes,
    engine_for,
    require_capability,
    suite,
)
from framebench.run_folder import PROMPTS_FILE, RunIdentity
from framebench.store import STORE_FILE, ResultStore, stable_json
from framebench.suite import Job, TextOptions

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CALL_SIZE", "Job", "PROMPTS_FILE", "RunSummary", "TextRequest", "TextRun", "build_jobs", "pack_calls",
           "run_text", "select_items"]


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
        chosen = chosen[:LIMIT.check(limit, "--limit")]
    return chosen


def build_jobs(items: list[dict], conditions: Sequence[str], items_path: Path,
               answer: str = DEFAULT_ANSWER_MODE) -> list[Job]:
    """Each item's jobs from its registered suite (FramingQA: one per item; OMIT: one per
    condition), in items order, each answered the ``answer`` way."""
    options = TextOptions(conditions=tuple(conditions))
    jobs = [job for item in items for job in suite(item["suite"]).items.jobs([item], options, str(items_path))]
    for job in jobs:
        job.answer_mode = answer
    return jobs


def make_record(job: Job, run_id: str, model: str) -> dict[str, Any]:
    return suite(job.item["suite"]).items.record(job, run_id, model)


@dataclass
class TextCounts:
    """What a text run did, counted as its records are made: records, how many were generated
    and how many served from the store, and each parse outcome."""

    records: int = 0
    generated: int = 0
    from_store: int = 0
    parses: dict[str, int] = field(default_factory=lambda: dict.fromkeys(rec.PARSES, 0))

    def progress(self) -> dict[str, int]:
        """The progress line's counters, named as the end-of-run summary names them."""
        return {"unparsed": self.parses["unparsed"], "refusal": self.parses["refusal"]}


def check_engine(mode: ModeRunner, spec: str) -> None:
    """Before any data is read or model loaded: the engine ``spec`` names can answer this way."""
    require_capability(spec, mode.capability, f"--answer {mode.name}")


@dataclass
class TextPayload:
    """What a worker needs of a text unit: its jobs (keyed, rendered) and the stored results its
    answer mode needs (``ModeRunner.known_keys``: the reasoning the driver already holds)."""

    jobs: list[Job]
    known: dict[str, Any] = field(default_factory=dict)


class TextWorker:
    """A text worker: the loaded backend; runs units of jobs, one chunk per returned batch."""

    def __init__(self, model: str | None, options: Mapping[str, Any], answer: str = DEFAULT_ANSWER_MODE,
                 backend: Backend | None = None):
        self.model, self.options, self.answer = model, dict(options), answer
        self.backend = backend

    def meta(self) -> WorkerMeta:
        if self.backend is None:
            from framebench.backends import load_backend

            self.backend = load_backend(self.model, **self.options)
        self.mode = ModeRunner(answer_mode(self.answer))
        self.mode.check(self.backend)
        self.fingerprint = self.backend.fingerprint()
        return WorkerMeta(self.backend.spec, self.fingerprint, self.backend.info(), call_size=self.call_size())

    def call_size(self) -> int | None:
        """Jobs per backend call: the built backend's own value, else its engine's declaration
        (None: the pipeline's ``CALL_SIZE``)."""
        size = getattr(self.backend, "call_size", None)
        if size is None and self.model is not None:
            size = engine_for(self.model, "model").call_size
        return size

    def run(self, unit: Unit):
        payload: TextPayload = unit.payload
        work = partial(self.mode.work, self.backend, self.fingerprint, payload.jobs, payload.known)
        for entries, done in streamed(work):
            yield Chunk(unit.index, entries, done)


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


def check_conditions_apply(items_path: Path, items: list[dict], conditions: list[str]) -> None:
    """Refuse ``--conditions`` where they cannot apply (no OMIT items)."""
    if conditions and not any(suite(s).items.conditions_listing() for s in {it["suite"] for it in items}):
        raise UserError(f"--conditions {','.join(conditions)}: {items_path} holds no OMIT items "
                        "(conditions M0-M4 apply to OMIT only); leave --conditions out")


def selection_warnings(every: list[dict], items: list[dict], limit: int | None) -> tuple[str, ...]:
    """A warning when ``--limit`` cuts the set."""
    if limit is None or limit >= len(every):
        return ()
    return (f"--limit {limit}: running {len(items)} of {len(every)} selected items; contexts may be "
            "cut short, so these metrics are not the benchmark's (use --limit for smoke tests only)",)


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


@dataclass(frozen=True)
class TextRequest:
    """A text run as asked, from the command line (``framebench text``) or the API
    (``framebench.api.run_text``) to the driver: one typed value instead of a parameter list
    relayed through each layer."""

    model: str | None  # an engine spec; None: the embedded default (or ``backend``'s)
    data: Path  # items.jsonl, or the folder holding it
    out: Path
    tasks: tuple[str, ...] = ()  # empty: every task
    formats: tuple[str, ...] = ()  # empty: every format
    limit: int | None = None
    conditions: tuple[str, ...] = ()  # OMIT only; empty: each suite's default
    answer: str = DEFAULT_ANSWER_MODE
    reasoning_from: tuple[Path, ...] = ()
    model_args: Mapping[str, Any] = field(default_factory=dict)  # the engine's declared options
    batch_size: int | str = "auto"  # conveniences, passed to the engines that declare them
    concurrency: int = 8
    base_url: str | None = None
    backend: Backend | None = None  # an already built backend (the API only; then ``model`` is unused)
    execution: Execution = Execution()

    def model_options(self) -> dict[str, Any]:
        return model_options(self.model, self.model_args, batch_size=self.batch_size,
                             concurrency=self.concurrency, base_url=self.base_url)


@dataclass
class RunSummary:
    """What a text run did (``framebench.api.run_text``'s answer), from what the run holds in memory."""

    run_dir: Path
    run_id: str
    n_records: int
    n_generated: int
    n_from_store: int
    parse_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)  # the records as written

    def records(self) -> pd.DataFrame:
        """The records as written, as ``read_records`` reads them, without reading them back."""
        return rec.to_table(self.rows).to_pandas()


def run_text(request: TextRequest) -> RunSummary:
    """Run ``request``: its records, prompts and run.json in ``request.out``."""
    front = TextRun(request)
    done = drive(front, request.execution)
    counts = front.counts
    return RunSummary(done.out, done.run_id, counts.records, counts.generated, counts.from_store,
                      dict(counts.parses), done.seconds, done.rows)


class TextRun:
    """The text front end of the driver: items -> jobs, units of backend calls, records."""

    producer, simulator = "text", ""

    def __init__(self, request: TextRequest):
        self.request, self.out, self.sources = request, request.out, []
        self.counts = TextCounts()
        self.made: dict[str, dict[str, Any]] = {}  # record id -> its row, made once its job is answered

    def select(self) -> Selected:
        """Check the arguments, read and select the items (before any model loads)."""
        from framebench.paths import check_out_folder

        r = self.request
        self.t0 = time.perf_counter()
        self.mode = self._check_mode()
        self.out = check_out_folder(self.out)
        self.items_path = r.data / ITEMS_FILE if r.data.is_dir() else r.data
        every = select_items(read_items(self.items_path), r.tasks, r.formats, None)
        items = select_items(every, None, None, r.limit)
        if not items:
            raise UserError(f"{self.items_path}: no items match the selection (tasks={list(r.tasks) or None}, "
                            f"formats={list(r.formats) or None})")
        check_conditions_apply(self.items_path, items, list(r.conditions))
        self.jobs = build_jobs(items, r.conditions, self.items_path, r.answer)  # none: each suite's default
        self.sources = _reasoning_sources(r.reasoning_from)
        model = r.model or (r.backend.spec if r.backend is not None else "smollm2")
        decodings = sorted({stable_json(self.mode.key_settings(j)) for j in self.jobs})
        identity = RunIdentity(model, file_sha256(self.items_path), self._selection(), settings=decodings)
        return Selected(identity, selection_warnings(every, items, r.limit))

    def _check_mode(self) -> ModeRunner:
        modes, r = answer_modes(), self.request
        if r.answer not in modes:
            raise UserError(f"--answer must be one of {', '.join(modes)}, got {r.answer!r}")
        mode = ModeRunner(modes[r.answer])
        if r.reasoning_from and not mode.reads_reasoning:
            readers = [f"--answer {m.name}" for m in modes.values() if m.reads_reasoning]
            raise UserError(f"--reasoning-from applies to {' or '.join(readers) or 'no answer mode'} only")
        if r.backend is None:
            from framebench.backends import DEFAULT_MODEL

            check_engine(mode, r.model or DEFAULT_MODEL)  # before reading data or loading any model
        return mode

    def _selection(self) -> dict[str, Any]:
        r = self.request
        selection: dict[str, Any] = {"tasks": list(r.tasks), "formats": list(r.formats), "limit": r.limit,
                                     "conditions": []}
        for name in dict.fromkeys(j.item["suite"] for j in self.jobs):
            selection.update(suite(name).items.run_selection([j for j in self.jobs if j.item["suite"] == name]))
        if self.mode.in_identity:
            selection["answer"] = r.answer  # generate runs keep their earlier run ids
        return selection

    def recipe(self) -> Recipe:
        r = self.request
        options = {} if r.backend is not None else r.model_options()
        return text_recipe(r.model, options, r.answer, r.backend, r.execution.executor != "local")

    def keys(self, meta: WorkerMeta) -> list[str]:
        for job in self.jobs:
            job.key = job_key(meta.fingerprint, job)
        return [job.key for job in self.jobs]

    def plan(self, meta: WorkerMeta, stored: Mapping[str, Any], lookup: Lookup, workers: int) -> UnitPlan:
        """Fill the jobs the store holds (and make their records), plan the rest as units
        (backend calls)."""
        fingerprint, mode, jobs = meta.fingerprint, self.mode, self.jobs
        self.model = meta.spec
        for job in jobs:
            if job.key in stored:
                mode.restore(job, stored[job.key])
        pending = [j for j in jobs if not mode.has_result(j)]
        self.by_key = {j.key: j for j in pending}
        self.counts.generated, self.counts.from_store = len(pending), len(jobs) - len(pending)
        self._made(j for j in jobs if mode.has_result(j))

        def unit_of(index: int, unit_jobs: list[Job]) -> Unit:
            known: dict[str, Any] = {}
            keys = mode.known_keys(fingerprint, unit_jobs)  # e.g. reasoning stored here or in --reasoning-from runs
            if keys:
                for source in (*(s.get_many for s in reversed(self.sources)), lookup):
                    known.update(source(keys))
            return Unit(index, len(unit_jobs), TextPayload(unit_jobs, known))

        def remaining(unit: Unit) -> Unit | None:
            left = [j for j in unit.payload.jobs if not mode.has_result(self.by_key[j.key])]
            return unit_of(unit.index, left) if left else None

        calls = mode.calls(pending, meta.call_size or CALL_SIZE)
        return UnitPlan([unit_of(i, call) for i, call in enumerate(calls)], meta.spec, len(jobs),
                    served=len(jobs) - len(pending), fields=self.counts.progress(), remaining=remaining)

    def _made(self, jobs: Iterable[Job]) -> int:
        """Make the records of answered jobs, once each, and count their parses; how many were new."""
        new = 0
        for job in jobs:
            if job.record_id not in self.made:
                row = self.made[job.record_id] = make_record(job, "", self.model)
                self.counts.parses[row["parse"]] += 1
                new += 1
        return new

    def take(self, chunk: Chunk) -> tuple[int, dict[str, Any]]:
        """Apply a chunk's results and make their records; each job once (an in-process worker may
        already have set them on the very job objects the plan holds)."""
        done = []
        for key, _, value in chunk.entries:
            job = self.by_key.get(key)
            if job is not None and job.record_id not in self.made:
                self.mode.apply(job, value)
                done.append(job)
        return self._made(done), self.counts.progress()

    def rows(self, meta: WorkerMeta, run_id: str, results: Mapping[str, Any]) -> Rows:
        jobs = self.jobs
        missing = [j.record_id for j in jobs if j.record_id not in self.made]
        if missing:
            raise RuntimeError(f"{len(missing)} jobs have no result after every unit finished (first: {missing[0]})")
        rows = [self.made[j.record_id] for j in jobs]
        for row in rows:
            row["run_id"] = run_id  # known once the driver has the identity and the model
        self.counts.records = len(rows)
        c = self.counts
        extra = {"chat_template_hash": meta.info.get("chat_template_hash", ""), "data": str(self.items_path),
                 "selection": self._selection(), "n_records": c.records, "n_generated": c.generated,
                 "n_from_store": c.from_store, "parse_counts": dict(c.parses),
                 "seconds": round(time.perf_counter() - self.t0, 3), "answer_mode": self.request.answer}
        return Rows(rows, [(j.record_id, j.prompt, j.chat) for j in jobs],
                    {j.decoding_name: j.decoding.as_dict() for j in jobs}, extra)

    def close(self) -> None:
        for source in self.sources:
            source.close()
