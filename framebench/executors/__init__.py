"""Where a run's units of work execute: ``local`` (this process, the default) or ``ray`` (a Ray cluster).

With ``ray`` the driver splits a run into units (text: whole contexts, one backend call each;
embodied: whole episodes with all 7 framings, several per unit for cheap planners, see ``packing``;
PARTNR: the container driver's batches), sends them to long-lived worker actors, and each worker
writes what it finishes into its own store shard under ``RUN_DIR/shards/``. When every unit is
done the driver merges the shards into ``RUN_DIR/store.sqlite`` and writes ``records.parquet``,
``prompts.jsonl`` and ``run.json`` with the same code as a local run, so the records are identical.
A worker killed mid-unit loses only its unit's unstored work (the unit is retried on a fresh
worker, which serves what the dead one stored from its shard); a re-run after the driver was
killed serves everything the shards hold.
"""

from __future__ import annotations

from framebench.errors import UserError

EXECUTORS = ("local", "ray")


def check_executor(name: str) -> str:
    if name not in EXECUTORS:
        raise UserError(f"--executor: expected local or ray, got {name!r}")
    return name
