"""``framebench build framingqa|omit|robotics``: datasets from sources."""

import typer

from framebench.cli.build_framingqa import framingqa
from framebench.cli.build_omit import omit
from framebench.cli.build_robotics import robotics

app = typer.Typer(help="Build datasets (FramingQA text, OMIT, robotics episodes).", no_args_is_help=True)
app.command("framingqa")(framingqa)
app.command("omit")(omit)
app.command("robotics")(robotics)
