"""Connecting to Ray: an existing cluster (``--ray-address``) or a local instance started for one run."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from framebench.errors import UserError

LOOPBACK = "127.0.0.1"


def require_ray(address: str | None = None) -> Any:
    """The ``ray`` module, or one clear line saying how to get it.

    Without an address (a local instance) Ray is kept on the loopback interface: Ray resolves even
    ``127.0.0.1`` to the host's first interface address unless cluster mode is off, and that switch is
    read once, when ``ray`` is first imported. A cluster address leaves Ray's own choice alone, since
    remote nodes must reach this driver."""
    if not address and "ray" not in sys.modules:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs the ray package: pip install 'framebench[ray]'") from None
    return ray


@contextmanager
def ray_session(address: str | None, num_cpus: int | None = None,
                resources: dict[str, float] | None = None) -> Iterator[Any]:
    """Yield the connected ``ray`` module; shut the connection (and a local instance) down after.

    Without an address a local instance starts on the loopback address with ``num_cpus`` CPUs (and
    any custom ``resources``, e.g. ``{"habitat": 2}``); it ends with the run. An address (``HOST:PORT``
    of a head node or ``auto``) joins that cluster, which outlives the run.
    """
    ray = require_ray(address)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: never phone home
    if ray.is_initialized():  # a caller (a test, a sweep) already connected: reuse it
        yield ray
        return
    options: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": True,
                               "configure_logging": False}
    try:
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, resources=resources or None,
                     include_dashboard=False, _node_ip_address=LOOPBACK, **options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"--ray-address {address}" if address else "a local Ray instance"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"cannot start or reach {where}: {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()
