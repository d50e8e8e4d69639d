"""Unit sizing: whole atoms (episodes) packed so that each unit is worth its round trip.

A Ray unit costs a few milliseconds beyond its own work (dispatch, result transfer, the worker's
shard commit; ``bench/scale_bench.py`` prints it), so units of cheap atoms (an oracle episode is
about 12 ms of work) hold several atoms each, up to about ``TARGET_UNIT_SECONDS`` of work, while
atoms of unknown or large cost (an LLM planner's episode: seconds) stay one per unit. Packing never
leaves fewer than ``UNITS_PER_WORKER`` units per worker (as far as there are atoms), so the load
still balances and a killed worker loses little. Units are contiguous ranges of atom indices whose
sizes differ by at most one.
"""

from __future__ import annotations

from math import ceil

TARGET_UNIT_SECONDS = 0.1
UNITS_PER_WORKER = 4


def pack_size(n_atoms: int, workers: int, atom_seconds: float | None, *,
              target_seconds: float = TARGET_UNIT_SECONDS, units_per_worker: int = UNITS_PER_WORKER) -> int:
    """Atoms per unit: enough for ``target_seconds`` of work at ``atom_seconds`` each (1 when the
    cost is unknown), but no more than keeps ``units_per_worker`` units for each worker."""
    if not atom_seconds or atom_seconds <= 0:
        return 1
    wanted = ceil(target_seconds / atom_seconds)
    most = n_atoms // (units_per_worker * max(workers, 1))
    return max(1, min(wanted, most))


def pack(n_atoms: int, size: int) -> list[range]:
    """Split atoms ``0..n_atoms-1`` into contiguous units of at most ``size`` atoms, as even as
    possible (``pack(10, 3)`` is ``[0:2], [2:5], [5:7], [7:10]``)."""
    if size < 1:
        raise ValueError(f"unit size must be at least 1, not {size}")
    n_units = ceil(n_atoms / size)
    bounds = [i * n_atoms // n_units for i in range(n_units + 1)] if n_units else [0]
    return [range(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]
