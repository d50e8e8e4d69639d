"""``framebench sweep PLAN.toml``: a plan of runs (models x datasets x conditions, planners x episode
files, named runs) run here or on Ray, finished by one scored report (plan format: docs/sweeps.md).
``framebench demo`` runs the plan installed with framebench through ``run_plan`` too."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from framebench.bounds import WORKERS, option

if TYPE_CHECKING:
    from framebench.run_folder import RunFolder
    from framebench.sweep import SweepPlan, SweepRun


def sweep(
    plan_file: Path = typer.Argument(..., metavar="PLAN.toml", help="The sweep plan (TOML, docs/sweeps.md), "
                                     "or demo:FILE, a plan installed with framebench (demo:demo-plan.toml: the demo)."),
    out: Path = typer.Option(None, "--out", help="Output folder (overrides the plan's out)."),
    settings: list[str] = typer.Option([], "--set", metavar="NAME=VALUE",
                                       help="A value for the plan's parameter NAME (one its params table declares); repeatable."),
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
    from framebench.executors import check_executor
    from framebench.sweep import read_plan, resolve_executor

    plan = read_plan(str(plan_file), params=parse_settings(settings), out=out)
    resolve_executor(plan, plan_file, executor and check_executor(executor), ray_address, ray_workers)
    if plan.executor == "ray":
        from framebench.executors.cluster import require_ray

        require_ray(plan.ray_address)
    run_plan(plan, progress=not quiet, force=force, name="sweep")


def parse_settings(settings: list[str]) -> dict[str, Any]:
    """``--set NAME=VALUE``: VALUE read as a TOML value (``2``, ``true``, ``"x"``) where it is one,
    else as the text given (``--set model=hf:org/name``)."""
    import tomllib

    from framebench.errors import UserError

    values: dict[str, Any] = {}
    for setting in settings:
        name, equals, text = setting.partition("=")
        if not equals or not name.strip():
            raise UserError(f"--set {setting}: expected NAME=VALUE")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        values[name.strip()] = value if isinstance(value, str | int) else text  # a float, list, date: as text
    return values


def run_plan(plan: SweepPlan, progress: bool, force: bool, name: str) -> None:
    """Run the plan's runs, each under a rule with its one-line result, then score them all: the
    runs table, the report's files, the finding and summary tables, cautions, the report's path."""
    from rich.markup import escape

    from framebench import api
    from framebench.console import console as make_console
    from framebench.scoring.cautions import FORCED
    from framebench.scoring.summary import print_summary
    from framebench.sweep import run_sweep

    console = make_console()
    begun = time.perf_counter()

    def started(number: int, run: SweepRun) -> None:
        console.rule(f"[bold]run {number}/{len(plan.runs)}: {escape(run.label())}")

    def finished(run: SweepRun, result: Any, seconds: float) -> None:
        typer.echo(result_line(run, result))
        console.print(f"[dim]{escape(run.label())}: {seconds:.1f} s")

    run_dirs = run_sweep(plan, progress=progress, force=force, started=started, finished=finished)
    console.rule("[bold]Report")
    scored = api.score([*run_dirs, *plan.score_also])
    written = api.write_report(scored, plan.out / "report")
    print_runs(scored.runs.folders, plan.out, name)
    for path in written:
        typer.echo(f"wrote {path}")
    print_summary(scored.report, title=f"framebench {name}")
    for line in scored.report.get("cautions", {}).get("lines", []):
        if not line.startswith(FORCED):
            typer.echo(f"caution: {line}")
    html = next((p for p in written if p.suffix == ".html"), written[-1])
    typer.echo(f"{name.capitalize()} finished: {len(run_dirs)} run(s) in {time.perf_counter() - begun:.1f} s. "
               f"Report: {html}")


def result_line(run: SweepRun, result: Any) -> str:
    """One line on a finished run: a text run's records and where they came from, an embodied
    run's episode framings and how many the planner completed."""
    from framebench.cli.text import summary_line
    from framebench.records import read_records

    if run.kind == "text":
        return summary_line(result)
    records = read_records(run.out)
    done = int(records["success"].sum()) if "success" in records else 0
    return f"{len(records)} episode framings, {done} completed -> {run.out}"


def print_runs(folders: tuple[RunFolder, ...], out: Path, name: str = "sweep") -> None:
    """One row per run folder: what ran (model or planner, with its answer mode), on which suite,
    condition and records."""
    from rich.table import Table
    from rich.text import Text

    from framebench.console import console
    from framebench.paths import display_path

    table = Table(title=f"framebench {name}: runs", title_justify="left")
    for col in ("run", "model", "suite", "answer mode", "condition", "records"):
        table.add_column(col, justify="right" if col == "records" else "left", overflow="fold")
    for folder in folders:
        df = folder.records
        cells = [str(folder.path.relative_to(out)) if folder.path.is_relative_to(out) else display_path(folder.path)]
        for column in ("model", "suite", "answer_mode", "condition"):
            values = sorted({str(v) for v in df[column].dropna() if str(v)}) if column in df else []
            cells.append(", ".join(values) or "-")
        cells.append(f"{len(df):,}")
        table.add_row(*(Text(cell) for cell in cells))  # model names are never console markup
    console().print(table)
