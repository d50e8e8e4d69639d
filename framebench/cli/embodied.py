"""``framebench embodied``: run a planner on framed episodes (issue: embodied runner)."""

from pathlib import Path

import typer


def embodied(
    planner: str = typer.Option(..., "--planner", help="oracle, script:FILE, hf:PATH, openai:NAME, smollm2 "
                                 "or choice:MODEL (framebench list planners)."),
    episodes: Path = typer.Option(..., "--episodes", help="Episode file (.json or .json.gz)."),
    out: Path = typer.Option(..., "--out", help="Run folder."),
    backend: str = typer.Option("symbolic", "--backend", help="Simulator: symbolic or habitat."),
    replan_cap: int = typer.Option(25, "--replan-cap", "--max-replans", min=1,
                                   help="LLM planners: most replans (PARTNR's replanning_threshold)."),
    max_new_tokens: int = typer.Option(64, "--max-new-tokens", min=1, help="LLM planners: tokens per decision."),
    partnr_compat: bool = typer.Option(False, "--partnr-compat",
                                       help="Evaluate as PARTNR's code does, quirks included (datasets/robotics.md)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N episodes."),
    force: bool = typer.Option(False, "--force", help="Replace a different run already in --out."),
    executor: str = typer.Option("local", "--executor", help="local (this process) or ray (a Ray cluster)."),
    ray_address: str = typer.Option(None, "--ray-address",
                                    help="Ray head HOST:PORT or 'auto' (default: start a local Ray instance)."),
    ray_workers: int = typer.Option(None, "--ray-workers", min=1,
                                    help="Worker actors (default: as many as the cluster's resources allow)."),
) -> None:
    """Run every episode in its neutral and six framed variants."""
    from embodied.planners import check_planner_spec
    from framebench.errors import UserError
    from framebench.executors import check_executor
    from framebench.paths import check_out_folder

    on_ray = check_executor(executor) == "ray"
    check_out_folder(out)

    if backend == "habitat":
        from partnr_adapters.habitat_backend import run_habitat

        if on_ray:
            from framebench.executors.partnr import run_habitat_ray as run_habitat
        run_habitat(planner=planner, episodes=episodes, out=out, replanning_threshold=replan_cap,
                    max_tokens=max_new_tokens, limit=limit,
                    **({"ray_address": ray_address, "workers": ray_workers} if on_ray else {}))
        return
    if backend != "symbolic":
        raise UserError(f"--backend: expected symbolic or habitat, got {backend!r}")
    check_planner_spec(planner)
    from embodied.episodes import read_episodes
    from embodied.planners import load_planner
    from embodied.runner import run, run_identity
    from framebench.runinfo import check_reuse

    n_episodes = len(read_episodes(episodes))  # validate before loading any model
    identity = run_identity(planner, episodes, replan_cap=replan_cap, partnr_compat=partnr_compat,
                            limit=limit, max_new_tokens=max_new_tokens)
    check_reuse(out, identity, force)
    if limit is not None and limit < n_episodes:
        from framebench.console import warn

        warn(f"--limit {limit}: running {limit} of {n_episodes} episodes; these metrics are not the "
             "benchmark's (use --limit for smoke tests only)")
    if on_ray:
        from framebench.executors.embodied import run_embodied_ray

        run_embodied_ray(planner, episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat,
                         max_new_tokens=max_new_tokens, limit=limit, ray_address=ray_address, workers=ray_workers)
    else:
        chosen = load_planner(planner, max_new_tokens=max_new_tokens)
        run(chosen, episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat, limit=limit,
            identity=identity)
    from framebench.records import read_records
    from framebench.scoring.summary import print_summary, summary_report

    print_summary(summary_report(read_records(out)), title="framebench embodied")
    typer.echo(f"wrote {out / 'records.parquet'}")
