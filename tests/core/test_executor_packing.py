"""Unit sizing for --executor ray (no Ray needed): whole episodes, packed by cost, each exactly once."""

from __future__ import annotations

import pytest

from framebench.executors.packing import pack, pack_size


def test_pack_boundaries_by_hand():
    assert pack(10, 3) == [range(0, 2), range(2, 5), range(5, 7), range(7, 10)]
    assert pack(12, 3) == [range(0, 3), range(3, 6), range(6, 9), range(9, 12)]
    assert pack(7, 7) == [range(0, 7)]
    assert pack(4, 1) == [range(0, 1), range(1, 2), range(2, 3), range(3, 4)]
    assert pack(2, 5) == [range(0, 2)]
    assert pack(0, 4) == []
    with pytest.raises(ValueError):
        pack(5, 0)


@pytest.mark.parametrize("n", [1, 2, 5, 12, 97, 162, 1000])
@pytest.mark.parametrize("size", [1, 2, 3, 9, 40, 2000])
def test_pack_covers_every_atom_exactly_once(n, size):
    units = pack(n, size)
    assert [i for unit in units for i in unit] == list(range(n))  # contiguous, in order, no gaps
    sizes = [len(u) for u in units]
    assert max(sizes) <= size and max(sizes) - min(sizes) <= 1
    assert len(units) == -(-n // size)  # as few units as the size allows


def test_pack_size_by_cost():
    # cheap atoms (12 ms): 0.1 s of work per unit -> 9 atoms, unless that leaves < 4 units a worker
    assert pack_size(162, 1, 0.012) == 9
    assert pack_size(162, 2, 0.012) == 9
    assert pack_size(162, 8, 0.012) == 5  # 162 // 32
    assert pack_size(12, 2, 0.012) == 1  # few atoms: one per unit, 12 units for 2 workers
    assert pack_size(24, 2, 0.012) == 3
    # unknown or expensive cost (model planners): one atom per unit
    assert pack_size(162, 2, None) == 1
    assert pack_size(162, 2, 5.0) == 1
    assert pack_size(162, 2, 0.012, target_seconds=0.5) == 20  # capped at 162 // 8
