"""The one driver of every run: select -> plan units -> execute -> persist -> finalize.

A front end (the text run, the symbolic simulator, the Habitat simulator) supplies only its own
part, as a :class:`FrontEnd`: what it selects, the recipe of its workers, the units it plans
against the run's result store (what the store already holds is served, not planned), how a
returned chunk becomes its results, and how its results become the run folder. :func:`drive`
does the rest, the same for all of them and for every executor: the executor's lifetime, the
store, progress, persisting every chunk the moment it arrives, and resuming from the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from framebench.errors import Interrupted
from framebench.executors.base import Chunk, Executor, Recipe, Unit


@dataclass
class Plan:
    """The units a front end planned against the store, and how their progress is shown."""

    units: list[Unit]
    label: str  # the progress line's description
    total: int  # records (or variants) of the whole run
    served: int = 0  # of those, already in the store (shown as done, not part of the rate)
    unit: str = "items"
    fields: dict[str, Any] = field(default_factory=dict)  # extra progress counters
    remaining: Callable[[Unit], Unit | None] | None = None  # a unit's unstored rest (retries)
    files: Path | None = None  # where chunks' side files go (default: the run folder)
    progress: bool = True  # False: this front end shows no progress line (its workers print)


class FrontEnd(Protocol):
    """What a front end supplies to :func:`drive`."""

    out: Path  # the run folder (its result store lives there)

    def select(self) -> None:
        """Read and check the inputs, before any executor starts or model loads."""

    def recipe(self) -> Recipe:
        """How the executor builds this front end's workers."""

    def plan(self, meta: Mapping[str, Any], store: Any, workers: int) -> Plan:
        """Key the work with the first worker's ``meta``, serve the store, plan the rest (for
        ``workers`` workers)."""

    def take(self, chunk: Chunk) -> tuple[int, dict[str, Any]]:
        """A stored chunk's results taken in: (records it finished, progress fields)."""

    def finish(self, meta: Mapping[str, Any], executor: Executor, persisted: Mapping[str, Any]) -> Any:
        """Results -> records -> the run folder (``framebench.pipeline.finalize``); the summary."""

    def close(self) -> None:
        """Release what ``select`` opened (called however the run ends)."""


def drive(front: FrontEnd, *, executor: str = "local", ray_address: str | None = None,
          workers: int | None = None, progress: bool = True, **executor_options: Any) -> Any:
    """Run ``front`` end to end on the executor ``executor``; returns what its ``finish`` returns.
    A re-run with the same inputs resumes: units are planned only for what the store lacks."""
    from framebench.console import ProgressReporter
    from framebench.executors import make_executor
    from framebench.pipeline import persist
    from framebench.store import ResultStore

    try:
        front.select()
        recipe = front.recipe()
        pool = make_executor(executor, ray_address, workers, **executor_options)
        try:
            meta = pool.start(recipe)  # loads the model (here, or on the first Ray worker)
            front.out.mkdir(parents=True, exist_ok=True)
            with ResultStore(front.out) as store:
                plan = front.plan(meta, store, pool.describe()["workers"])
                reporter = ProgressReporter(plan.label, plan.total, completed=plan.served, unit=plan.unit,
                                            enabled=progress and plan.progress, fields=plan.fields)

                def on_chunk(chunk: Chunk) -> None:
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
    return front.finish(meta, pool, persisted)
