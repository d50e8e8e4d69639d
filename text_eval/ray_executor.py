"""``framebench text --executor ray``: units are backend calls of whole contexts (a context's
variants stay together, so the HF backend still computes their shared prefix once).

The units are exactly the calls a local run makes (per decoding, whole contexts packed to about
``CALL_SIZE`` jobs), so every worker sends the backend the same prompts in the same batches as the
local run would, and the outputs match. The driver then writes the run folder with the local
runner itself, served entirely from the merged store by a :class:`StoredOutputs` backend.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from framebench.executors.scheduler import (
    UnitResult,
    actor_resources,
    count_workers,
    record_executor,
    run_units,
)
from framebench.executors.shards import ShardedStore, has_results, merge_shards, remove_shards


def plan_units(data: Path, tasks: Any, formats: Any, limit: int | None, conditions: Any,
               answer: str = "generate") -> list[list[Any]]:
    """The jobs of a run, grouped into units (the local runner's calls, in its order)."""
    from framebench.items import ITEMS_FILE, read_items
    from text_eval.runner import _calls, _split, build_jobs, select_items

    items_path = data / ITEMS_FILE if data.is_dir() else data
    items = select_items(read_items(items_path), tasks, formats, limit)
    jobs = build_jobs(items, _split(conditions) or ["M0"], items_path, answer)
    by_decoding: dict[Any, list[Any]] = {}
    for job in jobs:
        by_decoding.setdefault(job.decoding, []).append(job)
    return [call for group in by_decoding.values() for call in _calls(group)]


def backend_options(model: str | None, batch_size: Any, concurrency: int, base_url: str | None) -> dict[str, Any]:
    kind = (model or "smollm2").partition(":")[0]
    options: dict[str, Any] = {}
    if kind in ("hf", "smollm2"):
        options["batch_size"] = batch_size
    elif kind == "openai":
        options["concurrency"] = concurrency
        if base_url:
            options["base_url"] = base_url
    return options


class TextWorker:
    """One worker: loads the model once, then runs units, writing results to its own shard.

    A unit arrives as its items and record ids; the worker renders just those jobs (the same
    ``build_jobs`` as the local runner) and keys them with its model's fingerprint."""

    def __init__(self, model: str | None, options: dict[str, Any], out: str, plan: dict[str, Any]):
        self.model, self.options, self.out, self.plan = model, options, Path(out), plan
        self.backend: Any = None
        self.store: ShardedStore | None = None

    def _setup(self) -> None:
        from framebench.backends import load_backend

        self.backend = load_backend(self.model, **self.options)
        self.fingerprint = self.backend.fingerprint()
        self.store = ShardedStore(self.out, f"{os.getpid()}-{os.urandom(4).hex()}")

    def _jobs(self, record_ids: list[str], items: list[dict[str, Any]]) -> list[Any]:
        from text_eval.runner import _split, build_jobs, job_key

        built = {j.record_id: j for j in build_jobs(items, _split(self.plan["conditions"]) or ["M0"],
                                                    Path(self.plan["data"]), self.plan["answer"])}
        jobs = [built[r] for r in record_ids]
        for job in jobs:
            job.key = job_key(self.fingerprint, job)
        return jobs

    def run_unit(self, index: int, look_elsewhere: bool,
                 unit: tuple[list[str], list[dict[str, Any]]]) -> UnitResult:
        t0 = time.perf_counter()
        if self.backend is None:
            self._setup()
        from text_eval.runner import (  # the first unit pays this import as setup
            _generate_pending,
            _score_pending,
        )

        setup = time.perf_counter() - t0
        assert self.store is not None
        self.store.look_elsewhere = look_elsewhere
        jobs = self._jobs(*unit)
        found = self.store.get_many(j.key for j in jobs)
        pending = [j for j in jobs if j.key not in found]
        if pending and self.plan["answer"] == "constrained":
            _score_pending(self.backend, pending, self.store, lambda done: None, self.fingerprint,
                           [Path(p) for p in self.plan["reasoning_from"]])
        elif pending:
            _generate_pending(self.backend, pending, self.store, lambda done: None)
        meta = {"spec": self.backend.spec, "fingerprint": self.fingerprint,
                "info": getattr(self.backend, "info", dict)()}
        return UnitResult(len(jobs), len(pending), meta, time.perf_counter() - t0, setup)


def unit_payload(unit: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """What a worker needs of a unit: its record ids, in order, and their distinct items."""
    items: dict[str, dict[str, Any]] = {}
    for job in unit:
        items.setdefault(job.item["item_id"], job.item)
    return [j.record_id for j in unit], list(items.values())


class StoredOutputs:
    """A backend that only serves the store: the driver's stand-in for the workers' model."""

    def __init__(self, spec: str, fingerprint: str, info: dict[str, Any]):
        self.spec, self._fingerprint, self._info = spec, fingerprint, info

    def fingerprint(self) -> str:
        return self._fingerprint

    def info(self) -> dict[str, Any]:
        return self._info

    def generate(self, chats: list[Any], decoding: Any, **_: Any) -> list[str]:
        raise RuntimeError(f"{len(chats)} outputs missing from the merged store after every unit finished")

    def answer_probabilities(self, chats: list[Any], choices: Any, **_: Any) -> list[dict[str, float]]:
        raise RuntimeError(f"{len(chats)} answers missing from the merged store after every unit finished")


def run_text_ray(model: str | None, data: Path, out: Path, *, tasks: Any = None, formats: Any = None,
                 limit: int | None = None, batch_size: Any = "auto", concurrency: int = 8,
                 conditions: Any = None, progress: bool = True, base_url: str | None = None,
                 ray_address: str | None = None, workers: int | None = None,
                 gpus_per_worker: float | None = None, force: bool = False, answer: str = "generate",
                 reasoning_from: Any = ()):
    """Run ``framebench text`` on Ray; returns the local runner's summary of the merged run."""
    from framebench.executors.cluster import ray_session, require_ray
    from framebench.items import ITEMS_FILE
    from text_eval.runner import run_text

    require_ray(ray_address)
    t0 = time.perf_counter()
    data, out = Path(data), Path(out)
    units = plan_units(data, tasks, formats, limit, conditions, answer)  # validates the selection first
    if not units:
        from framebench.errors import UserError

        items_path = data / ITEMS_FILE if data.is_dir() else data
        raise UserError(f"{items_path}: no items match the selection (tasks={tasks}, formats={formats})")
    out.mkdir(parents=True, exist_ok=True)
    plan = {"data": str(data.resolve()), "tasks": tasks, "formats": formats, "limit": limit,
            "conditions": conditions, "answer": answer,
            "reasoning_from": [str(Path(p).resolve()) for p in reasoning_from]}
    options = backend_options(model, batch_size, concurrency, base_url)
    resuming = has_results(out)
    with ray_session(ray_address, num_cpus=workers) as ray:
        actor_opts = actor_resources(ray, model, gpus_per_worker)
        n_workers = count_workers(ray, actor_opts, workers)
        worker_cls = ray.remote(**actor_opts)(TextWorker)
        stats = run_units(ray, lambda: worker_cls.remote(model, options, str(out.resolve()), plan), n_workers,
                          [len(u) for u in units], label=f"{model or 'smollm2'} on ray", progress=progress,
                          resuming=resuming, payload=lambda i: unit_payload(units[i]))
    merge_shards(out)
    meta = stats.meta
    summary = run_text(model, data, out, tasks=tasks, formats=formats, limit=limit, conditions=conditions,
                       progress=False, backend=StoredOutputs(meta["spec"], meta["fingerprint"], meta["info"]),
                       force=force, answer=answer, reasoning_from=reasoning_from)
    executor = {"name": "ray", "workers": n_workers, "address": ray_address or "local", **stats.as_dict()}
    record_executor(out, executor, n_generated=stats.generated)
    remove_shards(out)
    summary.n_generated, summary.n_from_store = stats.generated, summary.n_records - stats.generated
    summary.seconds = time.perf_counter() - t0
    return summary
