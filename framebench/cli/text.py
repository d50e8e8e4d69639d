"""``framebench text``: run a model over built items and write records (issue: text evaluator)."""

from pathlib import Path

import typer


def text(
    data: Path = typer.Option(..., "--data", help="Folder holding items.jsonl."),
    out: Path = typer.Option(..., "--out", help="Run folder (records.parquet, run.json, store)."),
    model: str = typer.Option(None, "--model", help="hf:PATH|openai:NAME|baseline:KIND|smollm2 (default)."),
) -> None:
    """Evaluate a model on FramingQA text or OMIT items."""
    from framebench.errors import UserError

    raise UserError("framebench text is not implemented yet")
