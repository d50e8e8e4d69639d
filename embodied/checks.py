"""Episode sanity checks used by the generator and the tests: solved by the oracle, not by idling."""

from __future__ import annotations

from typing import Any

from embodied.env import SymbolicPartnrEnv
from embodied.oracle import OracleError, oracle_plan


def idle_percent(episode: dict[str, Any], partnr_compat: bool = False) -> float:
    """Percent complete when the planner says Done at once (initial state + the extra final state)."""
    env = SymbolicPartnrEnv([episode], partnr_compat=partnr_compat)
    env.reset(options={"episode": episode})
    env.step("Done[]")
    return env.metrics()["percent_complete"]


def replay(episode: dict[str, Any], plan: list[str], partnr_compat: bool = False) -> dict[str, Any]:
    env = SymbolicPartnrEnv([episode], partnr_compat=partnr_compat)
    env.reset(options={"episode": episode})
    for action in plan:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.finish()
    return env.metrics()


def solvable_not_trivial(episode: dict[str, Any]) -> bool:
    try:
        plan = oracle_plan(episode)
    except OracleError:
        return False
    return replay(episode, plan)["success"] and idle_percent(episode) < 1.0
