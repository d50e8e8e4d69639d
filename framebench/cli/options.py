"""Options that several commands share, declared once."""

from __future__ import annotations

import typer

from framebench.bounds import WORKERS, option

FORCE = typer.Option(False, "--force", help="Replace a different run already in --out.")
EXECUTOR = typer.Option("local", "--executor", help="local (this process) or ray (a Ray cluster).")
RAY_ADDRESS = typer.Option(None, "--ray-address",
                           help="Ray head HOST:PORT or 'auto' (default: start a local Ray instance).")
RAY_WORKERS = option(WORKERS, None, help="Worker actors (default: as many as the cluster's CPUs/GPUs allow).")
