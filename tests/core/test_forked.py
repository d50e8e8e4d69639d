"""framebench.scoring.forked: a call computed by a forked child gives what the call gives here,
and a child that fails leaves the parent to compute it (its error surfacing as without a child)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from framebench.scoring import forked
from framebench.scoring.forked import Forked


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _fail() -> None:
    raise ZeroDivisionError("from the call")


@pytest.fixture(autouse=True)
def single_threaded(monkeypatch):
    """As in a single-threaded process: earlier tests may leave threads behind in this one."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)


def test_a_forked_call_returns_its_result_computed_by_a_child():
    pid, value = Forked(_pid_and_square, 12).result()
    assert value == 144
    if sys.platform.startswith("linux"):  # elsewhere it is computed here
        assert pid != os.getpid()


def test_a_process_with_other_threads_computes_the_call_itself(monkeypatch):
    monkeypatch.setattr(forked.threading, "active_count", lambda: 2)  # a server's thread, say (overrides)
    job = Forked(_pid_and_square, 5)
    assert job._process is None
    assert job.result() == (os.getpid(), 25)


def test_an_error_in_the_call_surfaces_in_the_parent():
    with pytest.raises(ZeroDivisionError, match="from the call"):
        Forked(_fail).result()


def test_a_result_the_child_cannot_send_is_computed_here():
    lock = Forked(threading.Lock).result()  # not picklable: the child reports failure
    assert lock.acquire(blocking=False)


def test_a_cancelled_call_leaves_no_child():
    job = Forked(_pid_and_square, 3)
    child = job._process
    job.cancel()
    assert child is None or not child.is_alive()
    assert job._process is None
    assert job.result()[1] == 9  # computed here after all
