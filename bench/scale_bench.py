"""Scaling of ``--executor ray``: local vs Ray with 1 and 2 workers, side by side in one run.

Workloads: the oracle planner over the 162-episode robotics build (x 7 framings = 1,134 variants,
units of whole episodes packed by cost: about 0.1 s of work each, at least 4 per worker, see
framebench/executors/packing.py) and ``baseline:random`` over the full FramingQA build made from
../shared/data (units of whole contexts, about 256 items each). Every run starts from an empty run
folder; Ray runs include the workers' start, the merge of the shards and writing the run folder,
and each starts, as right after ``ray.init``, with two idle Ray worker processes (``warm_pool``).

Prints per run: wall seconds, items/s, and for Ray the units (and episodes per unit), the pool's
wall time, the time spent inside units (and the workers' one-time setup within it), the scheduling
overhead ``wall x workers - time inside units`` in total and per unit (what the units cost beyond
their own work: worker start, dispatch, result transfer and the idle tail), and the merge +
run-folder write on the driver; then where the CPU went during the run (``cpu``: the machine's busy
and idle CPU seconds, this driver, its raylet and GCS, its Ray workers, other processes, and the
rest: processes that came and went unseen), since the driver, Ray's daemons and the workers share
the same cores and the machine may be shared. Also prints a no-op actor round trip, the load
average, and for the embodied workload two ceilings of the 2-worker speedup: ray-1 with its work
inside units halved (Amdahl: worker start and setup, the driver's end of the run stay), and how
much faster two CPU-bound processes finish than one, on this machine at that moment.

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


TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_snapshot() -> tuple[float, float, dict[int, tuple[str, int, float]]]:
    """(busy, idle) CPU seconds of the machine and pid -> (name, parent pid, CPU seconds); Linux only."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    procs: dict[int, tuple[str, int, float]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                name, rest = (entry / "stat").read_text().split(" (", 1)[1].rsplit(") ", 1)
            except (OSError, ValueError, IndexError):
                continue
            stat = rest.split()
            procs[int(entry.name)] = (name, int(stat[1]), (int(stat[11]) + int(stat[12])) / TICK)
    return (sum(fields) - idle) / TICK, idle / TICK, procs


def cpu_report(before: tuple, after: tuple, seen: dict[int, tuple[str, int, float]]) -> str:
    """Where the CPU went between two snapshots: this driver, its raylet and GCS, its Ray workers
    (children of the raylet, sampled while they lived), other processes, and the rest (processes
    that came and went between samples)."""
    busy, idle = after[0] - before[0], after[1] - before[1]
    me = os.getpid()
    raylets = {pid for pid, (name, ppid, _) in {**seen, **after[2]}.items() if ppid == me and name == "raylet"}
    parts = {"driver": 0.0, "raylet+gcs": 0.0, "ray workers": 0.0, "other processes": 0.0}
    for pid, (name, ppid, cpu) in {**seen, **after[2]}.items():
        delta = cpu - before[2][pid][2] if pid in before[2] else cpu
        if pid == me:
            parts["driver"] += delta
        elif ppid == me and name in ("raylet", "gcs_server"):
            parts["raylet+gcs"] += delta
        elif ppid in raylets:
            parts["ray workers"] += delta
        elif pid in before[2] and pid in after[2]:
            parts["other processes"] += delta
    parts["rest"] = busy - sum(parts.values())
    return (f"cpu: machine busy {busy:.2f} s, idle {idle:.2f} s | "
            + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))


def measured(fn) -> tuple[float, object, str]:
    """Wall seconds, result and the CPU report of ``fn()`` (processes sampled every 0.1 s)."""
    import threading

    if not Path("/proc/stat").exists():
        return (*timed(fn), "")
    before, seen, done = cpu_snapshot(), {}, threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            seen.update(cpu_snapshot()[2])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        seconds, result = timed(fn)
    finally:
        done.set()
        sampler.join()
    return seconds, result, cpu_report(before, cpu_snapshot(), seen)


def build_framingqa(out: Path) -> Path:
    from text_eval.build import BuildOptions, build

    t, _ = timed(lambda: build(BuildOptions(source=str(SHARED), out=out, progress=False)))
    print(f"built FramingQA from {SHARED} in {t:.1f} s")
    return out


def report(name: str, items: int, seconds: float, executor: dict | None, local_s: float | None,
           cpu: str = "") -> float:
    line = f"  {name:<8} {seconds:8.2f} s  {items / seconds:9.1f} items/s"
    if local_s is not None:
        line += f"  x{local_s / seconds:.2f} vs local"
    if executor:
        workers, units = executor["workers"], executor["units"]
        overhead = executor["seconds"] * workers - executor["unit_seconds"]
        per_unit = f" x {executor['episodes_per_unit']} episodes" if "episodes_per_unit" in executor else ""
        line += (f"\n           {units} units{per_unit} on {workers} worker(s): pool {executor['seconds']:.2f} s, "
                 f"in units {executor['unit_seconds']:.2f} s (worker setup {executor.get('setup_seconds', 0):.2f} s), "
                 f"overhead {overhead:.2f} s "
                 f"({overhead / max(units, 1) * 1000:.1f} ms/unit), merge+write {seconds - executor['seconds']:.2f} s")
    if cpu:
        line += f"\n           {cpu}"
    print(line, flush=True)
    return seconds


def _pause() -> int:
    time.sleep(0.2)
    return os.getpid()


def warm_pool(ray, n: int = 2) -> None:
    """Leave ``n`` started, idle Ray worker processes, as right after ``ray.init``: every Ray run
    starts from the same state (a run's actors exit with it, so the next run would otherwise
    start a fresh process for each worker, inside its timing)."""
    task = ray.remote(num_cpus=1)(_pause)
    ray.get([task.remote() for _ in range(n)])


def bench_embodied(ray, episodes: Path, n_items: int, work: Path) -> dict[str, float]:
    from embodied.planners import load_planner
    from embodied.ray_executor import run_embodied_ray
    from embodied.runner import run

    print(f"embodied: oracle over {n_items // 7} episodes x 7 = {n_items} variants   (load {load()})")
    t_local, _, cpu = measured(lambda: run(load_planner("oracle"), episodes, work / "emb-local", progress=False))
    out = {"local": report("local", n_items, t_local, None, None, cpu)}
    for workers in (1, 2):
        warm_pool(ray)
        t, executor, cpu = measured(lambda w=workers: run_embodied_ray(
            "oracle", episodes, work / f"emb-ray{w}", replan_cap=25, progress=False, workers=w))
        out[f"ray{workers}"] = report(f"ray-{workers}", n_items, t, executor, t_local, cpu)
        out[f"ray{workers}_work"] = executor["unit_seconds"] - executor.get("setup_seconds", 0)
    return out


def _spin(n: int = 4_000_000) -> None:
    x = 0
    for i in range(n):
        x += i * i


def cpu_parallelism() -> float:
    """How much faster two CPU-bound processes finish than one after the other, on this machine now:
    the ceiling of any 2-worker speedup of CPU-bound work (2.0 on two idle, independent cores)."""
    import multiprocessing

    def wall(n: int) -> float:
        procs = [multiprocessing.Process(target=_spin) for _ in range(n)]
        t0 = time.perf_counter()
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        return time.perf_counter() - t0

    one, two = min(wall(1) for _ in range(3)), min(wall(2) for _ in range(3))
    return 2 * one / two


def bench_text(ray, data: Path, work: Path) -> dict[str, float]:
    import json

    from text_eval.ray_executor import run_text_ray
    from text_eval.runner import run_text

    print(f"text: baseline:random over {data}   (load {load()})")
    t_local, summary, cpu = measured(lambda: run_text("baseline:random", data, work / "txt-local", progress=False))
    n = summary.n_records
    out = {"local": report("local", n, t_local, None, None, cpu)}
    for workers in (1, 2):
        warm_pool(ray)
        target = work / f"txt-ray{workers}"
        t, _, cpu = measured(lambda w=workers, o=target: run_text_ray("baseline:random", data, o, progress=False,
                                                                      workers=w))
        executor = json.loads((target / "run.json").read_text())["executor"]
        out[f"ray{workers}"] = report(f"ray-{workers}", n, t, executor, t_local, cpu)
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
            import embodied.runner  # noqa: F401  the driver's own imports (pandas, pyarrow, the simulator)
            import framebench.records  # noqa: F401  are paid before any run, not by whichever runs first

            res = bench_embodied(ray, episodes, 7 * len(eps), work)
            print(f"  => embodied: ray-2 / ray-1 speedup x{res['ray1'] / res['ray2']:.2f} (goal >= 1.7); "
                  f"ray-1 vs local {100 * (res['ray1'] / res['local'] - 1):+.1f}% (goal within 10%)")
            # Amdahl: ray-1's work inside units split perfectly over 2 workers, everything else unchanged
            best = res["ray1"] - res["ray1_work"] / 2
            print(f"     ceiling: ray-1 with its unit work (setup excluded) halved would take {best:.2f} s "
                  f"(x{res['ray1'] / best:.2f}); "
                  f"2 CPU-bound processes run x{cpu_parallelism():.2f} as fast as 1 here (load {load()})")
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
