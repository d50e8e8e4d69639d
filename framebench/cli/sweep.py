"""``framebench sweep PLAN.toml``: a plan of runs (models x datasets x conditions, planners x episode
files) on Ray or locally, finished by one scored report (see framebench/pipeline/sweep.py)."""

from pathlib import Path

import typer

from framebench.bounds import WORKERS, option


def sweep(
    plan_file: Path = typer.Argument(..., metavar="PLAN.toml", help="The sweep plan (TOML)."),
    executor: str = typer.Option(None, "--executor", help="local or ray (default: the plan's, else ray)."),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray head HOST:PORT or 'auto' (overrides the plan)."),
    ray_workers: int = option(WORKERS, None, help="Worker actors (overrides the plan)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Run every combination in the plan, then score all runs into OUT/report."""
    from framebench.executors import check_executor
    from framebench.pipeline.sweep import read_plan, run_sweep

    plan = read_plan(plan_file)
    if executor is not None:
        plan.executor = check_executor(executor)
    plan.ray_address = ray_address or plan.ray_address
    if plan.executor == "ray":
        from framebench.executors.cluster import require_ray

        require_ray(plan.ray_address)
    plan.workers = ray_workers or plan.workers
    from framebench import api

    written = run_sweep(plan, lambda runs, out: api.write_report(api.score(runs), out),
                        progress=not quiet, echo=typer.echo)
    for path in written:
        typer.echo(f"wrote {path}")
