"""``framebench score``: the strict-scoring layer over one or more run folders
(``framebench.api.score`` and ``write_report``)."""

from __future__ import annotations

from pathlib import Path

import typer


def score(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders holding records.parquet."),
    out: Path = typer.Option(..., "--out", help="Report folder (report.json, report.md, report.html)."),
    viewer_url: str = typer.Option(None, "--viewer-url",
                                   help="Link report.html's tables to `framebench view` served at "
                                   "this URL, e.g. http://127.0.0.1:8765/"),
    force: bool = typer.Option(False, "--force", help="Score runs whose files do not match the sha256 "
                               "recorded in their run.json (changed after the run wrote them), with a warning."),
    allow_mixed: bool = typer.Option(False, "--allow-mixed-datasets", help="Pool one model's runs over "
                                     "different datasets (refused by default; the report is marked)."),
    suite: list[str] = typer.Option([], "--suite", help="A suite from a Python file, FILE.py:OBJECT "
                                    "(repeatable): the one its runs were made with (framebench text --suite)."),
) -> None:
    """Score records and write the unified report."""
    from framebench import api
    from framebench.errors import UserError
    from framebench.paths import check_out_folder
    from framebench.scoring.cautions import FORCED
    from framebench.suite_file import add_suite_files

    add_suite_files(suite)
    check_out_folder(out)
    if viewer_url is not None and not viewer_url.startswith(("http://", "https://", "/")):
        raise UserError(f"--viewer-url: expected an http(s):// URL or a /path, got {viewer_url!r}")
    scored = api.score(run_dirs, force=force, allow_mixed=allow_mixed)
    for problem in scored.runs.warnings:
        typer.echo(f"warning: {problem}", err=True)
    written = api.write_report(scored, out, viewer_url=viewer_url)
    from framebench.scoring.summary import print_summary

    print_summary(scored.report, title="framebench score")
    typer.echo(f"scored {len(scored.records):,} records from {len(run_dirs)} run(s)")
    for line in scored.report.get("cautions", {}).get("lines", []):
        if not line.startswith(FORCED):  # those were the warnings above
            typer.echo(f"caution: {line}")
    for path in written:
        typer.echo(f"wrote {path}")
