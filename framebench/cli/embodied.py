"""``framebench embodied``: run a planner on framed episodes (``framebench.api.run_embodied``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from framebench.bounds import LIMIT, MAX_NEW_TOKENS, REPLAN_CAP, option
from framebench.cli.options import EXECUTOR, FORCE, RAY_ADDRESS, RAY_WORKERS
from framebench.cli.text import MODEL_ARG_HELP

if TYPE_CHECKING:
    from framebench.simulation import DryRun


def embodied(
    planner: str = typer.Option(..., "--planner", help="oracle, script:FILE, hf:PATH, openai:NAME, smollm2 "
                                 "or choice:MODEL (framebench list planners)."),
    episodes: Path = typer.Option(..., "--episodes", help="Episode file (.json or .json.gz)."),
    out: Path = typer.Option(..., "--out", help="Run folder."),
    simulator: str = typer.Option(None, "--simulator", help="symbolic (default) | habitat"),
    model_arg: list[str] = typer.Option(None, "--model-arg", "-M", help=MODEL_ARG_HELP),
    replan_cap: int = option(REPLAN_CAP, 25, "--replan-cap", "--max-replans",
                             help="LLM planners: most replans (PARTNR's replanning_threshold)."),
    max_new_tokens: int = option(MAX_NEW_TOKENS, 64, help="LLM planners: tokens per decision."),
    partnr_compat: bool = typer.Option(False, "--partnr-compat",
                                       help="Evaluate as PARTNR's code does, quirks included (datasets/robotics.md)."),
    limit: int = option(LIMIT, None, help="Only the first N episodes."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the episodes, episode framings and the "
                                 "bound on planner calls the run would make, and stop (nothing is run "
                                 "or written)."),
    force: bool = FORCE,
    executor: str = EXECUTOR,
    ray_address: str = RAY_ADDRESS,
    ray_workers: int = RAY_WORKERS,
) -> None:
    """Run every episode in its neutral and six framed variants."""
    from framebench import api
    from framebench.executors import check_executor
    from framebench.paths import check_out_folder
    from framebench.registry import engine_for, parse_model_args

    check_executor(executor)
    check_out_folder(out)
    chosen = simulator or api.DEFAULT_SIMULATOR
    engine_for(chosen, "simulator")  # an unknown simulator is the one error line, before any warning
    options = {"partnr_compat": True} if partnr_compat else {}
    if dry_run:
        plan = api.embodied_dry_run(planner, episodes, simulator=chosen, replan_cap=replan_cap,
                                    max_new_tokens=max_new_tokens, simulator_options=options, limit=limit)
        print_dry_run(plan, planner, episodes, chosen)
        return
    run_dir = api.run_embodied(planner, episodes, out, simulator=chosen, replan_cap=replan_cap,
                               max_new_tokens=max_new_tokens, limit=limit,
                               simulator_options=options,
                               model_args=parse_model_args(model_arg), progress=True, force=force,
                               executor=executor, ray_address=ray_address, ray_workers=ray_workers)
    records = Path(run_dir) / "records.parquet"
    if records.exists():
        from framebench.records import read_records
        from framebench.scoring.summary import print_summary, summary_report

        print_summary(summary_report(read_records(records)), title="framebench embodied")
    typer.echo(f"wrote {records}")


def print_dry_run(plan: DryRun, planner: str, episodes: Path, simulator: str) -> None:
    """The dry run's lines, in the manner of ``build omit --dry-run``."""
    from framebench.registry import engine_for, engines_of

    kind = planner.partition(":")[0]
    planner_engine = engines_of("planner").get(kind) or engine_for(planner, "model")
    typer.echo(f"simulator {simulator}: {engine_for(simulator, 'simulator').help}")
    typer.echo(f"planner {planner}: {planner_engine.help}")
    typer.echo(f"episodes: {plan.episodes:,} of {plan.episodes_in_file:,} in {episodes}")
    typer.echo(f"variants: {len(plan.framings)} per episode ({', '.join(plan.framings)}); "
               f"{plan.episode_framings:,} episode framings")
    if plan.calls_per_framing is None:
        calls = "not known before the planner is built (a plugin planner)"
    elif plan.calls_per_framing == 0:
        calls = "none to a model"
    else:
        calls = f"at most {plan.calls_per_framing} per framing, {plan.planner_calls:,} in all" + (
            f"; each {plan.per_call}" if plan.per_call else "")
    typer.echo(f"planner calls: {calls}")
    typer.echo(f"a variant ends at {' or '.join(plan.ends)}")
    if plan.planner_calls is None:
        bound = ""
    else:
        bound = f", at most {plan.planner_calls:,} planner calls" if plan.planner_calls else \
            ", no planner calls to a model"
    typer.echo(f"dry run: {plan.episode_framings:,} episode framings{bound}; nothing was run or written")
