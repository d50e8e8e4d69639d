"""The ``framebench`` command line (typer). One module per command; heavy imports stay inside
command bodies so ``--help`` is instant. User mistakes exit 2 with one clear line."""

from __future__ import annotations

import sys
from typing import Any

import typer

from framebench.cli import (
    build,
    compare,
    demo,
    embodied,
    estimate,
    interop,
    listing,
    score,
    sweep,
    text,
    view,
)
from framebench.cli.aliases import renamed
from framebench.errors import Interrupted, UserError
from framebench.registry import command_groups

WIDE_HELP = 120  # help columns when stdout is not a terminal (logs, pipes): nothing cut at 80

app = typer.Typer(
    name="framebench",
    help="Measure how the framing of a request changes what a language model answers or does.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("demo")(demo.demo)
app.command("text")(text.text)
app.command("estimate")(estimate.estimate)
app.command("embodied")(embodied.embodied)
app.command("score")(score.score)
app.command("compare")(compare.compare)
app.command("power")(compare.power)
app.command("plan", hidden=True)(compare.power)  # its name until issue 52; kept for one release
app.command("view")(view.view)
app.command("list")(listing.list_command)
app.command("sweep")(sweep.sweep)
app.add_typer(build.app, name="build")
app.add_typer(interop.export_app, name="export")
app.add_typer(interop.import_app, name="import")
for _name, _group in command_groups().items():  # e.g. ``partnr`` (partnr_adapters)
    app.add_typer(_group, name=_name)


def _print_version(value: bool) -> None:
    if value:
        from framebench.run_folder import code_version
        typer.echo(f"framebench {code_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                 help="Print the version (with the git commit) and exit."),
) -> None:
    """Measure how the framing of a request changes what a language model answers or does."""


def _plain_flags(command: Any) -> None:
    """Boolean flags take no value: show them without a ``<bool>`` type placeholder."""
    for param in command.params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    make_help_option = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        _plain_flags(sub)


def usage_line(exc: Any) -> str:
    """A click usage error as one line, ``FLAG: what is wrong`` (``--help`` shows the usage)."""
    from framebench.bounds import click_module, shorten

    errors = click_module().exceptions
    param = getattr(exc, "param", None)
    name = ""
    if param is not None:
        name = (param.metavar or param.name or "").upper() if param.param_type_name == "argument" else param.opts[0]
    see = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
    if isinstance(exc, errors.MissingParameter):
        return f"{name or 'an argument'}: missing{see}"
    if isinstance(exc, errors.BadParameter) and name:
        return f"{name}: {_lower(_bad_value(exc))}"
    if isinstance(exc, errors.NoSuchOption):
        maybe = f"; did you mean {' or '.join(exc.possibilities)}?" if exc.possibilities else ""
        return f"{shorten(exc.option_name)}: no such option{maybe}{see}"
    if isinstance(exc, errors.BadOptionUsage) and "requires an argument" in exc.message:
        return f"{shorten(exc.option_name)}: needs a value{see}"
    if isinstance(exc, errors.BadOptionUsage) and "does not take a value" in exc.message:
        return f"{shorten(exc.option_name)}: a flag, takes no value{see}"
    return f"{_lower(exc.format_message())}{see}"


def _bad_value(exc: Any) -> str:
    """What is wrong with a value: a parser's own message (``framebench.bounds``), which newer
    typer releases wrap in a validation error, else click's."""
    errors = getattr(exc.__cause__, "errors", None)
    for error in errors() if callable(errors) else ():
        inner = (error.get("ctx") or {}).get("error")
        if isinstance(inner, ValueError):
            return str(inner)
    return exc.message


def _lower(message: str) -> str:
    from framebench.bounds import shorten

    message = " ".join(message.split())
    return shorten(message[:1].lower() + message[1:], 300)


def main(argv: list[str] | None = None) -> None:
    """Run the command line: a user mistake, in the arguments or in a file, is one ``error:``
    line and exit 2; ``--help`` (and a group called without a command) print the usage."""
    import os
    import signal

    from typer import rich_utils

    from framebench.bounds import click_module

    errors = click_module().exceptions
    UsageError = errors.UsageError
    NoArgsIsHelpError = getattr(errors, "NoArgsIsHelpError", ())  # click < 8.2: help is not an error

    if rich_utils.MAX_WIDTH is None and "COLUMNS" not in os.environ and not sys.stdout.isatty():
        rich_utils.MAX_WIDTH = WIDE_HELP
    command = typer.main.get_command(app)
    _plain_flags(command)
    argv, warnings = renamed(sys.argv[1:] if argv is None else argv)
    for line in warnings:
        typer.echo(f"warning: {line}", err=True)
    previous = _catch_signals()
    try:
        code = command.main(args=argv, prog_name="framebench", standalone_mode=False)
    except NoArgsIsHelpError as exc:
        rich_utils.rich_format_error(exc)
        sys.exit(exc.exit_code)
    except UsageError as exc:
        typer.echo(f"error: {usage_line(exc)}", err=True)
        sys.exit(2)
    except typer.Abort:
        rich_utils.rich_abort_error()
        sys.exit(1)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Interrupted as exc:
        typer.echo(exc.message(), err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        # A model may still be computing in a worker thread: leave without interpreter shutdown,
        # which would abort inside it. The store's committed answers are already on disk.
        os._exit(exc.exit_code)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    sys.exit(code if isinstance(code, int) else 0)


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted()


def _catch_signals() -> dict[int, Any]:
    """SIGINT and SIGTERM raise ``Interrupted`` in the main thread (not KeyboardInterrupt, which
    click would turn into "Aborted!"); the previous handlers, to restore."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
