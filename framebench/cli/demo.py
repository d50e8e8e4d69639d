"""``framebench demo``: the embedded default end to end (issue: demo)."""

from pathlib import Path

import typer


def demo(
    out: Path = typer.Option(Path("framebench-demo"), "--out", help="Output folder."),
) -> None:
    """Run SmolLM2 on the demo FramingQA, OMIT and robotics sets offline and write the report."""
    from framebench.errors import UserError

    raise UserError("framebench demo is not implemented yet")
