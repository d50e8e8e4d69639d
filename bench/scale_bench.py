"""Scaling of ``--executor ray``: local vs Ray with 1 and 2 workers, side by side in one run.

Workloads: the oracle planner over the 162-episode robotics build (x 7 framings = 1,134 variants,
one unit per episode) and ``baseline:random`` over the full FramingQA build made from ../shared/data
(units of whole contexts, about 256 items each). Every run starts from an empty run folder; Ray runs
include the workers' start, the merge of the shards and writing the run folder.

Prints per run: wall seconds, items/s, and for Ray the per-unit scheduling overhead
``(wall x workers - time inside units) / units`` (what a unit costs beyond its own work: dispatch,
result transfer, worker start and the idle tail, amortised), plus a no-op actor round trip.
Also prints the load average, since the machine may be shared.

    python bench/scale_bench.py                          # both workloads (builds FramingQA first)
    python bench/scale_bench.py --framingqa DIR          # reuse a built FramingQA folder
    python bench/scale_bench.py --skip-text --episodes 60
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SHARED = Path(os.environ.get("FRAMEBENCH_SHARED_DATA", REPO.parent / "shared" / "data"))


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def build_framingqa(out: Path) -> Path:
    from text_eval.build import BuildOptions, build

    t, _ = timed(lambda: build(BuildOptions(source=str(SHARED), out=out, progress=False)))
    print(f"built FramingQA from {SHARED} in {t:.1f} s")
    return out


def report(name: str, items: int, seconds: float, executor: dict | None, local_s: float | None) -> float:
    line = f"  {name:<8} {seconds:8.2f} s  {items / seconds:9.1f} items/s"
    if local_s is not None:
        line += f"  x{local_s / seconds:.2f} vs local"
    if executor:
        workers, units = executor["workers"], executor["units"]
        overhead = (executor["seconds"] * workers - executor["unit_seconds"]) / max(units, 1)
        line += (f"  | {units} units on {workers} worker(s): pool {executor['seconds']:.2f} s, "
                 f"in units {executor['unit_seconds']:.2f} s, overhead/unit {overhead * 1000:.1f} ms, "
                 f"merge+write {seconds - executor['seconds']:.2f} s")
    print(line, flush=True)
    return seconds


def bench_embodied(ray, episodes: Path, n_items: int, work: Path) -> dict[str, float]:
    from embodied.planners import load_planner
    from embodied.runner import run
    from framebench.executors.embodied import run_embodied_ray

    print(f"embodied: oracle over {n_items // 7} episodes x 7 = {n_items} variants   (load {load()})")
    t_local, _ = timed(lambda: run(load_planner("oracle"), episodes, work / "emb-local", progress=False))
    out = {"local": report("local", n_items, t_local, None, None)}
    for workers in (1, 2):
        t, executor = timed(lambda w=workers: run_embodied_ray("oracle", episodes, work / f"emb-ray{w}",
                                                               replan_cap=25, progress=False, workers=w))
        out[f"ray{workers}"] = report(f"ray-{workers}", n_items, t, executor, t_local)
    return out


def bench_text(ray, data: Path, work: Path) -> dict[str, float]:
    import json

    from framebench.executors.text import run_text_ray
    from text_eval.runner import run_text

    print(f"text: baseline:random over {data}   (load {load()})")
    t_local, summary = timed(lambda: run_text("baseline:random", data, work / "txt-local", progress=False))
    n = summary.n_records
    out = {"local": report("local", n, t_local, None, None)}
    for workers in (1, 2):
        target = work / f"txt-ray{workers}"
        t, _ = timed(lambda w=workers, o=target: run_text_ray("baseline:random", data, o, progress=False, workers=w))
        executor = json.loads((target / "run.json").read_text())["executor"]
        out[f"ray{workers}"] = report(f"ray-{workers}", n, t, executor, t_local)
    return out


def noop_round_trip(ray, calls: int = 300) -> float:
    @ray.remote(num_cpus=1)
    class Echo:
        def ping(self, x):
            return x

    actor = Echo.remote()
    ray.get(actor.ping.remote(0))
    t0 = time.perf_counter()
    for i in range(calls):
        ray.get(actor.ping.remote(i))
    ray.kill(actor)
    return (time.perf_counter() - t0) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=162)
    parser.add_argument("--framingqa", type=Path, default=None, help="a built FramingQA folder (default: build)")
    parser.add_argument("--skip-text", action="store_true")
    parser.add_argument("--skip-embodied", action="store_true")
    args = parser.parse_args()

    from embodied.episodes import write_episodes
    from embodied.generator import generate
    from framebench.executors.cluster import require_ray

    ray = require_ray(None)
    work = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        print(f"{os.cpu_count()} CPUs, load {load()}")
        t, _ = timed(lambda: ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
                                      logging_level="ERROR", configure_logging=False))
        print(f"local Ray instance (2 CPUs) started in {t:.1f} s; "
              f"no-op actor round trip {noop_round_trip(ray) * 1000:.2f} ms")
        if not args.skip_embodied:
            episodes = work / "episodes.json.gz"
            t, eps = timed(lambda: generate(args.episodes, seed=0))
            write_episodes(eps, episodes)
            print(f"generated {len(eps)} episodes in {t:.1f} s")
            res = bench_embodied(ray, episodes, 7 * len(eps), work)
            print(f"  => embodied: ray-2 / ray-1 speedup x{res['ray1'] / res['ray2']:.2f} (goal >= 1.7); "
                  f"ray-1 vs local {100 * (res['ray1'] / res['local'] - 1):+.1f}% (goal within 10%)")
        if not args.skip_text:
            data = args.framingqa or build_framingqa(work / "framingqa")
            res = bench_text(ray, data, work)
            print(f"  => text: ray-2 / ray-1 speedup x{res['ray1'] / res['ray2']:.2f}; "
                  f"ray-1 vs local {100 * (res['ray1'] / res['local'] - 1):+.1f}%")
        print(f"load at the end {load()}")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
