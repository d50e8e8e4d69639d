"""What an executor is: units in, result chunks out as they finish.

A run's driver (``framebench.pipeline``) plans :class:`Unit` s and hands them, with a
:class:`Recipe` for the workers, to an :class:`Executor`. A worker (built from the recipe where it
runs: in this process, or in a Ray actor on any node) turns a unit into :class:`Chunk` s, one per
finished piece of work (a backend call's batch, an episode, a PARTNR batch), and the executor
yields them to the driver in the order they arrive. The driver alone stores them and writes the
run folder: an executor never sees a path of the run, the data or the checkout.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Entry = tuple[str, str, Mapping[str, Any]]  # (result-store key, item id, value)


@dataclass
class Unit:
    """One piece of a run a worker does in one go."""

    index: int
    size: int  # the records it covers (progress; a finished unit has reported this many)
    payload: Any  # what its worker needs: jobs, episodes, batch indices (picklable for Ray)


@dataclass
class Chunk:
    """Results a worker finished, to be stored the moment they arrive.

    ``files`` are side outputs the driver writes into the run folder (episode logs, PARTNR
    outputs): a relative path to a JSON value (written as ``write_json_atomic`` writes) or bytes."""

    unit: int
    entries: list[Entry] = field(default_factory=list)
    done: int = 0  # records of the unit this chunk finishes
    files: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # extra progress counters (planner decisions)
    info: dict[str, Any] = field(default_factory=dict)  # for the front end's bookkeeping, not stored
    node: str = ""  # the Ray node that made it ("" locally)
    seconds: float = 0.0  # worker time spent on this chunk
    setup_seconds: float = 0.0  # of that, the worker's one-time setup (imports, model load)


@dataclass(frozen=True)
class WorkerMeta:
    """What the first worker reports before the driver plans (it loads the model to know it)."""

    spec: str  # the model or planner spec, as it names itself
    fingerprint: str  # what keys its results (``framebench.backends.model_fingerprint``)
    info: Mapping[str, Any] = field(default_factory=dict)  # run.json ``model_info``
    settings: Mapping[str, Any] = field(default_factory=dict)  # besides the fingerprint, what keys a result
    call_size: int | None = None  # text workers: jobs per backend call (None: the pipeline's default)
    uses_cap: bool = False  # planners: held to the replan cap


class Worker(Protocol):
    def meta(self) -> WorkerMeta:
        """What the driver needs before planning (model spec, fingerprint, info); loads the model."""

    def run(self, unit: Unit) -> Iterator[Chunk]:
        """The unit's results, chunk by chunk, as they finish."""


@dataclass(frozen=True)
class Recipe:
    """How to build the workers, anywhere: ``build(*args)`` returns a :class:`Worker`.

    ``device`` comes from the engine's declaration (``framebench.registry.DEVICES``), ``resources``
    are custom Ray resources a worker needs (``{"habitat": 1}``), ``env`` settings it must see."""

    build: Callable[..., Worker]
    args: tuple[Any, ...] = ()
    device: str = "cpu"
    resources: Mapping[str, float] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    label: str = "units"


class Executor(Protocol):
    """Runs units on workers built from a recipe; yields their chunks as they finish."""

    name: str

    def start(self, recipe: Recipe) -> WorkerMeta:
        """Build (at least) one worker; return its :meth:`Worker.meta`."""

    def execute(self, units: Sequence[Unit],
                remaining: Callable[[Unit], Unit | None] | None = None) -> Iterator[Chunk]:
        """Every chunk of every unit, in arrival order; each unit reports ``unit.size`` done.
        When a worker dies mid-unit, ``remaining(unit)`` is what is left of it after the chunks
        the driver stored (None: nothing), which goes to a fresh worker."""

    def describe(self) -> dict[str, Any]:
        """How it ran (run.json ``executor``): name, workers, units, deaths, retries, timings."""

    def close(self) -> None:
        """Release the workers (and a Ray instance started for the run)."""


@dataclass
class Stats:
    """Totals an executor keeps for :meth:`Executor.describe`."""

    units: int = 0
    worker_deaths: int = 0
    retried_units: int = 0
    unit_seconds: float = 0.0
    setup_seconds: float = 0.0
    chunks: int = 0
    nodes: set[str] = field(default_factory=set)
    seconds: float = 0.0  # wall time of execute() (the pool's part of the run)

    def add(self, chunk: Chunk) -> None:
        self.unit_seconds += chunk.seconds
        self.setup_seconds += chunk.setup_seconds
        self.chunks += 1
        if chunk.node:
            self.nodes.add(chunk.node)

    def as_dict(self) -> dict[str, Any]:
        return {"units": self.units, "chunks": self.chunks, "seconds": round(self.seconds, 3), "worker_deaths": self.worker_deaths,
                "retried_units": self.retried_units, "unit_seconds": round(self.unit_seconds, 3),
                "setup_seconds": round(self.setup_seconds, 3), "nodes": len(self.nodes)}


def timed(chunks: Iterator[Chunk], setup_seconds: float = 0.0) -> Iterator[Chunk]:
    """The chunks with the worker time each took (the first also carries the setup it paid)."""
    import time

    last = time.perf_counter()
    for chunk in chunks:
        now = time.perf_counter()
        chunk.seconds, chunk.setup_seconds = now - last + setup_seconds, setup_seconds
        last, setup_seconds = now, 0.0
        yield chunk


_END = object()


def streamed(work: Callable[[Callable[[Any], None]], None]) -> Iterator[Any]:
    """What ``work(emit)`` emits, yielded as it is emitted: ``work`` runs in a thread, so a
    backend that reports its batches through a callback (``on_batch``) streams them, one chunk
    per batch. An exception in ``work`` is raised here, after what it emitted before."""
    box: queue.Queue = queue.Queue()

    def target() -> None:
        try:
            work(box.put)
        except BaseException as exc:  # handed to the consumer, re-raised there
            box.put((_END, exc))
        else:
            box.put((_END, None))

    threading.Thread(target=target, daemon=True, name="framebench-unit").start()
    while True:
        value = box.get()
        if isinstance(value, tuple) and len(value) == 2 and value[0] is _END:
            if value[1] is not None:
                raise value[1]
            return
        yield value
