"""``framebench score``: the strict-scoring layer over one or more run folders (issue: foundation)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    import pandas as pd

PROMPTS_FILE = "prompts.jsonl"
# one response per model and item (OMIT: per condition and frame)
DUPLICATE_KEY = ["model", "suite", "item_id", "condition", "frame"]


def read_prompts(run_dir: Path) -> dict[str, str]:
    """``item_id -> prompt`` from ``run_dir/prompts.jsonl`` when present (else empty)."""

    from framebench.errors import UserError
    from framebench.jsonl import iter_jsonl

    path = run_dir / PROMPTS_FILE
    prompts: dict[str, str] = {}
    if not path.exists():
        return prompts
    for number, entry in iter_jsonl(path, "prompt entry"):
        if not isinstance(entry.get("item_id"), str) or not isinstance(entry.get("prompt"), str):
            raise UserError(f"{path}: line {number}: expected {{\"item_id\": str, \"prompt\": str}}")
        prompts[entry["item_id"]] = entry["prompt"]
    return prompts


def load_runs(run_dirs: list[Path]) -> tuple[pd.DataFrame, dict[str, str]]:
    """All runs' records (validated) concatenated, and their prompts."""
    import pandas as pd

    from framebench.errors import UserError
    from framebench.records import read_records

    frames, prompts = [], {}
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise UserError(f"{run_dir}: no such run folder")
        frames.append(read_records(run_dir))
        prompts.update(read_prompts(run_dir))
    from framebench.scoring.susceptibility import label_answer_modes

    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    df = label_answer_modes(df)  # a model's constrained rows are scored as their own model
    df.attrs["run_dirs"] = [(str(d), len(f)) for d, f in zip(run_dirs, frames, strict=True)]
    dup = df.duplicated(DUPLICATE_KEY, keep="first")
    if dup.any():
        row = df[dup].iloc[0]
        raise UserError(
            f"record for model {row['model']!r}, item {row['item_id']!r}"
            f"{f', condition {row.condition!r}' if row['condition'] else ''} appears twice "
            f"(run {row['run_id']!r}): score each run once")
    return df, prompts


def runs_meta(df: pd.DataFrame) -> dict[str, Any]:
    """The report's provenance block for the folders ``load_runs`` read (in ``df.attrs``)."""
    from framebench.scoring.provenance import report_meta

    runs, start = [], 0
    for run_dir, n in df.attrs.get("run_dirs", []):
        runs.append((Path(run_dir), df.iloc[start:start + n]))
        start += n
    return report_meta(runs)


def write_report(df: pd.DataFrame, prompts: dict[str, str], out: Path,
                 meta: dict[str, Any] | None = None, viewer_url: str | None = None) -> list[Path]:
    """Compute the report and write report.json (+ report.md / report.html when the renderers
    are installed); every file is written atomically. Returns the files written. ``meta``
    (default: from the folders in ``df.attrs``) leads the report as its provenance block."""
    from framebench.runinfo import write_json_atomic, write_text_atomic
    from framebench.scoring.compute import compute_report

    report: dict[str, Any] = {"meta": meta if meta is not None else runs_meta(df), **compute_report(df)}
    written = [write_json_atomic(report, out / "report.json")]
    try:
        from framebench.scoring.markdown import render_markdown
    except ImportError:
        pass
    else:
        written.append(write_text_atomic(render_markdown(report), out / "report.md"))
    try:
        from framebench.scoring.html import render_html
    except ImportError:
        pass
    else:
        written.append(write_text_atomic(render_html(report, df, prompts, viewer_url=viewer_url),
                                          out / "report.html"))
    return written


def score(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run folders holding records.parquet."),
    out: Path = typer.Option(..., "--out", help="Report folder (report.json, report.md, report.html)."),
    viewer_url: str = typer.Option(None, "--viewer-url",
                                   help="Link report.html's tables to `framebench view` served at "
                                   "this URL, e.g. http://127.0.0.1:8765/"),
) -> None:
    """Score records and write the unified report."""
    from framebench.errors import UserError
    from framebench.paths import check_out_folder

    check_out_folder(out)
    if viewer_url is not None and not viewer_url.startswith(("http://", "https://", "/")):
        raise UserError(f"--viewer-url: expected an http(s):// URL or a /path, got {viewer_url!r}")
    df, prompts = load_runs(run_dirs)
    written = write_report(df, prompts, out, viewer_url=viewer_url)
    import json

    from framebench.scoring.summary import print_summary

    print_summary(json.loads((out / "report.json").read_text()), title="framebench score")
    typer.echo(f"scored {len(df):,} records from {len(run_dirs)} run(s)")
    for path in written:
        typer.echo(f"wrote {path}")
