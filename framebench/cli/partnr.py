"""``framebench partnr frame|ingest``: the bridge to real PARTNR / Habitat (issue: habitat backend)."""

from pathlib import Path

import typer

app = typer.Typer(help="Bridge to real PARTNR/Habitat 3.0 runs.", no_args_is_help=True)


@app.command("frame")
def frame(
    episodes: Path = typer.Option(..., "--episodes", help="PARTNR episode file (.json.gz)."),
    purposes: Path = typer.Option(..., "--purposes", help="JSON {episode_id: purposes}."),
    out: Path = typer.Option(..., "--out", help="Framed episode file to write (.json.gz)."),
) -> None:
    """Write 7 framed variants of every PARTNR episode."""
    from framebench.errors import UserError

    raise UserError("framebench partnr frame is not implemented yet")


@app.command("ingest")
def ingest(
    results_dir: Path = typer.Argument(..., help="PARTNR results folder."),
    episodes: Path = typer.Option(..., "--episodes", help="The framed episode file that was run."),
    out: Path = typer.Option(..., "--out", help="Run folder to write records into."),
) -> None:
    """Turn PARTNR outputs into framebench records."""
    from framebench.errors import UserError

    raise UserError("framebench partnr ingest is not implemented yet")
