"""Embodied runner speed: oracle episode-variants per minute (goal >= 1,000) and SmolLM2 planner
seconds per episode variant on the symbolic simulator.

    python bench/embodied_bench.py [--episodes 162] [--smollm2-episodes 2] [--replan-cap 8]

Prints the machine load next to the numbers: on a shared machine they are lower bounds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=162, help="generated episodes for the oracle run")
    parser.add_argument("--smollm2-episodes", type=int, default=2, help="episodes for the SmolLM2 planner (0: skip)")
    parser.add_argument("--replan-cap", type=int, default=8, help="SmolLM2 replan cap")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()

    from framebench.embodied.episodes import write_episodes
    from framebench.embodied.framing import FRAMINGS
    from framebench.embodied.generator import generate
    from framebench.embodied.planners import OraclePlanner, load_planner
    from framebench.embodied.runner import run, run_framing, run_framings

    print(f"cpu cores: {os.cpu_count()}, load average (1/5/15 min): "
          + " / ".join(f"{x:.2f}" for x in os.getloadavg()))
    t0 = time.perf_counter()
    episodes = generate(args.episodes, seed=0)
    gen_s = time.perf_counter() - t0
    print(f"generate {len(episodes)} episodes (each verified by the oracle and the idle check): {gen_s:.2f} s")

    planner = OraclePlanner()
    t0 = time.perf_counter()
    n = 0
    for ep in episodes:
        for bias, level in FRAMINGS:
            fields, _ = run_framing(ep, bias, level, planner)
            assert fields["success"], (ep["episode_id"], bias, level)
            n += 1
    loop_s = time.perf_counter() - t0
    print(f"oracle, in-process loop: {n} episode-variants in {loop_s:.2f} s = {n / loop_s * 60:,.0f} per minute")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "episodes.json.gz"
        write_episodes(episodes, path)
        t0 = time.perf_counter()
        run(planner, path, Path(tmp) / "run", progress=False)
        full_s = time.perf_counter() - t0
        print(f"oracle, full runner (logs, store, records): {n} episode-variants in {full_s:.2f} s = "
              f"{n / full_s * 60:,.0f} per minute")
        t0 = time.perf_counter()
        run(planner, path, Path(tmp) / "run", progress=False)
        print(f"oracle, resumed run (all variants stored): {time.perf_counter() - t0:.2f} s")

    if args.smollm2_episodes:
        t0 = time.perf_counter()
        llm = load_planner("smollm2", max_new_tokens=args.max_new_tokens)
        print(f"SmolLM2 load: {time.perf_counter() - t0:.1f} s")
        times, calls, done = [], 0, 0
        for ep in episodes[: args.smollm2_episodes]:
            t0 = time.perf_counter()
            results = run_framings(ep, FRAMINGS, llm, replan_cap=args.replan_cap)
            times.append(time.perf_counter() - t0)
            calls += sum(f["replans"] for f, _ in results)
            done += sum(f["success"] for f, _ in results)
            print(f"  {ep['episode_id']}: {times[-1]:.1f} s for 7 variants, "
                  f"percent complete {[round(f['percent_complete'], 2) for f, _ in results]}")
        print(f"SmolLM2 planner (cap {args.replan_cap}, max_new_tokens {args.max_new_tokens}, 7 variants in "
              f"lockstep): {sum(times) / len(times):.1f} s per episode (7 variants) = "
              f"{sum(times) / len(times) / 7:.1f} s per episode variant, over {len(times)} episodes; "
              f"{calls} generations, {done}/{7 * len(times)} variants succeeded")
    print("load average after: " + " / ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
