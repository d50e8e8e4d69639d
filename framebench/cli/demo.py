"""``framebench demo``: the embedded default end to end, offline on a CPU.

The demo is a sweep plan installed with framebench, ``demo:demo-plan.toml``
(``datasets/demo/demo-plan.toml``), run by the sweep's own mechanism (``framebench.sweep``, which
calls ``framebench.api``); ``framebench sweep demo:demo-plan.toml`` runs the same plan, and the
demo's options are the plan's parameters. The plan runs the packaged SmolLM2 on the demo
FramingQA items and OMIT scenarios (M0, M1), each with free generation and strict parsing (the
papers' protocol) and with constrained answers, the rotated-option MC questions (constrained
answers, for the option-position table), ``baseline:always-yes``, and the demo robotics episodes
with the oracle, SmolLM2 as a generating planner and ``choice:smollm2``; the report adds the OMIT
dataset's persona panel. Every run resumes from its result store, so a second demo finishes in
seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from framebench.bounds import LIMIT, REPLAN_CAP, option

DEMO_PLAN = "demo:demo-plan.toml"


def demo_params(model: str, planner_replans: int, choice_replans: int, planner_episodes: int,
                choice_episodes: int | None) -> dict[str, Any]:
    """The demo's options as the plan's parameters (an option left at None keeps the plan's)."""
    given = {"model": model, "planner_replans": planner_replans, "choice_replans": choice_replans,
             "planner_episodes": planner_episodes, "choice_episodes": choice_episodes}
    return {name: value for name, value in given.items() if value is not None}


def demo(
    out: Path = typer.Option(Path("framebench-demo"), "--out", help="Output folder (runs/ and report/)."),
    model: str = typer.Option("smollm2", "--model", help="Model spec for every step (default: the packaged SmolLM2)."),
    planner_replans: int = option(REPLAN_CAP, 2, "--planner-replans", help="Replan cap for the LLM planner in the demo."),
    choice_replans: int = option(REPLAN_CAP, 12, "--choice-replans", help="Replan cap for the choice planner in the demo."),
    planner_episodes: int = option(LIMIT, 1, "--planner-episodes",
                                   help="Demo episodes the generating model planner runs (7 variants each)."),
    choice_episodes: int | None = option(LIMIT, None, "--choice-episodes",
                                         help="Demo episodes the choice planner runs (default: all 4)."),
) -> None:
    """Run SmolLM2 on the demo FramingQA, OMIT and robotics sets offline and write the report
    (the sweep plan demo:demo-plan.toml)."""
    from framebench.cli.sweep import run_plan
    from framebench.sweep import read_plan, resolve_executor

    params = demo_params(model, planner_replans, choice_replans, planner_episodes, choice_episodes)
    plan = read_plan(DEMO_PLAN, params=params, out=out)  # every run checked before any model loads
    resolve_executor(plan, Path(DEMO_PLAN), None, None, None)  # the plan names none: local
    run_plan(plan, progress=True, force=False, name="demo")
