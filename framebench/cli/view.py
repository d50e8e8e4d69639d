"""``framebench view``: browse every record of one or more runs in a local web app."""

from __future__ import annotations

from pathlib import Path

import typer

from framebench.bounds import PORT, option

DEFAULT_PORT = 8765
HOST = "127.0.0.1"


def _check_port(port: int) -> None:
    """A busy port as one line (werkzeug itself would print a paragraph and exit 1)."""
    import socket

    from framebench.errors import UserError

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            raise UserError(f"--port {port}: cannot listen on {HOST} ({exc.strerror or exc})") from None


def view(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR...",
                                          help="Run folders holding records.parquet."),
    port: int = option(PORT, DEFAULT_PORT, help="Port on 127.0.0.1 (0: any free port)."),
    force: bool = typer.Option(False, "--force", help="Show runs whose files do not match the sha256 "
                               "recorded in their run.json (changed after the run wrote them), with a warning."),
) -> None:
    """Browse records in a local web app: filters, search, pagination, contexts side by side."""
    from werkzeug.serving import make_server

    from framebench.viewer.app import create_app
    from framebench.viewer.data import load_run_data

    _check_port(port)  # before loading: a busy port fails fast
    data = load_run_data(run_dirs, force=force)
    for problem in data.integrity_warnings:
        typer.echo(f"warning: {problem}", err=True)
    app = create_app(data)
    server = make_server(HOST, port, app, threaded=True)
    url = f"http://{HOST}:{server.server_port}/"
    typer.echo(f"serving {len(data):,} records from {len(run_dirs)} run(s) at {url} "
               f"(report: {url}report; Ctrl-C stops)")
    import sys

    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
