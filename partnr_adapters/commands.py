"""``framebench partnr frame|ingest|draft-purposes|accept-purposes``: the bridge to real PARTNR / Habitat."""

from pathlib import Path

import typer

from framebench.bounds import CALL_SIZE, option

app = typer.Typer(help="Bridge to real PARTNR/Habitat 3.0 runs (see docker/README.md).", no_args_is_help=True)


@app.command("frame")
def frame(
    episodes: Path = typer.Option(..., "--episodes", help="PARTNR episode file (.json.gz)."),
    purposes: Path = typer.Option(..., "--purposes", help="JSON {episode_id: purposes}."),
    out: Path = typer.Option(..., "--out", help="Framed episode file to write (.json.gz)."),
) -> None:
    """Write 7 framed variants of every PARTNR episode (only `instruction` and the id change)."""
    from framebench.paths import check_out_file

    check_out_file(out)
    from framebench.partnr_adapters.framed_episodes import frame_file

    count = frame_file(episodes, purposes, out)
    typer.echo(f"wrote {count} episode framings to {out}")


@app.command("ingest")
def ingest(
    results_dir: Path = typer.Argument(..., help="PARTNR results folder (paths.results_dir or its <dataset> subfolder)."),
    episodes: Path = typer.Option(..., "--episodes", help="The framed episode file that was run."),
    out: Path = typer.Option(..., "--out", help="Run folder to write records into."),
    model: str = typer.Option(None, "--model", help="Planner spec for the records (default: from the in-container runner's manifest)."),
) -> None:
    """Turn PARTNR outputs into framebench records; crashed or missing episodes are listed, never dropped."""
    from framebench.partnr_adapters.ingest import ingest as run_ingest
    from framebench.paths import check_out_folder

    check_out_folder(out)

    report = run_ingest(results_dir, episodes, out, model=model)
    for line in report.lines():
        typer.echo(line)
    typer.echo(f"records written to {out}")


@app.command("draft-purposes")
def draft_purposes(
    episodes: Path = typer.Option(..., "--episodes", help="PARTNR episode file (unframed)."),
    review: Path = typer.Option(..., "--review", help="Review file to write (JSON; resumable)."),
    model: str = typer.Option("smollm2", "--model", help="Model spec: hf:PATH, openai:NAME, smollm2."),
    call_size: int = option(CALL_SIZE, 8, help="Episodes per model call."),
) -> None:
    """Draft each episode's framing purposes with a model into a review file a person edits and accepts."""
    from framebench.partnr_adapters.purposes import draft_purposes as run_draft

    counts = run_draft(episodes, model, review, batch_size=call_size)
    typer.echo(
        f"{review}: {counts['drafted']} drafted, {counts['unparsed']} unparsed, {counts['accepted']} accepted; "
        "edit 'purposes', set \"accepted\": true, then run `framebench partnr accept-purposes`"
    )


@app.command("accept-purposes")
def accept_purposes(
    review: Path = typer.Argument(..., help="Review file written by draft-purposes."),
    out: Path = typer.Option(..., "--out", help="Purposes file to write (JSON {episode_id: purposes})."),
) -> None:
    """Write the purposes file from the accepted entries of a review file."""
    from framebench.partnr_adapters.purposes import accept_purposes as run_accept
    from framebench.paths import check_out_file

    check_out_file(out)

    count = run_accept(review, out)
    typer.echo(f"wrote purposes for {count} episodes to {out}")
