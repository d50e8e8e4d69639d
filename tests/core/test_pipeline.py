"""The run pipeline's local path: every batch a backend reports is stored the moment it returns
(a crash loses at most the call in flight), a re-run regenerates nothing stored, and the
worker-thread adapter hands on what was emitted before re-raising."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from framebench.api import run_text
from framebench.executors.base import streamed
from framebench.pipeline.text import CALL_SIZE

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


class Flaky:
    """Answers "Yes", reporting every 4 prompts through on_batch; raises in call ``fail_at``."""

    spec = "flaky"

    def __init__(self, fail_at: int | None = None):
        self.fail_at, self.calls, self.prompts = fail_at, 0, 0

    def fingerprint(self) -> str:
        return "flaky-v1"

    def info(self) -> dict:
        return {}

    def generate(self, chats, decoding, on_batch=None):
        self.calls += 1
        for start in range(0, len(chats), 4):
            if self.calls == self.fail_at and start >= 8:
                raise RuntimeError("backend crashed mid-call")
            batch = list(range(start, min(start + 4, len(chats))))
            self.prompts += len(batch)
            if on_batch is not None:
                on_batch(batch, ["Yes"] * len(batch))
        return ["Yes"] * len(chats)


def stored(run: Path) -> int:
    with sqlite3.connect(run / "store.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]


def test_each_batch_is_stored_when_it_returns_and_a_rerun_makes_nothing_twice(tmp_path):
    run = tmp_path / "run"
    crashing = Flaky(fail_at=2)
    with pytest.raises(RuntimeError, match="crashed mid-call"):
        run_text(None, DEMO / "framingqa", run, backend=crashing, progress=False)
    # the first call (a unit of whole contexts, at most CALL_SIZE jobs) and the second call's first
    # two batches: everything reported before the crash, nothing more
    assert stored(run) == crashing.prompts and CALL_SIZE // 2 + 8 <= crashing.prompts <= CALL_SIZE + 8
    assert not (run / "records.parquet").exists()
    again = Flaky()
    summary = run_text(None, DEMO / "framingqa", run, backend=again, progress=False)
    assert summary.n_from_store == crashing.prompts and summary.n_generated == 1376 - crashing.prompts
    assert again.prompts == summary.n_generated and stored(run) == 1376


def test_streamed_hands_on_then_raises():
    def work(emit):
        emit(1)
        emit(2)
        raise ValueError("late")

    seen = []
    with pytest.raises(ValueError, match="late"):
        for value in streamed(work):
            seen.append(value)
    assert seen == [1, 2]
    assert list(streamed(lambda emit: [emit(i) for i in range(3)])) == [0, 1, 2]
