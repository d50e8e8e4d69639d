"""The driver loop: units of work over a pool of Ray worker actors, with retries and progress.

Each worker is an actor holding what is expensive to set up (a loaded model, a planner, the parsed
items) and exposing ``run_unit(index) -> UnitResult``. The driver keeps every worker busy with one
unit at a time; when a worker dies (killed, out of memory, node lost) its unit goes back to the
front of the queue and a fresh worker takes its place. A unit fails the run only after
``max_attempts`` worker deaths, or at once when the unit itself raises (a user error, a bug).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError

MAX_ATTEMPTS = 4


@dataclass
class UnitResult:
    items: int  # items (records) the unit covers
    generated: int  # of those, produced now (the rest were served from the store or a shard)
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. the model's spec and fingerprint
    seconds: float = 0.0  # time spent inside the unit on the worker
    setup_seconds: float = 0.0  # of that, the worker's one-time setup (imports, model load), if it ran now


@dataclass
class PoolStats:
    units: int = 0
    items: int = 0
    generated: int = 0
    worker_deaths: int = 0
    retried_units: int = 0
    seconds: float = 0.0  # driver wall time from the first worker request to the last unit
    unit_seconds: float = 0.0  # sum of the units' own times on their workers
    setup_seconds: float = 0.0  # of that, the workers' one-time setups
    meta: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"units": self.units, "items": self.items, "generated": self.generated,
                "worker_deaths": self.worker_deaths, "retried_units": self.retried_units,
                "seconds": round(self.seconds, 3), "unit_seconds": round(self.unit_seconds, 3),
                "setup_seconds": round(self.setup_seconds, 3)}


def _cause(exc: BaseException) -> BaseException:
    return getattr(exc, "cause", None) or exc


def run_units(ray: Any, make_worker: Callable[[], Any], n_workers: int, unit_sizes: Sequence[int], *,
              label: str = "units", progress: bool = True, max_attempts: int = MAX_ATTEMPTS,
              resuming: bool = True, payload: Callable[[int], Any] | None = None) -> PoolStats:
    """Run units ``0..len(unit_sizes)-1`` (``unit_sizes[i]`` items each, for progress) on
    ``n_workers`` actors from ``make_worker``; return totals. Bounded: every loop turn finishes a
    unit or records a worker death, and deaths per unit are capped.

    Workers are called ``run_unit(index, look_elsewhere)``: ``look_elsewhere`` is False only for a
    unit's first attempt in a run that started with nothing stored (``resuming=False``), when no
    other shard can hold its results and the worker may skip reading them. ``payload(index)``, when
    given, is passed as a third argument (what the worker needs of the unit, e.g. its items)."""
    from ray.exceptions import (
        ActorDiedError,
        ActorUnavailableError,
        RayActorError,
        RayTaskError,
        WorkerCrashedError,
    )

    lost = (RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError)
    stats, t0 = PoolStats(), time.perf_counter()
    queue = deque(range(len(unit_sizes)))
    attempts = [0] * len(unit_sizes)
    idle = [make_worker() for _ in range(max(1, min(n_workers, len(unit_sizes))))]
    running: dict[Any, tuple[Any, int]] = {}
    from framebench.console import ProgressReporter

    bar = ProgressReporter(label, sum(unit_sizes), enabled=progress,
                           fields={"units": f"0/{len(unit_sizes)}", "workers": len(idle)})
    bar.__enter__()
    try:
        while queue or running:
            while idle and queue:
                worker, unit = idle.pop(), queue.popleft()
                attempts[unit] += 1
                args = (unit, resuming or attempts[unit] > 1) + ((payload(unit),) if payload else ())
                running[worker.run_unit.remote(*args)] = (worker, unit)
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                worker, unit = running.pop(ref)
                try:
                    result: UnitResult = ray.get(ref)
                except lost:
                    stats.worker_deaths += 1
                    if attempts[unit] >= max_attempts:
                        raise RuntimeError(f"unit {unit}: its worker died {attempts[unit]} times; giving up") from None
                    stats.retried_units += 1
                    bar.update(**{"worker deaths": stats.worker_deaths})
                    queue.appendleft(unit)
                    ray.kill(worker, no_restart=True)
                    idle.append(make_worker())
                    continue
                except RayTaskError as exc:
                    cause = _cause(exc)
                    if isinstance(cause, UserError):
                        raise UserError(str(cause)) from None
                    raise
                if result.items != unit_sizes[unit]:
                    raise RuntimeError(f"unit {unit}: the worker covered {result.items} items, expected "
                                       f"{unit_sizes[unit]}")
                idle.append(worker)
                stats.units += 1
                stats.items += result.items
                stats.generated += result.generated
                stats.unit_seconds += result.seconds
                stats.setup_seconds += result.setup_seconds
                stats.meta = stats.meta or dict(result.meta)
                # items the store already held count as served, not toward the rate (as locally)
                bar.advance(result.generated, units=f"{stats.units}/{len(unit_sizes)}")
                bar.skip(result.items - result.generated)
    finally:
        bar.__exit__(None, None, None)
        for worker, _ in running.values():
            ray.kill(worker, no_restart=True)
        for worker in idle:
            ray.kill(worker, no_restart=True)
    stats.seconds = time.perf_counter() - t0
    return stats


def worker_options(num_cpus: float = 1, num_gpus: float = 0,
                   resources: dict[str, float] | None = None) -> dict[str, Any]:
    """Actor options for one worker: its resource request and no automatic restarts (the driver
    replaces dead workers itself, so a unit is never run twice at once)."""
    options: dict[str, Any] = {"num_cpus": num_cpus, "max_restarts": 0, "max_task_retries": 0}
    if num_gpus:
        options["num_gpus"] = num_gpus
    if resources:
        options["resources"] = dict(resources)
    return options


GPU_KINDS = ("hf", "vllm", "smollm2")  # engines that run a local model (one GPU per worker)


def actor_resources(ray: Any, spec: str | None, gpus_per_worker: float | None) -> dict[str, Any]:
    """``num_gpus`` for workers of a local model engine when the cluster has GPUs, else one CPU
    each (``spec``: the model or planner spec; None = the embedded default)."""
    kind = (spec or "smollm2").partition(":")[0]
    if gpus_per_worker is None:
        has_gpus = ray.cluster_resources().get("GPU", 0) > 0
        gpus_per_worker = 1.0 if kind in GPU_KINDS and has_gpus else 0.0
    return worker_options(num_cpus=1, num_gpus=gpus_per_worker)


def count_workers(ray: Any, options: dict[str, Any], requested: int | None) -> int:
    if requested:
        return requested
    total = ray.cluster_resources()
    if options.get("num_gpus"):
        return max(1, int(total.get("GPU", 0) // options["num_gpus"]))
    return max(1, int(total.get("CPU", 1) // options["num_cpus"]))


def record_executor(out: Path, executor: dict[str, Any], n_generated: int | None = None) -> None:
    """Add how the run executed to its run.json (the records do not depend on it); with
    ``n_generated`` also the run's generated / from-store counts."""
    from framebench.runinfo import RUN_FILE, update_run_info

    info = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
    fields: dict[str, Any] = {"executor": executor}
    if n_generated is not None:
        fields.update(n_generated=n_generated, n_from_store=info["n_records"] - n_generated)
    update_run_info(out, **fields)
