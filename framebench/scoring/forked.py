"""One call computed by a forked child process while this one goes on (the report's second core).

``Forked(fn, *args)`` forks a child that computes ``fn(*args)`` from the parent's memory as it was
at the fork and sends the result back (pickled); ``result()`` collects it. The child computes what
the parent would (same inputs, same seeded random streams), so the result is the same. Only a
single-threaded process on Linux forks (another thread may hold a lock the child would need);
elsewhere, or when the child fails for any reason (an error in ``fn`` included), ``result()``
computes ``fn(*args)`` here instead, so an error surfaces as it would without the child. A caller
that gives up on the result (an error of its own) ``cancel()``s it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _child(fn: Callable[..., Any], args: tuple[Any, ...], conn: Any) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001  (the parent computes it itself then)
        conn.send(("failed", repr(exc)))
    finally:
        conn.close()


class Forked(Generic[T]):
    """``fn(*args)``, being computed by a child process (or, without one, on demand)."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self.fn, self.args = fn, args
        self._process: Any = None
        self._conn: Any = None
        # only from a single-threaded process: a lock another thread holds at the fork (a server's)
        # would stay locked in the child
        if sys.platform.startswith("linux") and threading.active_count() == 1:
            self._fork()

    def _fork(self) -> None:
        import multiprocessing

        try:
            context = multiprocessing.get_context("fork")
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(self.fn, self.args, send), daemon=True)
            process.start()
        except (OSError, AssertionError):  # no process to be had (or a daemon's): compute it here
            return
        send.close()  # the child's end; the parent only reads
        self._process, self._conn = process, receive

    def cancel(self) -> None:
        """Stop the child if its result was not collected (the caller gave up on it)."""
        if self._process is not None:
            self._process.terminate()
            self._process.join()
            self._conn.close()
            self._process = None

    def result(self) -> T:
        """The child's result (computed here when the child did not deliver it)."""
        if self._process is None:
            return self.fn(*self.args)
        try:
            status, value = self._conn.recv()  # before join: the child blocks until it is read
        except (EOFError, OSError):  # the child died without sending
            status, value = "failed", None
        finally:
            self._conn.close()
            self._process.join()
            self._process = None
        return value if status == "ok" else self.fn(*self.args)
