"""The result store: keys, resume, and crash safety under real SIGKILLs."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from framebench.records import read_records
from framebench.store import ResultStore, result_key

N_ITEMS = 300

# A child "run": answers N_ITEMS items, storing each as soon as it is produced, then writes
# records.parquet from the store in item order. Killing it anywhere must never corrupt anything.
CHILD = textwrap.dedent(
    f"""
    import sys, time
    from framebench.records import make_row, write_records
    from framebench.store import ResultStore, result_key
    run_dir = sys.argv[1]
    store = ResultStore(run_dir)
    items = [f"item-{{i:03d}}" for i in range({N_ITEMS})]
    keys = {{i: result_key("fp-1", i, "prompt " + i, {{"max_new_tokens": 8}}) for i in items}}
    done = store.get_many(keys.values())
    for i in items:
        if keys[i] in done:
            continue
        time.sleep(0.01)  # "generation"
        answer = "Yes" if int(i[-3:]) % 3 else "No"
        store.put(keys[i], i, {{"output": answer + "!", "answer": answer}})
    done = store.get_many(keys.values())
    rows = [make_row(run_id="kill", model="m", suite="framingqa", task="finance", format="binary",
                     context_id="c" + i[-3:-1], item_id=i, bias="neutral", gold="Yes",
                     answer=done[keys[i]]["answer"], output=done[keys[i]]["output"],
                     correct=done[keys[i]]["answer"] == "Yes") for i in items]
    write_records(rows, run_dir)
    """
)


def _run_child(run_dir, kill_after=None):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(run_dir)], env=os.environ.copy())
    if kill_after is None:
        assert proc.wait(timeout=120) == 0
        return True
    time.sleep(kill_after)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return False
    return True


def test_key_changes_with_every_component():
    base = result_key("fp", "item", [{"role": "user", "content": "q"}], {"max_new_tokens": 8})
    assert base == result_key("fp", "item", [{"role": "user", "content": "q"}], {"max_new_tokens": 8})
    assert base != result_key("fp2", "item", [{"role": "user", "content": "q"}], {"max_new_tokens": 8})
    assert base != result_key("fp", "item2", [{"role": "user", "content": "q"}], {"max_new_tokens": 8})
    assert base != result_key("fp", "item", [{"role": "user", "content": "q?"}], {"max_new_tokens": 8})
    assert base != result_key("fp", "item", [{"role": "user", "content": "q"}], {"max_new_tokens": 16})


def test_first_write_wins_and_no_duplicates(tmp_path):
    with ResultStore(tmp_path) as store:
        assert store.put("k", "i", {"v": 1}) is True
        assert store.put("k", "i", {"v": 2}) is False
        assert store.put_many([("k", "i", {"v": 3}), ("k2", "i2", {"v": 4})]) == 1
        assert store.get("k") == {"v": 1}
        assert len(store) == 2
    with ResultStore(tmp_path / "store.sqlite") as again:
        assert again.get_many(["k", "k2", "absent"]) == {"k": {"v": 1}, "k2": {"v": 4}}


@pytest.mark.subprocess
def test_sigkill_at_random_points_loses_nothing(tmp_path):
    clean = tmp_path / "clean"
    _run_child(clean)
    expected = read_records(clean)

    crashed = tmp_path / "crashed"
    rng = random.Random(7)
    kills = 0
    for _ in range(200):
        # Interpreter start-up takes ~0.1-0.3 s; spread kills over start-up, work and writing.
        if _run_child(crashed, kill_after=rng.uniform(0.1, 0.7)):
            break
        kills += 1
        with ResultStore(crashed) as store:  # never corrupt: opens and reads after every kill
            stored = list(store.items())
            assert len({k for k, _, _ in stored}) == len(stored) <= N_ITEMS
        if kills >= 25:
            break
    assert kills >= 20
    _run_child(crashed)  # finish the run
    got = read_records(crashed)
    pd.testing.assert_frame_equal(got, expected)
    with ResultStore(crashed) as store:
        assert len(store) == N_ITEMS
