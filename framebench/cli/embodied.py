"""``framebench embodied``: run a planner on framed episodes (issue: embodied runner)."""

from pathlib import Path

import typer


def embodied(
    planner: str = typer.Option(..., "--planner", help="oracle|script:FILE|hf:PATH|openai:NAME|smollm2"),
    episodes: Path = typer.Option(..., "--episodes", help="Episode file (.json or .json.gz)."),
    out: Path = typer.Option(..., "--out", help="Run folder."),
    backend: str = typer.Option("symbolic", "--backend", help="symbolic|habitat"),
) -> None:
    """Run every episode in its neutral and six framed variants."""
    from framebench.errors import UserError

    raise UserError("framebench embodied is not implemented yet")
