"""``framebench export hf|lm-eval`` and ``framebench import lm-eval|inspect``: framebench items on the
Hugging Face Hub and in lm-evaluation-harness, and lm-eval samples and Inspect AI logs back as run folders
(``framebench.interop``; docs/interop.md)."""

from __future__ import annotations

from pathlib import Path

import typer

export_app = typer.Typer(help="Export built items for other tools (Hugging Face datasets, lm-eval).",
                         no_args_is_help=True)
import_app = typer.Typer(help="Import other tools' outputs as framebench run folders.", no_args_is_help=True)

CONDITIONS_HELP = "OMIT conditions to export, comma-separated (default: each suite's default, M0)."


@export_app.command("hf")
def export_hf(
    data: Path = typer.Argument(..., metavar="DATA", help="A built data folder (items.jsonl) or an items file."),
    out: Path = typer.Option(..., "--out", help="The dataset folder to write (new or empty)."),
    conditions: str = typer.Option("", "--conditions", help=CONDITIONS_HELP),
) -> None:
    """Write DATA as a Hugging Face dataset folder: parquet configs and a README.md dataset card."""
    from framebench.interop.hf_dataset import export_hf as write
    from framebench.pipeline.text import split_list

    counts = write(data, out, split_list(conditions))
    for name, n in counts.items():
        typer.echo(f"{name}: {n} rows")
    typer.echo(f"wrote {out} ({len(counts)} configs; datasets.load_dataset({str(out)!r}, CONFIG, split='test'))")


@export_app.command("lm-eval")
def export_lm_eval(
    data: Path = typer.Argument(..., metavar="DATA", help="A built data folder (items.jsonl) or an items file."),
    out: Path = typer.Option(..., "--out", help="The task folder to write (new or empty), for --include_path."),
    conditions: str = typer.Option("", "--conditions", help=CONDITIONS_HELP),
) -> None:
    """Write lm-eval task YAMLs (generate_until and a multiple_choice twin per task and format,
    a group per suite) and their data."""
    from framebench.interop.lm_eval_tasks import export_lm_eval as write
    from framebench.pipeline.text import split_list

    tasks = write(data, out, split_list(conditions))
    for name in tasks:
        typer.echo(name)
    groups = [t for t in tasks if not t.endswith(("_gen", "_loglik"))]
    typer.echo(f"wrote {out} ({len(tasks) - len(groups)} tasks): lm_eval --include_path {out} "
               f"--tasks {','.join(groups)} --apply_chat_template --log_samples --output_path OUTPUT_DIR")


@import_app.command("lm-eval")
def import_lm_eval(
    output_dir: Path = typer.Argument(..., metavar="OUTPUT_DIR",
                                      help="lm-eval's --output_path folder (samples_*.jsonl, results_*.json)."),
    data: Path = typer.Option(..., "--data", help="The data folder the tasks were exported from."),
    out: Path = typer.Option(..., "--out", help="The run folder to write."),
) -> None:
    """Read lm-eval's logged samples of framebench tasks into a run folder (score, compare, view)."""
    from framebench.interop.lm_eval_samples import import_lm_eval as read

    summary = read(output_dir, data, out)
    typer.echo(f"wrote {out}: {summary}")


@import_app.command("inspect")
def inspect_logs(
    logs: list[Path] = typer.Argument(..., metavar="LOG", help="Inspect logs (.eval or .json) of "
                                      "framebench/framingqa or framebench/omit, all of one model."),
    data: Path = typer.Option(..., "--data", help="The folder holding the items.jsonl the logs ran on."),
    out: Path = typer.Option(..., "--out", help="Run folder to write (must be new or empty)."),
    partial: bool = typer.Option(False, "--partial", help="Import the complete samples of an errored or "
                                 "cancelled log and leave the rest out (counted)."),
) -> None:
    """Rebuild framebench records from Inspect logs (outputs parsed again by framebench)."""
    from framebench.errors import UserError

    try:
        from framebench.interop.inspect_log import import_logs
    except ImportError as exc:
        raise UserError(f"framebench import inspect needs Inspect AI: pip install 'framebench-eval[inspect]' ({exc})") from None
    summary = import_logs(logs, data, out, partial=partial)
    named = ", ".join(summary.disagreements[:5]) + (" ..." if len(summary.disagreements) > 5 else "")
    typer.echo(f"{summary.n_records} records of {summary.model} from {len(logs)} log(s); "
               f"{summary.left_out} incomplete sample(s) left out; "
               f"{len(summary.disagreements)} disagreement(s) with the logs' own scores"
               f"{': ' + named if named else ''} -> {summary.out}")
