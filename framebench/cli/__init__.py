"""The ``framebench`` command line (typer). One module per command; heavy imports stay inside
command bodies so ``--help`` is instant. User mistakes exit 2 with one clear line."""

from __future__ import annotations

import sys

import typer

from framebench.cli import build, demo, embodied, partnr, score, sweep, text
from framebench.errors import UserError

app = typer.Typer(
    name="framebench",
    help="Measure how the framing of a request changes what a language model answers or does.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("demo")(demo.demo)
app.command("text")(text.text)
app.command("embodied")(embodied.embodied)
app.command("score")(score.score)
app.command("sweep")(sweep.sweep)
app.add_typer(build.app, name="build")
app.add_typer(partnr.app, name="partnr")


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, prog_name="framebench", standalone_mode=True)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
