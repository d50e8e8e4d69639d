"""How much does ``--partnr-compat`` change the scores? Counts over a robotics build.

    python scripts/partnr_compat_counts.py [--n 162] [--seed 0] [--episodes FILE]

Builds the episodes as ``framebench build robotics --n N --seed S`` does (or reads FILE), then runs
every episode in all 7 framing variants, in the intended mode and in compat mode, with:

* ``oracle``: the oracle plan (how many variants each mode solves);
* ``last-handle-only``: for episodes with a counted proposition (number >= 2 over several handles),
  the oracle plan with only the last-listed handle placed (PARTNR's quirk 1 credits it);
* ``first-handle-only``: the same with the first-listed handle (quirk 1 does not apply);
* ``oracle-minus-last``: the oracle plan without its last skill before Done;
* ``idle``: Done at once.

Prints, per plan, the variants run, how many have a different percent complete / success between
the modes, and the mean percent complete in each mode; then which families differ under the oracle.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from framebench.embodied.checks import last_handle_only_plan  # noqa: E402
from framebench.embodied.framing import FRAMINGS  # noqa: E402
from framebench.embodied.oracle import oracle_plan  # noqa: E402
from framebench.embodied.planners import PlanPlanner  # noqa: E402
from framebench.embodied.runner import run_framings  # noqa: E402


class FixedPlan(PlanPlanner):
    def __init__(self, plans: dict[str, list[str]], spec: str):
        self.plans, self.spec = plans, spec

    def plan_for(self, episode):
        return self.plans[episode["episode_id"]]


def plans_for(episode) -> dict[str, list[str] | None]:
    oracle = oracle_plan(episode)
    return {
        "oracle": oracle,
        "last-handle-only": last_handle_only_plan(episode),
        "first-handle-only": last_handle_only_plan(episode, position=0),
        "oracle-minus-last": oracle[:-2] + ["Done[]"],
        "idle": ["Done[]"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=162)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=Path, help="an episode file instead of a fresh build")
    args = parser.parse_args()

    t0 = time.perf_counter()
    if args.episodes:
        from framebench.embodied.episodes import read_episodes

        episodes = read_episodes(args.episodes)
    else:
        from framebench.embodied.generator import generate

        episodes = generate(args.n, args.seed)
    kinds = ["oracle", "last-handle-only", "first-handle-only", "oracle-minus-last", "idle"]
    stats = {k: collections.Counter() for k in kinds}
    sums = {k: {False: 0.0, True: 0.0} for k in kinds}
    oracle_diff_families: collections.Counter = collections.Counter()
    errors = collections.Counter()
    for episode in episodes:
        plans = plans_for(episode)
        for kind in kinds:
            plan = plans[kind]
            if plan is None:
                continue
            planner = FixedPlan({episode["episode_id"]: plan}, kind)
            by_mode = {compat: [fields for fields, _ in run_framings(episode, FRAMINGS, planner,
                                                                    partnr_compat=compat)]
                       for compat in (False, True)}
            for intended, compat in zip(by_mode[False], by_mode[True], strict=True):
                s = stats[kind]
                s["variants"] += 1
                s["solved_intended"] += intended["success"]
                s["solved_compat"] += compat["success"]
                s["percent_differs"] += intended["percent_complete"] != compat["percent_complete"]
                s["success_differs"] += intended["success"] != compat["success"]
                sums[kind][False] += intended["percent_complete"]
                sums[kind][True] += compat["percent_complete"]
                errors[kind] += compat["evaluation_error"] is not None
                if kind == "oracle" and intended["success"] != compat["success"]:
                    oracle_diff_families[episode["info"].get("family", "?")] += 1
    print(f"{len(episodes)} episodes x {len(FRAMINGS)} variants, both modes ({time.perf_counter() - t0:.1f} s)")
    header = (f"{'plan':<19}{'variants':>9}{'solved int.':>12}{'solved compat':>14}{'% differs':>10}"
              f"{'success differs':>16}{'mean % int.':>12}{'mean % compat':>14}{'eval errors':>12}")
    print(header)
    for kind in kinds:
        s = stats[kind]
        n = s["variants"] or 1
        print(f"{kind:<19}{s['variants']:>9}{s['solved_intended']:>12}{s['solved_compat']:>14}"
              f"{s['percent_differs']:>10}{s['success_differs']:>16}{sums[kind][False] / n:>12.3f}"
              f"{sums[kind][True] / n:>14.3f}{errors[kind]:>12}")
    print("oracle variants whose success differs, by family:",
          dict(oracle_diff_families) or "none")


if __name__ == "__main__":
    main()
