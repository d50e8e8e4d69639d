"""``--executor local``: one worker in this process, units one after the other."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from framebench.executors.base import Chunk, Recipe, Stats, Unit, Worker, WorkerMeta, timed


class LocalExecutor:
    """Builds the recipe's worker here and runs every unit on it, in order."""

    name = "local"

    def __init__(self) -> None:
        self.worker: Worker | None = None
        self.stats = Stats()

    def start(self, recipe: Recipe) -> WorkerMeta:
        t0 = time.perf_counter()
        self.worker = recipe.build(*recipe.args)
        meta = self.worker.meta()
        self.stats.setup_seconds += time.perf_counter() - t0
        return meta

    def execute(self, units: Sequence[Unit], remaining: Any = None) -> Iterator[Chunk]:
        """``remaining`` (the unit's unstored rest, for retries) is unused: a failure here ends the run."""
        assert self.worker is not None, "start() first"
        t0 = time.perf_counter()
        try:
            for unit in units:
                for chunk in timed(self.worker.run(unit)):
                    self.stats.add(chunk)
                    yield chunk
                self.stats.units += 1
        finally:
            self.stats.seconds += time.perf_counter() - t0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "workers": 1, **self.stats.as_dict()}

    def close(self) -> None:
        self.worker = None
