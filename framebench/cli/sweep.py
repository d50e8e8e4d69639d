"""``framebench sweep PLAN.toml``: a plan of runs (models x datasets x conditions, planners x episode
files) run here or on Ray, finished by one scored report (plan format: docs/sweeps.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from framebench.bounds import WORKERS, option

if TYPE_CHECKING:
    from framebench.run_folder import RunFolder


def sweep(
    plan_file: Path = typer.Argument(..., metavar="PLAN.toml", help="The sweep plan (TOML, docs/sweeps.md)."),
    executor: str = typer.Option(None, "--executor", help="local or ray (default: the plan's, else local; "
                                 "ray where a Ray address is given)."),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray head HOST:PORT or 'auto' (overrides the "
                                    "plan; implies --executor ray)."),
    ray_workers: int = option(WORKERS, None, help="Worker actors (overrides the plan)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
    force: bool = typer.Option(False, "--force", help="Replace a run folder that holds a different run "
                               "(e.g. after the plan's limit changed)."),
) -> None:
    """Run every combination in the plan, then score all runs into OUT/report."""
    from framebench import api
    from framebench.executors import check_executor
    from framebench.scoring.cautions import FORCED
    from framebench.scoring.summary import print_summary
    from framebench.sweep import read_plan, resolve_executor, run_sweep

    plan = read_plan(plan_file)
    resolve_executor(plan, plan_file, executor and check_executor(executor), ray_address, ray_workers)
    if plan.executor == "ray":
        from framebench.executors.cluster import require_ray

        require_ray(plan.ray_address)
    run_dirs = run_sweep(plan, progress=not quiet, echo=typer.echo, force=force)
    scored = api.score(run_dirs)
    written = api.write_report(scored, plan.out / "report")
    print_runs(scored.runs.folders, plan.out)
    print_summary(scored.report, title="framebench sweep")
    for line in scored.report.get("cautions", {}).get("lines", []):
        if not line.startswith(FORCED):
            typer.echo(f"caution: {line}")
    for path in written:
        typer.echo(f"wrote {path}")
    html = next((p for p in written if p.suffix == ".html"), written[-1])
    typer.echo(f"Sweep finished: {len(run_dirs)} run(s). Report: {html}")


def print_runs(folders: tuple[RunFolder, ...], out: Path) -> None:
    """One row per run folder: what ran (model or planner, with its answer mode), on which suite,
    condition and records."""
    from rich.table import Table
    from rich.text import Text

    from framebench.console import console

    table = Table(title="framebench sweep: runs", title_justify="left")
    for col in ("run", "model", "suite", "answer mode", "condition", "records"):
        table.add_column(col, justify="right" if col == "records" else "left", overflow="fold")
    for folder in folders:
        df = folder.records
        cells = [str(folder.path.relative_to(out)) if folder.path.is_relative_to(out) else str(folder.path)]
        for column in ("model", "suite", "answer_mode", "condition"):
            values = sorted({str(v) for v in df[column].dropna() if str(v)}) if column in df else []
            cells.append(", ".join(values) or "-")
        cells.append(f"{len(df):,}")
        table.add_row(*(Text(cell) for cell in cells))  # model names are never console markup
    console().print(table)
