"""``framebench import inspect``: Inspect AI logs of framebench's tasks as a run folder
(``framebench.interop.inspect_log``, docs/interop.md)."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Bring results made by other evaluation frameworks in as run folders.",
                  no_args_is_help=True)


@app.command("inspect")
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
        raise UserError(f"framebench import inspect needs Inspect AI: pip install 'framebench[inspect]' ({exc})") from None
    summary = import_logs(logs, data, out, partial=partial)
    named = ", ".join(summary.disagreements[:5]) + (" ..." if len(summary.disagreements) > 5 else "")
    typer.echo(f"{summary.n_records} records of {summary.model} from {len(logs)} log(s); "
               f"{summary.left_out} incomplete sample(s) left out; "
               f"{len(summary.disagreements)} disagreement(s) with the logs' own scores"
               f"{': ' + named if named else ''} -> {summary.out}")
