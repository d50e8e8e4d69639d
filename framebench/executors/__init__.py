"""Where a run's units execute: ``local`` (this process, the default) or ``ray`` (a Ray cluster).

An executor does one thing (``base.Executor``): units in, result chunks out as they finish. The
run's driver (``framebench.pipeline``) plans the units, stores every chunk the moment it arrives
and writes the run folder; workers receive what a unit needs (its jobs, its episodes, its batch of
a framed episode file) and return their results through the executor, never through a
filesystem, so a Ray cluster needs no storage its nodes share. A worker killed mid-unit loses only
what it had not yet returned: the driver re-plans the unit's unstored rest onto a fresh worker. A
killed driver resumes from its own store when re-run.

``resources`` turns an engine's declared device (``framebench.registry.Engine.device``) into a
worker's resource request, ``packing`` sizes units of cheap atoms, ``cluster`` connects to Ray.
"""

from __future__ import annotations

from typing import Any

from framebench.errors import UserError
from framebench.executors.base import Chunk, Entry, Executor, Recipe, Unit, Worker, streamed

# What a front end's workers and planning use (public API): units in, chunks out, recipes that
# build workers anywhere, and ``streamed`` (a worker's callback-reported results as a generator).
__all__ = ["EXECUTORS", "Chunk", "Entry", "Executor", "Recipe", "Unit", "Worker", "check_executor",
           "make_executor", "streamed"]

EXECUTORS = ("local", "ray")


def check_executor(name: str) -> str:
    if name not in EXECUTORS:
        raise UserError(f"--executor: expected local or ray, got {name!r}")
    return name


def make_executor(name: str = "local", ray_address: str | None = None, workers: int | None = None,
                  **ray_options: Any) -> Any:
    """The executor ``name`` (``--executor``); Ray options: ``gpus_per_worker``,
    ``local_resources`` (custom resources of a local instance)."""
    local_resources = ray_options.pop("local_resources", None)
    if check_executor(name) == "ray":
        from framebench.executors.cluster import require_ray
        from framebench.executors.ray_pool import RayExecutor

        require_ray(ray_address)
        return RayExecutor(ray_address, workers, local_resources=local_resources, **ray_options)
    from framebench.executors.local import LocalExecutor

    return LocalExecutor()
