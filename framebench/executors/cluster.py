"""Connecting to Ray: an existing cluster (``--ray-address``) or a local instance started for one run.

A cluster started with ``ray start --head`` in Ray 2.60 uses token authentication whenever a token
exists on the head (``~/.ray/auth_token``, which any earlier local ``ray.init`` creates). A driver
given an explicit address sends its token only in token mode, so with ``--ray-address`` framebench
turns token mode on when the token is available here: ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``
or Ray's token file (``RAY_AUTH_MODE`` set by the user always wins). The token is read by Ray
itself; framebench never reads, logs or records it. Every failure to connect or authenticate is
one ``error:`` line (exit 2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from framebench.errors import UserError

LOOPBACK = "127.0.0.1"
TOKEN_FILE = Path("~/.ray/auth_token")  # Ray's default token file


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
        raise UserError("--executor ray needs the ray package: pip install 'framebench-eval[ray]'") from None
    return ray


def token_available() -> bool:
    """Whether a Ray token can be found here (its value is never read by framebench)."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(path).expanduser().is_file() if path else TOKEN_FILE.expanduser().is_file()


def use_token_if_available() -> None:
    """Token mode for a driver dialing an explicit address, when a token is there to send."""
    if os.environ.get("RAY_AUTH_MODE") is None and token_available():
        os.environ["RAY_AUTH_MODE"] = "token"
        ray = sys.modules.get("ray")
        if ray is not None and not ray.is_initialized():
            try:  # Ray caches its config at import; refresh it as Ray's own CLI does
                from ray._raylet import Config

                Config.initialize("")
            except (ImportError, AttributeError):
                pass


def _first_line(exc: BaseException, address: str | None, log: str = "") -> str:
    """Ray's reason in one line, with what to check; Ray reports a refused token only in its own
    log, as a failure to connect, so the hint names the token whenever one could be the cause."""
    text = str(exc).strip()
    first = (text.splitlines()[0] if text else type(exc).__name__)[:300]
    reasons = f"{text} {exc.__cause__ or ''} {log}".lower()
    refused = "invalidauthtoken" in reasons or ("auth" in reasons and "token" in reasons)
    if refused and token_available():
        return ("authentication failed: the cluster refused this driver's token (RAY_AUTH_TOKEN, "
                "RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token must hold the cluster's; docker/ray/README.md)")
    if refused:
        return ("authentication failed: the cluster uses token authentication and no token is set "
                "here (set RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH to the cluster's; docker/ray/README.md)")
    if address:
        return f"{first} (is a Ray head running there and reachable from here?)"
    return first


def connect(ray: Any, address: str | None, num_cpus: int | None = None,
            resources: dict[str, float] | None = None) -> None:
    """``ray.init`` for a cluster address or a local loopback instance; failures are one line."""
    options: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": True, "configure_logging": False}
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: never phone home
    where = f"--ray-address {address}" if address else "a local Ray instance"
    with _captured_stderr() as log:  # Ray's C++ client logs every retry there
        try:
            if address:
                use_token_if_available()
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=num_cpus or os.cpu_count() or 1, resources=resources or None,
                         include_dashboard=False, _node_ip_address=LOOPBACK, **options)
            failure = None
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, AuthenticationError, ...
            failure = exc
    if failure is not None:
        if ray.is_initialized():
            ray.shutdown()
        raise UserError(f"cannot start or reach {where}: {_first_line(failure, address, log.text)}") from None


class _Log:
    text = ""


@contextmanager
def _captured_stderr() -> Iterator[_Log]:
    """File descriptor 2 into a scratch file for the block (what Ray's C++ side writes there
    included); the text is kept for the error line and otherwise dropped."""
    import tempfile

    log = _Log()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as scratch:
        os.dup2(scratch.fileno(), 2)
        try:
            yield log
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            scratch.seek(0)
            log.text = scratch.read()[-20000:].decode(errors="replace")


@contextmanager
def ray_session(address: str | None, num_cpus: int | None = None,
                resources: dict[str, float] | None = None) -> Iterator[Any]:
    """Yield the connected ``ray`` module; shut the connection (and a local instance) down after.

    Without an address a local instance starts on the loopback address with ``num_cpus`` CPUs (and
    any custom ``resources``, e.g. ``{"habitat": 2}``); it ends with the run. An address (``HOST:PORT``
    of a head node or ``auto``) joins that cluster, which outlives the run. A connection a caller
    already holds (a sweep, a test) is reused and left open.
    """
    ray = require_ray(address)
    if ray.is_initialized():
        yield ray
        return
    connect(ray, address, num_cpus, resources)
    try:
        yield ray
    finally:
        ray.shutdown()
