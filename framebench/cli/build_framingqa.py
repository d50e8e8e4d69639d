"""``framebench build framingqa``: FramingQA text items from public sources (issue: datasets)."""

from pathlib import Path

import typer


def framingqa(
    source: str = typer.Option(..., "--source", help="A folder laid out like ../shared/data, or 'hf'."),
    out: Path = typer.Option(..., "--out", help="Output folder for items.jsonl and the build report."),
    generator: str = typer.Option("extractive", "--generator", help="extractive|llm"),
) -> None:
    """Build FramingQA items (Table 7 variants) for law, hearsay, finance and medicine."""
    from framebench.errors import UserError

    raise UserError("framebench build framingqa is not implemented yet")
