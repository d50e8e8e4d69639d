"""``framebench embodied --backend habitat --executor ray``: units are the container driver's batches.

Each unit runs the in-container driver (``python -m partnr_adapters.driver run --indices ...``) on a
host with the custom ``habitat`` resource, writing PARTNR's outputs into its own results shard
``RUN_DIR/partnr-shards/unit-<n>/``. The driver skips episodes that already have a stats file, so a
unit retried after its worker died, or re-run after the driver died, runs only what is missing.
Finally the shards' per-episode outputs are merged into ``RUN_DIR/partnr-results/`` and ingested
exactly as a local run's would be. The run folder must be on storage every container host sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.executors.scheduler import UnitResult, run_units, worker_options

SHARDS = "partnr-shards"
PASSED_ENV = ("FRAMEBENCH_HABITAT_PYTHON", "FRAMEBENCH_HABITAT_IMAGE", "FRAMEBENCH_PARTNR_DATA", "PARTNR_ROOT",
              "FRAMEBENCH_LLM_BASE_URL")  # settings, never secrets: API keys come from each host's env


class HabitatWorker:
    """Runs driver batches on one container host."""

    def __init__(self, planner: str, framed: str, out: str, opts: dict[str, Any]):
        self.planner, self.framed, self.out, self.opts = planner, Path(framed), Path(out), opts

    def run_unit(self, index: int, look_elsewhere: bool = True) -> UnitResult:
        from partnr_adapters.habitat_simulator import driver_command, launcher_here

        indices = self.opts["units"][index]
        opts = {k: v for k, v in self.opts.items() if k != "units"}
        opts.update(indices=",".join(map(str, indices)), batch_size=len(indices))
        shard = f"{SHARDS}/unit-{index}"
        command, env, _ = driver_command(launcher_here(opts), self.planner, self.framed, self.out, shard, opts)
        t0 = time.perf_counter()
        code = subprocess.call(command, env=env)
        if code != 0:
            raise UserError(f"the PARTNR driver exited with status {code} on unit {index}; see its output")
        return UnitResult(len(indices), len(indices), {}, time.perf_counter() - t0)


def merge_results(out: Path, n_units: int) -> Path:
    """Copy every unit's PARTNR outputs into ``out/partnr-results`` and join their manifests."""
    from partnr_adapters.habitat_simulator import RESULTS_SUBDIR
    from partnr_adapters.ingest import MANIFEST_FILE

    merged = out / RESULTS_SUBDIR
    merged.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {}
    for index in range(n_units):
        shard = out / SHARDS / f"unit-{index}"
        if not shard.is_dir():
            continue
        for child in shard.iterdir():
            if child.name == MANIFEST_FILE:
                part = json.loads(child.read_text(encoding="utf-8"))
                batches = manifest.get("batches", []) + part.get("batches", [])
                manifest = {**part, **{k: v for k, v in manifest.items() if k in ("run_id", "started")},
                            "batches": batches}
            elif child.is_dir() and child.name != "hydra":
                shutil.copytree(child, merged / child.name, dirs_exist_ok=True)
    if manifest:
        from framebench.runinfo import write_json_atomic

        write_json_atomic(manifest, merged / MANIFEST_FILE)
    return merged


def run_habitat_ray(planner: str, episodes: Path, out: Path, *, ray_address: str | None = None,
                    workers: int | None = None, progress: bool = True, **opts: Any):
    """Run the PARTNR container driver's batches as Ray units, then ingest; returns the ingest report."""
    from framebench.executors.cluster import ray_session, require_ray
    from partnr_adapters.frame import load_episode_file
    from partnr_adapters.habitat_simulator import check_planner, framed_episode_file
    from partnr_adapters.ingest import ingest

    require_ray(ray_address)
    check_planner(planner)
    episodes, out = Path(episodes), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    framed = framed_episode_file(episodes, out, opts.get("purposes"))
    total = len(load_episode_file(framed)["episodes"])
    if opts.get("limit") is not None:
        total = min(total, int(opts.pop("limit")))
    size = int(opts.get("batch_size") or 5)
    if size < 1:
        raise UserError("--batch-size must be at least 1")
    units = [list(range(i, min(i + size, total))) for i in range(0, total, size)]
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    with ray_session(ray_address, num_cpus=workers, resources={"habitat": workers or 1}) as ray:
        hosts = int(ray.cluster_resources().get("habitat", 0))
        if not hosts:
            raise UserError("no Ray node offers the 'habitat' resource: start container hosts with "
                            "ray start --resources '{\"habitat\": 1}' (docker/README.md)")
        options = worker_options(num_cpus=1, resources={"habitat": 1})
        options["runtime_env"] = {"env_vars": env}
        worker_cls = ray.remote(**options)(HabitatWorker)
        worker_opts = {**opts, "units": units}
        run_units(ray, lambda: worker_cls.remote(planner, str(framed.resolve()), str(out.resolve()), worker_opts),
                  workers or hosts, [len(u) for u in units], label=f"{planner} on habitat hosts",
                  progress=progress)
    results = merge_results(out, len(units))
    report = ingest(results, framed, out, model=planner)
    for line in report.lines():
        print(line)
    return report
