"""``framebench build <dataset>``: datasets from sources. Each suite package registers its build
commands under the ``framebench.build_commands`` entry points (FramingQA text, OMIT, robotics)."""

import typer

from framebench.registry import build_commands

app = typer.Typer(help="Build datasets (FramingQA text, OMIT, robotics episodes).", no_args_is_help=True)
for _name, _command in build_commands().items():
    app.command(_name)(_command)
