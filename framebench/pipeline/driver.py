"""The one driver of every run: select -> check reuse -> plan units -> execute -> persist -> finalize.

A front end (the text run, the symbolic simulator, the Habitat simulator) supplies only its own
part, as a :class:`FrontEnd`: what it selects (and so the run's :class:`RunIdentity`), the recipe
of its workers, the result keys of its work, the units of what the store lacks, how a returned
chunk is taken in, and how its results become rows. :func:`drive` does the rest, the same for
all of them and for every executor: the reuse check (``--force``), the executor's lifetime, the
result store (lookups, persisting every chunk the moment it arrives, resuming), progress, the run
id (from the identity) and the run folder (:func:`framebench.run_folder.write_run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from framebench.errors import Interrupted, UserError
from framebench.executors.base import Chunk, Entry, Executor, Recipe, Unit, WorkerMeta

if TYPE_CHECKING:
    from framebench.run_folder import RunIdentity
    from framebench.store import ResultStore

# the store's values of some result keys (those it lacks left out): what a front end may read of
# the result store, which stays the driver's
Lookup = Callable[[Sequence[str]], dict[str, Any]]


@dataclass(frozen=True)
class Execution:
    """How a run executes, the same for every front end: where (``executor``: local or ray, the
    cluster's address, its worker count), whether progress is shown, and whether it may replace
    another run in its folder (``force``)."""

    executor: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    progress: bool = True
    force: bool = False
    local_resources: Mapping[str, float] = field(default_factory=dict)  # custom resources of a local Ray


@dataclass(frozen=True)
class Selected:
    """What a front end selected: the run's identity, and the warnings about the selection that
    are shown once the driver has let the run go ahead (a refused run shows only why)."""

    identity: RunIdentity
    warnings: tuple[str, ...] = ()


@dataclass
class UnitPlan:
    """The units a front end planned against the store, and how their progress is shown."""

    units: list[Unit]
    label: str  # the progress line's description
    total: int  # records (or variants) of the whole run
    served: int = 0  # of those, already in the store (shown as done, not part of the rate)
    unit: str = "items"
    fields: dict[str, Any] = field(default_factory=dict)  # extra progress counters
    # results the front end found outside the store (a folder written before the store held
    # them): the driver stores them before anything runs
    adopted: list[Entry] = field(default_factory=list)
    remaining: Callable[[Unit], Unit | None] | None = None  # a unit's unstored rest (retries)
    files: Path | None = None  # where chunks' side files go (default: the run folder)
    progress: bool = True  # False: this front end shows no progress line (its workers print)


@dataclass
class Rows:
    """What a front end's results become: the records, the prompts as sent, run.json's
    ``decoding``, the front end's own run.json fields and side files (name -> JSON value)."""

    rows: list[dict[str, Any]]
    prompts: Iterable[tuple[Any, ...]]
    decoding: Mapping[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)


@dataclass
class Finished:
    """What a run did, from what the driver holds in memory: the run folder, its run id, the
    rows it wrote, how many came from the store, and how long it took."""

    out: Path
    run_id: str
    rows: list[dict[str, Any]]
    n_from_store: int
    seconds: float
    extra: Mapping[str, Any] = field(default_factory=dict)  # the front end's run.json fields

    @property
    def n_new(self) -> int:
        return len(self.rows) - self.n_from_store


class FrontEnd(Protocol):
    """What a front end supplies to :func:`drive`."""

    out: Path  # the run folder (its result store lives there)
    producer: str  # run.json ``producer``
    simulator: str  # run.json ``simulator`` ("" for text runs)

    def select(self) -> Selected:
        """Read and check the inputs, before any executor starts or model loads."""

    def recipe(self) -> Recipe:
        """How the executor builds this front end's workers."""

    def keys(self, meta: WorkerMeta) -> list[str]:
        """The result keys of the whole run, keyed with the first worker's ``meta``."""

    def plan(self, meta: WorkerMeta, stored: Mapping[str, Any], lookup: Lookup, workers: int) -> UnitPlan:
        """Units for the work ``stored`` (the store's values of :meth:`keys`) lacks, for
        ``workers`` workers (``lookup``: the store's values of other keys, results that are not
        records)."""

    def take(self, chunk: Chunk) -> tuple[int, dict[str, Any]]:
        """A stored chunk's results taken in: (records it finished, progress fields)."""

    def rows(self, meta: WorkerMeta, run_id: str, results: Mapping[str, Any]) -> Rows:
        """The results (store key -> value, the whole run's) as records."""

    def close(self) -> None:
        """Release what ``select`` opened (called however the run ends)."""


def write_side_file(out: Path, relative: str, content: Any) -> Path:
    """Write a worker's side output (bytes, or a JSON value) at ``out/relative``, atomically; a
    path that would leave the run folder is refused."""
    from framebench.files import write_json_atomic, write_text_atomic

    path = (out / relative).resolve()
    if out.resolve() not in path.parents:
        raise UserError(f"{out}: a worker's file {relative!r} would leave the run folder")
    if isinstance(content, bytes):
        return write_text_atomic(content, path)
    return write_json_atomic(content, out / relative)


def persist(executor: Executor, units: Sequence[Unit], store: ResultStore, out: Path,
            on_chunk: Callable[[Chunk], None],
            remaining: Callable[[Unit], Unit | None] | None = None) -> dict[str, Any]:
    """Execute ``units``; store each chunk's results (one transaction) and write its side files
    the moment it arrives, then hand it to ``on_chunk`` (progress, the front end's bookkeeping).
    Returns what the driver's side cost: chunks, results and seconds spent persisting them."""
    totals: dict[str, Any] = {"chunks": 0, "results": 0, "seconds": 0.0}
    for chunk in executor.execute(units, remaining):
        t0 = time.perf_counter()
        if chunk.entries:
            store.put_many(chunk.entries)
        for relative, content in chunk.files.items():
            write_side_file(out, relative, content)
        on_chunk(chunk)
        totals["chunks"] += 1
        totals["results"] += len(chunk.entries)
        totals["seconds"] += time.perf_counter() - t0
    totals["seconds"] = round(totals["seconds"], 4)
    return totals


def drive(front: FrontEnd, execution: Execution = Execution()) -> Finished:
    """Run ``front`` end to end; a re-run with the same inputs resumes: units are planned only for
    what the store lacks. A folder holding another run is refused unless ``execution.force``."""
    from framebench.console import ProgressReporter, warn
    from framebench.executors import make_executor
    from framebench.run_folder import check_reuse, now_iso
    from framebench.store import ResultStore

    started, t0 = now_iso(), time.perf_counter()
    try:
        selected = front.select()
        identity = selected.identity
        check_reuse(front.out, identity, execution.force)  # before any model is loaded
        for line in selected.warnings:
            warn(line)
        recipe = front.recipe()
        options = {"local_resources": dict(execution.local_resources)} if execution.local_resources else {}
        pool = make_executor(execution.executor, execution.ray_address, execution.workers, **options)
        try:
            meta = pool.start(recipe)  # loads the model (here, or on the first Ray worker)
            front.out.mkdir(parents=True, exist_ok=True)
            with ResultStore(front.out) as store:
                keys = front.keys(meta)
                results = store.get_many(keys)
                served = len(results)
                plan = front.plan(meta, results, store.get_many, pool.describe()["workers"])
                if plan.adopted:
                    store.put_many(plan.adopted)
                    results.update((key, value) for key, _, value in plan.adopted)
                reporter = ProgressReporter(plan.label, plan.total, completed=plan.served, unit=plan.unit,
                                            enabled=execution.progress and plan.progress, fields=plan.fields)

                def on_chunk(chunk: Chunk) -> None:
                    results.update((key, value) for key, _, value in chunk.entries)
                    done, fields = front.take(chunk)
                    reporter.advance(done, **fields)

                try:
                    with reporter:
                        persisted = persist(pool, plan.units, store, plan.files or front.out, on_chunk,
                                            plan.remaining)
                except Interrupted:
                    raise Interrupted(reporter.completed, plan.total, str(front.out)) from None
        finally:
            pool.close()
    finally:
        front.close()
    return finalize(front, identity, meta, results, served, pool.describe(), persisted, started, t0)


def finalize(front: FrontEnd, identity: RunIdentity, meta: WorkerMeta, results: Mapping[str, Any],
             served: int, executor: Mapping[str, Any], persisted: Mapping[str, Any], started: str,
             t0: float) -> Finished:
    """The run id (from the identity), the rows, and the run folder written once, at the end."""
    from framebench.run_folder import RunJson, write_run

    run_id = identity.run_id(meta.spec, meta.fingerprint, meta.settings)
    made = front.rows(meta, run_id, results)
    seconds = time.perf_counter() - t0
    extra = {**made.extra, "executor": dict(executor), "persist": dict(persisted)}
    write_run(front.out, made.rows, made.prompts, RunJson(
        run_id=run_id, model=meta.spec, model_fingerprint=meta.fingerprint, decoding=made.decoding,
        dataset_hash=identity.dataset_hash, started=started, producer=front.producer,
        simulator=front.simulator, model_info=meta.info, identity=identity.as_json(), extra=extra),
        made.files)
    return Finished(front.out, run_id, made.rows, min(served, len(made.rows)), seconds, made.extra)
