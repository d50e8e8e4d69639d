"""``framebench score``: the strict-scoring layer over one or more run folders
(``framebench.api.score`` and ``write_report``)."""

from __future__ import annotations

from pathlib import Path

import typer

from framebench.runs import DUPLICATE_KEY, PROMPTS_FILE, load_runs, read_prompts  # noqa: F401  (re-exported)


def score(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders holding records.parquet."),
    out: Path = typer.Option(..., "--out", help="Report folder (report.json, report.md, report.html)."),
) -> None:
    """Score records and write the unified report."""
    from framebench import api
    from framebench.errors import UserError

    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a folder")
    scored = api.score(run_dirs)
    written = api.write_report(scored, out)
    from framebench.scoring.summary import print_summary

    print_summary(scored.report, title="framebench score")
    typer.echo(f"scored {len(scored.records):,} records from {len(run_dirs)} run(s)")
    for path in written:
        typer.echo(f"wrote {path}")
