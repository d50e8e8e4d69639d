"""``framebench embodied --executor ray``: one unit per episode, all 7 framings on one worker.

Workers run :func:`embodied.runner.run_episode` (the local runner's per-episode step) against their
own shard and write the per-variant logs into the shared run folder; the driver then merges the
shards and writes the run folder with the local runner, served from the store by a
:class:`StoredPlanner`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from framebench.executors.scheduler import UnitResult, run_units, worker_options
from framebench.executors.shards import ShardedStore, has_results, merge_shards, remove_shards
from framebench.executors.text import GPU_KINDS, count_workers


class EmbodiedWorker:
    """One worker: loads the planner and the episodes once, then runs episodes."""

    def __init__(self, planner: str, max_new_tokens: int, episodes: str, out: str, replan_cap: int,
                 partnr_compat: bool, limit: int | None):
        self.args = (planner, max_new_tokens, Path(episodes), Path(out), replan_cap, partnr_compat, limit)
        self.planner: Any = None

    def _setup(self) -> None:
        from embodied.episodes import read_episodes
        from embodied.planners import load_planner
        from embodied.runner import run_settings

        spec, max_new_tokens, episodes, out, replan_cap, partnr_compat, limit = self.args
        self.episodes = read_episodes(episodes)[:limit]
        self.planner = load_planner(spec, max_new_tokens=max_new_tokens)
        self.settings = run_settings(self.planner, replan_cap, partnr_compat)
        self.store = ShardedStore(out, f"{os.getpid()}-{os.urandom(4).hex()}")

    def run_unit(self, index: int, look_elsewhere: bool = True) -> UnitResult:
        from embodied.framing import VARIANTS
        from embodied.runner import run_episode

        t0 = time.perf_counter()
        if self.planner is None:
            self._setup()
        _, _, _, out, replan_cap, partnr_compat, _ = self.args
        self.store.look_elsewhere = look_elsewhere
        _, generated = run_episode(self.episodes[index], self.planner, self.store, out, self.settings,
                                   replan_cap, partnr_compat)
        meta = {"spec": self.planner.spec, "fingerprint": self.planner.fingerprint(),
                "settings": self.planner.settings(), "uses_cap": self.planner.uses_cap}
        return UnitResult(len(VARIANTS), generated, meta, time.perf_counter() - t0)


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
                     gpus_per_worker: float | None = None) -> dict[str, Any]:
    """Run ``framebench embodied`` (symbolic backend) on Ray; returns the executor's totals."""
    from embodied.episodes import read_episodes
    from embodied.framing import VARIANTS
    from embodied.runner import run
    from framebench.executors.cluster import ray_session, require_ray

    require_ray(ray_address)
    episodes, out = Path(episodes), Path(out)
    n_episodes = len(read_episodes(episodes)[:limit])  # validates the file before starting Ray
    out.mkdir(parents=True, exist_ok=True)
    resuming = has_results(out)
    with ray_session(ray_address, num_cpus=workers) as ray:
        kind = planner.partition(":")[0]
        if gpus_per_worker is None:
            gpus_per_worker = 1.0 if kind in GPU_KINDS and ray.cluster_resources().get("GPU", 0) > 0 else 0.0
        options = worker_options(num_cpus=1, num_gpus=gpus_per_worker)
        n_workers = count_workers(ray, options, workers)
        worker_cls = ray.remote(**options)(EmbodiedWorker)
        args = (planner, max_new_tokens, str(episodes.resolve()), str(out.resolve()), replan_cap,
                partnr_compat, limit)
        stats = run_units(ray, lambda: worker_cls.remote(*args), n_workers, [len(VARIANTS)] * n_episodes,
                          label=f"{planner} on ray (episode variants)", progress=progress, resuming=resuming)
    merge_shards(out)
    run(StoredPlanner(stats.meta), episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat,
        progress=False, limit=limit)
    executor = {"name": "ray", "workers": n_workers, "address": ray_address or "local", **stats.as_dict()}
    finish_embodied_info(out, executor)
    remove_shards(out)
    return executor


def finish_embodied_info(out: Path, executor: dict[str, Any]) -> None:
    import json

    from framebench.runinfo import RUN_FILE, write_json_atomic

    path = out / RUN_FILE
    info = json.loads(path.read_text(encoding="utf-8"))
    info["executor"] = executor
    write_json_atomic(info, path)

