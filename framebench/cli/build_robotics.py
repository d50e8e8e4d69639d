"""``framebench build robotics``: procedural PARTNR-style episodes (issue: embodied)."""

from pathlib import Path

import typer


def robotics(
    out: Path = typer.Option(..., "--out", help="Output folder for episodes.json.gz."),
    n: int = typer.Option(162, "--n", help="Number of episodes."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
) -> None:
    """Generate PARTNR-format household episodes with framing purposes."""
    from framebench.errors import UserError

    raise UserError("framebench build robotics is not implemented yet")
