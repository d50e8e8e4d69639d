"""Episode sanity checks used by the generator and the tests: solved by the oracle, not by idling;
and perturbed plans that separate PARTNR's quirks from the intended semantics."""

from __future__ import annotations

import copy
from typing import Any

from framebench.embodied.env import SymbolicPartnrEnv
from framebench.embodied.oracle import OracleError, oracle_plan
from framebench.embodied.world import HANDLE_ARGS


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


def counted_propositions(episode: dict[str, Any]) -> list[int]:
    """Propositions whose integer ``number`` (>= 2) ranges over several handles: where PARTNR's
    last-pair quirk (1) can credit a count that was never reached."""
    out = []
    for idx, prop in enumerate(episode["evaluation_propositions"]):
        number = prop["args"].get("number", 1)
        if prop["function_name"] in HANDLE_ARGS and isinstance(number, int) and number >= 2:
            key_a, key_b, _ = HANDLE_ARGS[prop["function_name"]]
            if len(prop["args"][key_a]) * (len(prop["args"][key_b]) if key_b else 1) >= 2:
                out.append(idx)
    return out


def last_handle_only_plan(episode: dict[str, Any], position: int = -1) -> list[str] | None:
    """The oracle's plan with every counted proposition reduced to its last handle (and its last
    b-handle, e.g. receptacle): "place only the last-listed spoon". ``position=0``: the first
    handle and first b-handle instead. None when the episode has no counted proposition."""
    indices = counted_propositions(episode)
    if not indices:
        return None
    reduced = copy.deepcopy(episode)
    for idx in indices:
        args = reduced["evaluation_propositions"][idx]["args"]
        key_a, key_b, _ = HANDLE_ARGS[reduced["evaluation_propositions"][idx]["function_name"]]
        args[key_a], args["number"] = [args[key_a][position]], 1
        if key_b:
            args[key_b] = [args[key_b][position]]
    return oracle_plan(reduced)
