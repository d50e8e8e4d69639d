"""``framebench build omit``: the OMIT construction pipeline (issue: OMIT)."""

from pathlib import Path

import typer


def omit(
    source: Path = typer.Option(..., "--source", help="A folder laid out like ../shared/data."),
    model: str = typer.Option(None, "--model", help="Model spec used for frames and the persona panel."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
) -> None:
    """Build OMIT paired action/omission frames selected by a five-persona panel."""
    from framebench.errors import UserError

    raise UserError("framebench build omit is not implemented yet")
