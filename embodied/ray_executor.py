"""``framebench embodied --executor ray``: units of whole episodes, all 7 framings on one worker.

A unit is a contiguous range of whole episodes, sized by :mod:`framebench.executors.packing`: cheap
planners (``oracle``, ``script:``, about 12 ms an episode) get several episodes per unit, so each
unit is about 0.1 s of work; model planners stay one episode per unit. The driver reads the
episode file once and hands the parsed episodes to every worker through Ray's object store.
Workers run :func:`embodied.runner.run_episode` (the local runner's per-episode step) against their
own shard, committing each episode's 7 results in one transaction, and write the per-variant logs
into the shared run folder; the driver then merges the shards and writes the run folder with the
local runner, served from the store by a :class:`StoredPlanner`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from framebench.executors.packing import pack, pack_size
from framebench.executors.scheduler import (
    UnitResult,
    actor_resources,
    count_workers,
    record_executor,
    run_units,
)
from framebench.executors.shards import ShardedStore, has_results, merge_shards, remove_shards

# Work per episode (7 variants in the symbolic simulator, one CPU) of the planners known to be
# cheap, measured with bench/scale_bench.py; any other planner runs one episode per unit.
EPISODE_SECONDS = {"oracle": 0.012, "script": 0.012}


class EmbodiedWorker:
    """One worker: loads the planner once, then runs units (ranges of the driver's episodes)."""

    def __init__(self, planner: str, max_new_tokens: int, episodes: list[dict[str, Any]], out: str,
                 replan_cap: int, partnr_compat: bool):
        self.args = (planner, max_new_tokens, Path(out), replan_cap, partnr_compat)
        self.episodes = episodes
        self.planner: Any = None

    def _setup(self) -> None:
        from embodied.planners import load_planner
        from embodied.runner import run_settings

        spec, max_new_tokens, out, replan_cap, partnr_compat = self.args
        self.planner = load_planner(spec, max_new_tokens=max_new_tokens)
        self.settings = run_settings(self.planner, replan_cap, partnr_compat)
        self.store = ShardedStore(out, f"{os.getpid()}-{os.urandom(4).hex()}")

    def run_unit(self, index: int, look_elsewhere: bool = True, bounds: tuple[int, int] = (0, 0)) -> UnitResult:
        """Run episodes ``bounds[0]..bounds[1]-1``, committing each episode's results together."""
        t0 = time.perf_counter()
        if self.planner is None:
            self._setup()  # the first unit also pays the imports below (the simulator's modules)
        from embodied.framing import FRAMINGS
        from embodied.runner import run_episode

        setup = time.perf_counter() - t0
        _, _, out, replan_cap, partnr_compat = self.args
        self.store.look_elsewhere = look_elsewhere
        generated = 0
        for episode in self.episodes[bounds[0]:bounds[1]]:
            with self.store.batch():
                generated += run_episode(episode, self.planner, self.store, out, self.settings, replan_cap,
                                         partnr_compat)[1]
        meta = {"spec": self.planner.spec, "fingerprint": self.planner.fingerprint(),
                "settings": self.planner.settings(), "uses_cap": self.planner.uses_cap}
        return UnitResult(len(FRAMINGS) * (bounds[1] - bounds[0]), generated, meta, time.perf_counter() - t0,
                          setup)


class StoredPlanner:
    """A planner that only serves the store: the driver's stand-in for the workers' planner."""

    def __init__(self, meta: dict[str, Any]):
        self.spec, self._fingerprint, self._settings = meta["spec"], meta["fingerprint"], meta["settings"]
        self.uses_cap = meta["uses_cap"]

    def fingerprint(self) -> str:
        return self._fingerprint

    def settings(self) -> dict[str, Any]:
        return self._settings

    def open(self, *_: Any) -> Any:
        raise RuntimeError("an episode variant is missing from the merged store after every unit finished")


def run_embodied_ray(planner: str, episodes: Path, out: Path, *, replan_cap: int, partnr_compat: bool = False,
                     max_new_tokens: int = 64, limit: int | None = None, progress: bool = True,
                     ray_address: str | None = None, workers: int | None = None,
                     gpus_per_worker: float | None = None, episodes_per_unit: int | None = None) -> dict[str, Any]:
    """Run ``framebench embodied`` (symbolic backend) on Ray; returns the executor's totals.
    ``episodes_per_unit``: unit size (default: sized by the planner's cost, see the module doc)."""
    from embodied.episodes import read_episodes
    from embodied.framing import FRAMINGS
    from embodied.runner import run
    from framebench.executors.cluster import ray_session, require_ray

    require_ray(ray_address)
    episodes, out = Path(episodes), Path(out)
    parsed = read_episodes(episodes)  # validates the file before starting Ray
    selected = parsed[:limit]
    out.mkdir(parents=True, exist_ok=True)
    resuming = has_results(out)
    with ray_session(ray_address, num_cpus=workers) as ray:
        kind = planner.partition(":")[0]
        options = actor_resources(ray, planner, gpus_per_worker)
        n_workers = count_workers(ray, options, workers)
        size = episodes_per_unit or pack_size(len(selected), n_workers, EPISODE_SECONDS.get(kind))
        units = pack(len(selected), size)
        worker_cls = ray.remote(**options)(EmbodiedWorker)
        args = (planner, max_new_tokens, ray.put(selected), str(out.resolve()), replan_cap, partnr_compat)
        stats = run_units(ray, lambda: worker_cls.remote(*args), n_workers, [len(FRAMINGS) * len(u) for u in units],
                          label=f"{planner} on ray (episode variants)", progress=progress, resuming=resuming,
                          payload=lambda i: (units[i].start, units[i].stop))
    merge_shards(out)
    run(StoredPlanner(stats.meta), episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat,
        progress=False, limit=limit, parsed=parsed)
    executor = {"name": "ray", "workers": n_workers, "address": ray_address or "local",
                "episodes_per_unit": size, **stats.as_dict()}
    record_executor(out, executor)
    remove_shards(out)
    return executor

