"""A small house and episode builder for the PARTNR-quirk and validation tests.

Kitchen: counter_3 holding spoon_1..spoon_4 and a clean cup_5; living room: table_1 and table_2.
"""

from __future__ import annotations

import copy
from typing import Any

from framebench.embodied.checks import replay

SCENE: dict[str, Any] = {
    "rooms": ["living_room_1", "kitchen_1"],
    "furniture": [
        {"name": "floor_living_room_1", "type": "floor", "room": "living_room_1", "position": [1.0, 1.0]},
        {"name": "table_1", "type": "table", "room": "living_room_1", "position": [2.0, 2.0]},
        {"name": "table_2", "type": "table", "room": "living_room_1", "position": [3.0, 2.0]},
        {"name": "floor_kitchen_1", "type": "floor", "room": "kitchen_1", "position": [6.0, 1.0]},
        {"name": "counter_3", "type": "counter", "room": "kitchen_1", "position": [6.0, 2.0]},
    ],
    "objects": [
        *({"name": f"spoon_{i}", "type": "spoon", "on": "counter_3", "relation": "on", "states": {},
           "affordances": []} for i in range(1, 5)),
        {"name": "cup_5", "type": "cup", "on": "counter_3", "relation": "on", "states": {"is_clean": True},
         "affordances": ["is_clean"]},
    ],
    "agents": [{"name": "agent_0", "room": "kitchen_1", "position": [6.0, 0.0]}],
}
PURPOSES = {"action": "tidying", "correct": {"purpose": "p", "goal": "g", "stance": "appropriate"},
            "incorrect": {"purpose": "q", "goal": "h", "stance": "inappropriate"}}
SPOONS = [f"spoon_{i}" for i in range(1, 5)]


def episode(props: list[dict[str, Any]], cons=(), deps=(), eid: str = "quirk_0") -> dict[str, Any]:
    return {"episode_id": eid, "instruction": "Tidy up.", "evaluation_propositions": copy.deepcopy(props),
            "evaluation_proposition_dependencies": copy.deepcopy(list(deps)),
            "evaluation_constraints": copy.deepcopy(list(cons)),
            "object_states": {}, "scene": copy.deepcopy(SCENE),
            "info": {"constraint_type": "none", "purposes": PURPOSES}}


def on_top(objects: list[str], receptacles: list[str], number: int = 1, same: bool = False) -> dict[str, Any]:
    return {"function_name": "is_on_top", "args": {"object_handles": objects, "receptacle_handles": receptacles,
                                                   "number": number, "is_same_receptacle": same}}


def clustered(groups: list[list[str]], number: list[int]) -> dict[str, Any]:
    return {"function_name": "is_clustered", "args": {"*args": groups, "number": number}}


def place(obj: str, furniture: str, next_to: str | None = None) -> list[str]:
    ref = f"next_to, {next_to}" if next_to else "None, None"
    return [f"Navigate[{obj}]", f"Pick[{obj}]", f"Navigate[{furniture}]", f"Place[{obj}, on, {furniture}, {ref}]"]


def scores(ep: dict[str, Any], plan: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(intended-mode metrics, compat-mode metrics) of ``plan`` + Done."""
    return replay(ep, [*plan, "Done[]"]), replay(ep, [*plan, "Done[]"], partnr_compat=True)
