"""Per-worker store shards under ``RUN_DIR/shards/`` and their merge into ``RUN_DIR/store.sqlite``.

A worker writes only to its own shard (one SQLite file per worker process, so no two processes
contend for a write lock) but reads from all of them and from the main store: a unit retried after
a worker died, or re-run after the driver died, is served what was already stored anywhere.
Inside :meth:`ShardedStore.batch` writes are committed together when the block ends (one fsync
per episode instead of one per variant); a worker killed inside the block loses only that block.
The merge is ``INSERT OR IGNORE`` on the result key, so merging twice never duplicates a result.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from framebench.store import STORE_FILE, ResultStore

SHARDS_DIR = "shards"


def shard_files(run_dir: Path) -> list[Path]:
    return sorted((Path(run_dir) / SHARDS_DIR).glob("*.sqlite"))


class ShardedStore:
    """Reads from the main store and every shard; writes to this worker's own shard."""

    def __init__(self, run_dir: str | Path, name: str | None = None):
        self.run_dir = Path(run_dir)
        self.own = ResultStore(self.run_dir / SHARDS_DIR / f"{name or uuid.uuid4().hex}.sqlite")
        self.look_elsewhere = True  # False: only this worker's own shard can hold the keys asked for
        self._pending: list[tuple[str, str, Mapping[str, Any]]] | None = None  # inside batch()

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        found = self.own.get_many(keys)
        if not self.look_elsewhere:
            return found
        others = [self.run_dir / STORE_FILE, *shard_files(self.run_dir)]
        for path in others:
            missing = [k for k in keys if k not in found]
            if not missing:
                break
            if not path.exists() or path == self.own.path:
                continue
            with ResultStore(path) as store:
                found.update(store.get_many(missing))
        return found

    def put(self, key: str, item_id: str, value: Mapping[str, Any]) -> bool:
        if self._pending is not None:
            self._pending.append((key, item_id, value))
            return True
        return self.own.put(key, item_id, value)

    def put_many(self, entries: Iterable[tuple[str, str, Mapping[str, Any]]]) -> int:
        if self._pending is not None:
            before = len(self._pending)
            self._pending.extend(entries)
            return len(self._pending) - before
        return self.own.put_many(entries)

    @contextmanager
    def batch(self) -> Iterator[ShardedStore]:
        """Hold the block's writes and commit them in one transaction when it ends without error
        (a block that raises stores nothing; its work is redone when the unit is retried)."""
        self._pending = []
        try:
            yield self
            pending, self._pending = self._pending, None
            if pending:
                self.own.put_many(pending)
        finally:
            self._pending = None

    def close(self) -> None:
        self.own.close()


def has_results(run_dir: str | Path) -> bool:
    """Whether an earlier (possibly killed) run left results in the store or in shards."""
    run_dir = Path(run_dir)
    return (run_dir / STORE_FILE).exists() or bool(shard_files(run_dir))


def merge_shards(run_dir: str | Path) -> int:
    """Copy every shard's results into the main store; returns how many were new."""
    run_dir = Path(run_dir)
    added = 0
    with ResultStore(run_dir) as main:
        for path in shard_files(run_dir):
            with ResultStore(path) as shard:
                added += max(main.put_many(shard.items()), 0)
    return added


def remove_shards(run_dir: str | Path) -> None:
    """Drop the shards once the main store holds their results and the records are written."""
    shutil.rmtree(Path(run_dir) / SHARDS_DIR, ignore_errors=True)
