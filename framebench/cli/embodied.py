"""``framebench embodied``: run a planner on framed episodes (``framebench.api.run_embodied``)."""

from pathlib import Path

import typer

from framebench.bounds import LIMIT, MAX_NEW_TOKENS, REPLAN_CAP, option
from framebench.cli.options import EXECUTOR, FORCE, RAY_ADDRESS, RAY_WORKERS
from framebench.cli.text import MODEL_ARG_HELP


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
    run_dir = api.run_embodied(planner, episodes, out, simulator=chosen, replan_cap=replan_cap,
                               max_new_tokens=max_new_tokens, limit=limit,
                               simulator_options={"partnr_compat": True} if partnr_compat else {},
                               model_args=parse_model_args(model_arg), progress=True, force=force,
                               executor=executor, ray_address=ray_address, ray_workers=ray_workers)
    records = Path(run_dir) / "records.parquet"
    if records.exists():
        from framebench.records import read_records
        from framebench.scoring.summary import print_summary, summary_report

        print_summary(summary_report(read_records(records)), title="framebench embodied")
    typer.echo(f"wrote {records}")
