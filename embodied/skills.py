"""PARTNR's high-level skills on the symbolic world: names, argument grammar, preconditions, messages.

Every skill answers ``"Successful execution!"`` or a failure text modelled on PARTNR's
(``"Unexpected failure! - <reason>"`` for motor-skill failures; name errors, API misuse, unknown tools
and unparseable text are answered without the prefix). Nothing here raises on planner text.

Sim-step cost model (symbolic; **not comparable to Habitat's step counts**, which come from
physics-rate control of a simulated robot): navigation costs ``NAV_BASE + NAV_PER_METRE * distance``;
Explore is a navigation to every furniture of the room in turn; Pick/Place/Open/Close cost
``MANIPULATION_STEPS``; Clean/Fill/Pour/PowerOn/PowerOff cost ``STATE_STEPS``; Wait costs 600 (as in
PARTNR: five seconds of simulation); a failed skill costs ``FAILURE_STEPS``; Rearrange is the sum of
its sub-skills. ``Done`` and unparseable text cost nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from framebench.embodied.world import World

NAV_BASE = 10
NAV_PER_METRE = 25
MANIPULATION_STEPS = 2
STATE_STEPS = 5
WAIT_STEPS = 600
FAILURE_STEPS = 1

SUCCESS = "Successful execution!"
TOOLS = ("Navigate", "Explore", "Pick", "Place", "Rearrange", "Open", "Close", "Clean", "Fill", "Pour",
         "PowerOn", "PowerOff", "Wait", "Done")
TOOL_DESCRIPTIONS = {
    "Navigate": "Navigate[target]: walk to a furniture, object or room.",
    "Explore": "Explore[room]: visit every furniture in a room.",
    "Pick": "Pick[object]: pick up an object you are close to; your hand must be empty.",
    "Place": "Place[object, on|within, furniture, next_to|None, reference_object|None]: place the held "
             "object on or within a furniture you are close to, optionally next to another object.",
    "Rearrange": "Rearrange[object, on|within, furniture, next_to|None, reference_object|None]: "
                 "navigate, pick and place in one action.",
    "Open": "Open[furniture]: open an articulated furniture you are close to.",
    "Close": "Close[furniture]: close an articulated furniture you are close to.",
    "Clean": "Clean[object]: clean an object within reach (some objects need a faucet nearby).",
    "Fill": "Fill[object]: fill an object within reach with water (needs a faucet nearby).",
    "Pour": "Pour[object]: pour the filled object you hold into the named object.",
    "PowerOn": "PowerOn[object]: turn on an object within reach.",
    "PowerOff": "PowerOff[object]: turn off an object within reach.",
    "Wait": "Wait[]: wait a while.",
    "Done": "Done[]: say that the task is finished.",
}
# Object types PARTNR's affordance table cleans "under a faucet" (others: "with a brush").
FAUCET_CLEANED = {"cup", "mug", "bowl", "plate", "glass", "kettle", "jug", "pitcher", "vase", "dish",
                  "pan", "pot", "bottle", "spoon", "fork", "knife", "sponge"}

SYNTAX_ERROR = "SyntaxError in Action directive. Opening '[' or closing ']' square bracket is missing!"
PLACE_API_ERROR = (
    "Wrong use of API for place or rearrange. Please use [obj, spatial_relation, furniture/floor, "
    "spatial_constraint, reference_object]. spatial_relation must be either on or within. "
    "spatial_constraint must be next_to or None. reference_object must be None or an object name."
)
_ACTION = re.compile(r"^\s*(?:Action:\s*)?([A-Za-z_]+)\s*\[(.*)\]\s*$")


@dataclass
class Action:
    tool: str
    args: str


def parse_action(text: str) -> Action | str:
    """Return the first ``Tool[args]`` line of planner text, or an error message for the planner."""
    if not isinstance(text, str) or not text.strip():
        return "No action found. Answer with a line like: Action: Navigate[table_1]"
    text = text.split("Assigned!")[0]
    for line in text.strip().splitlines():
        match = _ACTION.match(line)
        if match:
            return Action(match.group(1), match.group(2).strip())
    if "[" in text or "]" in text:
        return SYNTAX_ERROR
    return "No action found. Answer with a line like: Action: Navigate[table_1]"


def name_error(name: str) -> str:
    return f"Node with name {name} not present in the graph. Use the appropriate tool to get a valid name."


def failure(reason: str) -> str:
    return f"Unexpected failure! - {reason}"


class SkillExecutor:
    """Runs one high-level action on a world; ``on_step(n)`` is called once per recorded sim state."""

    def __init__(self, world: World, on_step: Callable[[int], None]):
        self.world = world
        self.on_step = on_step

    def run(self, action: Action) -> str:
        handler = getattr(self, f"_{action.tool.lower()}", None)
        if action.tool not in TOOLS or action.tool == "Done" or handler is None:
            return f'Tool "{action.tool}" not found'
        response, steps = handler(action.args)
        self.on_step(steps)
        return response

    # ------------------------------------------------------------ helpers

    def _nav_to(self, name: str) -> int:
        w = self.world
        dist = w.distance_to(name)
        if name in w.furniture:
            w.agent.near, w.agent.room = name, w.furniture[name].room
        elif name in w.objects:
            furn = w.object_furniture(name)
            if furn is not None:
                w.agent.near, w.agent.room = furn.name, furn.room
        else:  # a room
            w.agent.near, w.agent.room = None, name
        w.agent.position = w.position_of(name) if name not in w.rooms else w.room_center(name)
        return NAV_BASE + math.ceil(NAV_PER_METRE * dist)

    def _known(self, name: str) -> bool:
        w = self.world
        return name in w.furniture or name in w.objects or name in w.rooms

    def _single_arg(self, args: str) -> str | None:
        parts = [p.strip() for p in args.split(",")] if args.strip() else []
        return parts[0] if len(parts) == 1 and parts[0] else None

    # ------------------------------------------------------------ skills: (response, sim steps)

    def _navigate(self, args: str) -> tuple[str, int]:
        target = self._single_arg(args)
        if target is None:
            return "Wrong use of API for Navigate. Please use Navigate[target].", 0
        if not self._known(target):
            return name_error(target), 0
        return SUCCESS, self._nav_to(target)

    def _explore(self, args: str) -> tuple[str, int]:
        room = self._single_arg(args)
        if room is None:
            return "Wrong use of API for Explore. Please use Explore[room].", 0
        if room not in self.world.rooms:
            return name_error(room), 0
        furniture = [f.name for f in self.world.furniture.values() if f.room == room and not f.is_floor]
        if not furniture:
            return f"There is no furniture in {room} room. Explore another room.", FAILURE_STEPS
        return SUCCESS, sum(self._nav_to(name) for name in furniture)

    def _pick(self, args: str) -> tuple[str, int]:
        w = self.world
        name = self._single_arg(args)
        if name is None:
            return "Wrong use of API for Pick. Please use Pick[object].", 0
        if not self._known(name):
            return name_error(name), 0
        if name not in w.objects:
            return failure(f"Failed to pick! {name} is not an object."), FAILURE_STEPS
        if w.agent.held is not None:
            return failure(f"Failed to pick {name}! The arm is currently grasping {w.agent.held}. "
                           "Make the agent place the grasped object first."), FAILURE_STEPS
        obj = w.objects[name]
        furn = w.object_furniture(name)
        if not w.object_is_near(name):
            return failure("Failed to pick! Not close enough to the object."), FAILURE_STEPS
        if furn is not None and obj.relation == "within" and furn.articulated and not furn.is_open:
            return failure("Failed to pick! Object is in a closed furniture, you need to open the furniture "
                           "first."), FAILURE_STEPS
        obj.on, obj.held_by, w.agent.held = None, w.agent.name, name
        w.unlink(name)
        return SUCCESS, MANIPULATION_STEPS

    def _place(self, args: str) -> tuple[str, int]:
        w = self.world
        parts = [p.strip() for p in args.split(",")]
        if len(parts) != 5 or parts[1] not in ("on", "within") or parts[3] not in ("next_to", "None"):
            return PLACE_API_ERROR, 0
        name, relation, target, constraint, ref = parts
        if (constraint == "next_to") == (ref == "None"):
            return PLACE_API_ERROR, 0
        for entity in (name, target) + ((ref,) if ref != "None" else ()):
            if not self._known(entity):
                return name_error(entity), 0
        if w.agent.held is None:
            return failure("Failed to place! The agent is not holding any object."), FAILURE_STEPS
        if target not in w.furniture:
            return failure(f"Failed to place! {target} is not a furniture."), FAILURE_STEPS
        furn = w.furniture[target]
        if w.agent.near != target:
            return failure(f"Failed to place! Not close enough to {target} or occluded."), FAILURE_STEPS
        no_room = f"No valid placements found for entity {target}."
        if relation not in furn.receptacles or (relation == "within" and furn.articulated and not furn.is_open):
            return failure(no_room), FAILURE_STEPS
        if ref != "None":
            ref_obj = w.objects.get(ref)
            if ref_obj is None or ref_obj.on != target or ref == w.agent.held:
                return failure(f"{no_room} Try placing it without the next_to constraint, or on the "
                               "furniture the reference object is on."), FAILURE_STEPS
        held = w.objects[w.agent.held]  # PARTNR places whatever is held; the named object is not checked
        held.on, held.relation, held.held_by, w.agent.held = target, relation, None, None
        if ref != "None":
            w.next_to.add(frozenset((held.name, ref)))
        return SUCCESS, MANIPULATION_STEPS

    def _rearrange(self, args: str) -> tuple[str, int]:
        parts = [p.strip() for p in args.split(",")]
        if len(parts) != 5:
            return PLACE_API_ERROR, 0
        name, target = parts[0], parts[2]
        for entity in (name, target):
            if not self._known(entity):
                return name_error(entity), 0
        steps = self._nav_to(name)
        response, cost = self._pick(name)
        steps += cost
        if response != SUCCESS:
            return response, steps
        self.on_step(steps)  # the picked-up state is a recorded sim state of its own
        steps = self._nav_to(target) if target in self.world.furniture else 0
        response, cost = self._place(args)
        return response, steps + cost

    def _open_close(self, args: str, opening: bool) -> tuple[str, int]:
        verb = "Open" if opening else "Close"
        name = self._single_arg(args)
        if name is None:
            return f"Wrong use of API for {verb}. Please use {verb}[furniture].", 0
        if not self._known(name):
            return name_error(name), 0
        furn = self.world.furniture.get(name)
        if furn is None or not furn.articulated:
            done = "Opened" if opening else "Closed"
            return failure(f"Failed to {verb}! {name} is not articulated - and cannot be {done}."), FAILURE_STEPS
        if self.world.agent.near != name:
            return failure(f"Failed to {verb}! {name} is occluded or too far from agent to {verb}."), FAILURE_STEPS
        furn.is_open = opening
        return SUCCESS, MANIPULATION_STEPS

    def _open(self, args: str) -> tuple[str, int]:
        return self._open_close(args, True)

    def _close(self, args: str) -> tuple[str, int]:
        return self._open_close(args, False)

    def _state_target(self, args: str, tool: str, state: str) -> tuple[str | None, str | None]:
        """(object name, None) when the object is valid and affords ``state``, else (None, message)."""
        name = self._single_arg(args)
        if name is None:
            return None, f"Wrong use of API for {tool}. Please use {tool}[object]."
        if not self._known(name):
            return None, name_error(name)
        obj = self.world.objects.get(name)
        if obj is None or state not in obj.affordances:
            return None, failure(f"The targeted object does not afford the state: {state}")
        return name, None

    def _clean(self, args: str) -> tuple[str, int]:
        name, error = self._state_target(args, "Clean", "is_clean")
        if error:
            return error, FAILURE_STEPS if error.startswith("Unexpected") else 0
        w = self.world
        if not w.object_is_near(name):
            return failure(f"Agent too far from object to clean: {name}"), FAILURE_STEPS
        if w.objects[name].type in FAUCET_CLEANED and not w.near_faucet():
            return failure(f"Object {name} requires faucet to clean, but agent is not near faucet."), FAILURE_STEPS
        w.objects[name].states["is_clean"] = True
        return SUCCESS, STATE_STEPS

    def _fill(self, args: str) -> tuple[str, int]:
        name, error = self._state_target(args, "Fill", "is_filled")
        if error:
            return error, FAILURE_STEPS if error.startswith("Unexpected") else 0
        w = self.world
        if not w.object_is_near(name):
            return failure(f"Agent too far from object to fill: {name}"), FAILURE_STEPS
        if not w.near_faucet():
            return failure("The object is not close enough to a water source"), FAILURE_STEPS
        w.objects[name].states["is_filled"] = True
        return SUCCESS, STATE_STEPS

    def _pour(self, args: str) -> tuple[str, int]:
        w = self.world
        target = self._single_arg(args)
        if target is not None and self._known(target) and w.agent.held is None:
            return failure("Unable to pour: Agent is not holding an object"), FAILURE_STEPS
        name, error = self._state_target(args, "Pour", "is_filled")
        if error:
            return error, FAILURE_STEPS if error.startswith("Unexpected") else 0
        held = w.agent.held
        if not w.objects[held].states.get("is_filled", False):
            return failure("Unable to pour: The held object is not filled"), FAILURE_STEPS
        if name == held or not w.object_is_near(name):
            return failure(f"Unable to pour: {name} is too far from the agent"), FAILURE_STEPS
        w.objects[name].states["is_filled"] = True  # the source is not emptied, as in PARTNR
        return SUCCESS, STATE_STEPS

    def _power(self, args: str, on: bool) -> tuple[str, int]:
        tool = "PowerOn" if on else "PowerOff"
        name, error = self._state_target(args, tool, "is_powered_on")
        if error:
            return error, FAILURE_STEPS if error.startswith("Unexpected") else 0
        w = self.world
        if not w.object_is_near(name):
            return failure(f"Agent too far from object to power {'on' if on else 'off'}: "
                           f"Distance {w.distance_to(name):.2f}"), FAILURE_STEPS
        w.objects[name].states["is_powered_on"] = on
        return SUCCESS, STATE_STEPS

    def _poweron(self, args: str) -> tuple[str, int]:
        return self._power(args, True)

    def _poweroff(self, args: str) -> tuple[str, int]:
        return self._power(args, False)

    def _wait(self, args: str) -> tuple[str, int]:
        if args.strip():
            return "Wrong use of API for Wait. Please use Wait[].", 0
        return SUCCESS, WAIT_STEPS
