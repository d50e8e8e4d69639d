"""The run pipeline, one for every run and every executor: select -> plan units -> execute ->
persist -> finalize, driven by one function, :func:`framebench.pipeline.driver.drive`.

A front end (the text run ``framebench.pipeline.text``, the symbolic simulator, the Habitat
simulator) selects its work, keys it with the model's fingerprint (which the executor's first
worker reports), serves what the run's result store already holds, and plans the rest as units. The
executor (``framebench.executors``: local or Ray) runs them and yields result chunks as they
finish; :func:`persist` stores every chunk the moment it arrives (and writes its side files), so a
killed worker loses only what it had not returned and a killed driver resumes from its own store.
:func:`finalize` writes records, prompts and run.json once, at the end, on the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.errors import UserError
from framebench.executors.base import Chunk, Executor, Unit
from framebench.pipeline.driver import FrontEnd, Plan, drive

if TYPE_CHECKING:
    import pandas as pd

    from framebench.run_folder import RunInfo
    from framebench.store import ResultStore

__all__ = ["Chunk", "Executor", "FrontEnd", "Plan", "Unit", "drive", "finalize", "persist", "write_side_file"]


def write_side_file(out: Path, relative: str, content: Any) -> Path:
    """Write a worker's side output (bytes, or a JSON value) at ``out/relative``, atomically; a
    path that would leave the run folder is refused."""
    from framebench.runinfo import write_json_atomic

    path = (out / relative).resolve()
    if out.resolve() not in path.parents:
        raise UserError(f"{out}: a worker's file {relative!r} would leave the run folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(content)
        tmp.replace(path)
        return path
    return write_json_atomic(content, out / relative)


def persist(executor: Executor, units: Sequence[Unit], store: ResultStore, out: Path,
            on_chunk: Callable[[Chunk], None],
            remaining: Callable[[Unit], Unit | None] | None = None) -> dict[str, Any]:
    """Execute ``units``; store each chunk's results (one transaction) and write its side files
    the moment it arrives, then hand it to ``on_chunk`` (progress, the front end's bookkeeping).
    Returns what the driver's side cost: chunks, results and seconds spent persisting them."""
    import time

    totals: dict[str, Any] = {"chunks": 0, "results": 0, "seconds": 0.0}
    for chunk in executor.execute(units, remaining):
        t0 = time.perf_counter()
        if chunk.entries:
            store.put_many(chunk.entries)
        for relative, content in chunk.files.items():
            write_side_file(out, relative, content)
        on_chunk(chunk)
        totals["chunks"] += 1
        totals["results"] += len(chunk.entries)
        totals["seconds"] += time.perf_counter() - t0
    totals["seconds"] = round(totals["seconds"], 4)
    return totals


def finalize(out: Path, rows: Iterable[Mapping[str, Any]] | pd.DataFrame,
             prompts: Iterable[tuple[Any, ...]], info: RunInfo, executor: Executor | None = None,
             persisted: Mapping[str, Any] | None = None) -> Path:
    """Write the run folder's records, prompts and run.json (with how it executed and what
    persisting its results cost the driver), once. Without an ``executor`` (records another
    tool produced, e.g. ``framebench import lm-eval``) run.json says ``{"kind": "import"}``."""
    from dataclasses import replace

    from framebench.run_folder import write_run

    described = executor.describe() if executor is not None else {"kind": "import"}
    extra = {**info.extra, "executor": described, "persist": dict(persisted or {})}
    return write_run(out, rows, prompts, replace(info, extra=extra))
