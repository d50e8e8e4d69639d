"""``crashing``: the oracle planner, except that the process running it SIGKILLs itself when it opens
the episode named in the crash file ($FRAMEBENCH_TEST_CRASH_FILE), once per marker. A worker then
dies at a known point of its unit, however loaded the machine is (tests/core/test_executor_ray.py)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from framebench.embodied.planners import OraclePlanner
from framebench.registry import Engine


def _crash_here(episode_id: str) -> bool:
    path = os.environ.get("FRAMEBENCH_TEST_CRASH_FILE", "")
    if not path or not Path(path).exists():
        return False
    plan = json.loads(Path(path).read_text())
    if plan["episode_id"] != episode_id or plan["spare_pid"] == os.getpid():
        return False
    try:  # the first process to reach the episode dies; its replacement runs it
        os.close(os.open(plan["marker"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class CrashingPlanner(OraclePlanner):
    spec = "crashing"

    def open(self, episode, instruction, world_text):
        if _crash_here(episode["episode_id"]):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().open(episode, instruction, world_text)


CRASHING = Engine("crashing", "planner", lambda arg: CrashingPlanner(), arg="none",
                  help="the oracle, dying once at the crash file's episode (tests only)")
