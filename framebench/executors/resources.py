"""A worker's resource request from its engine's declaration (``Engine.device``), never its name.

``gpu``: one GPU per worker where the cluster has GPUs, else one CPU; ``cpu``: one CPU;
``remote`` (the work happens behind an API): a quarter CPU, so four clients share a core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REMOTE_CPUS = 0.25


def engine_device(spec: str | None, kinds: tuple[str, ...] = ("model",)) -> str:
    """The device the engine behind ``spec`` declares (the first of ``kinds`` that knows it;
    None = the embedded default model)."""
    from framebench.backends import DEFAULT_MODEL
    from framebench.registry import engine_for, engines_of

    spec = spec or DEFAULT_MODEL
    name = spec.partition(":")[0]
    for kind in kinds[:-1]:
        engine = engines_of(kind).get(name)
        if engine is not None:
            return engine.device
    return engine_for(spec, kinds[-1]).device


def travelling_options(spec: str | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """The model options a worker on another node receives (``Option.travels``)."""
    from framebench.backends import DEFAULT_MODEL
    from framebench.registry import engine_for

    engine = engine_for(spec or DEFAULT_MODEL, "model")
    return {k: v for k, v in options.items() if (o := engine.option(k)) is None or o.travels}


def worker_options(device: str, cluster: Mapping[str, float], gpus_per_worker: float | None = None,
                   resources: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Ray actor options for one worker of a ``device`` engine on a cluster with ``cluster``
    resources; no automatic restarts (the driver replaces dead workers and re-plans their units)."""
    if gpus_per_worker is None:
        gpus_per_worker = 1.0 if device == "gpu" and cluster.get("GPU", 0) > 0 else 0.0
    options: dict[str, Any] = {"num_cpus": REMOTE_CPUS if device == "remote" else 1,
                               "max_restarts": 0, "max_task_retries": 0}
    if gpus_per_worker:
        options["num_gpus"] = gpus_per_worker
    if resources:
        options["resources"] = dict(resources)
    return options


def count_workers(options: Mapping[str, Any], cluster: Mapping[str, float], requested: int | None) -> int:
    """``requested``, else as many workers as the cluster's resources hold at once."""
    if requested:
        return requested
    limits = [cluster.get("CPU", 1) / options["num_cpus"]]
    if options.get("num_gpus"):
        limits.append(cluster.get("GPU", 0) / options["num_gpus"])
    for name, amount in (options.get("resources") or {}).items():
        limits.append(cluster.get(name, 0) / amount)
    return max(1, int(min(limits) + 1e-9))
