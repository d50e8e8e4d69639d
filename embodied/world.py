"""The symbolic world: rooms, furniture, objects and the agent, built from an episode's ``scene``.

Predicates are symbolic stand-ins for habitat-lab's geometric checks (documented approximations):

* ``is_on_top(o, f)``: o rests on furniture f (relation ``on``) or inside it (``within``) — Habitat's
  test is "f is below o", which a drawer's or cabinet's contents also pass (notes §2.5 Q3); objects
  held by the agent are on nothing;
* ``is_inside(o, f)``: o was placed ``within`` f;
* ``is_in_room(o, r)``: the room of o's furniture, or of the agent holding it;
* ``is_on_floor(o)``: o rests on a ``floor_<room>`` furniture;
* ``is_next_to(a, b)``: a Place/Rearrange with ``next_to`` recorded the pair (symmetric); the link is
  dropped when either object is picked up. ``is_clustered`` is connectivity over those links;
* object states (clean, filled, powered on) are exact; dirty/empty/off are their negations; an object
  that does not afford a state is an episode error (PARTNR raises KeyError there too).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from embodied.evaluation import PropositionResult

STATE_PREDICATES = {
    "is_clean": ("is_clean", True), "is_dirty": ("is_clean", False),
    "is_filled": ("is_filled", True), "is_empty": ("is_filled", False),
    "is_powered_on": ("is_powered_on", True), "is_powered_off": ("is_powered_on", False),
}
STATE_DEFAULTS = {"is_clean": False, "is_filled": False, "is_powered_on": False}
PLACEMENT_PREDICATES = ("is_on_top", "is_inside", "is_in_room", "is_on_floor", "is_next_to", "is_clustered")
PREDICATES = PLACEMENT_PREDICATES + tuple(STATE_PREDICATES)


@dataclass
class Furniture:
    name: str
    type: str
    room: str
    position: tuple[float, float]
    receptacles: list[str]
    articulated: bool = False
    is_open: bool = True
    components: list[str] = field(default_factory=list)

    @property
    def has_faucet(self) -> bool:
        return "faucet" in self.components

    @property
    def is_floor(self) -> bool:
        return self.type == "floor" or self.name.startswith("floor_")


@dataclass
class Obj:
    name: str
    type: str
    on: str | None  # furniture name, None while held
    relation: str  # "on" | "within"
    states: dict[str, bool]
    affordances: list[str]
    held_by: str | None = None


@dataclass
class Agent:
    name: str
    room: str
    position: tuple[float, float]
    near: str | None = None  # furniture the agent stands at (set by Navigate/Explore)
    held: str | None = None


class World:
    """Mutable world state of one episode."""

    def __init__(self, scene: dict[str, Any], object_states: dict[str, dict[str, bool]] | None = None):
        self.rooms: list[str] = list(scene["rooms"])
        self.furniture: dict[str, Furniture] = {}
        for f in scene["furniture"]:
            self.furniture[f["name"]] = Furniture(
                name=f["name"], type=f["type"], room=f["room"], position=tuple(f["position"]),
                receptacles=list(f.get("receptacles", ["on"])), articulated=bool(f.get("articulated", False)),
                is_open=bool(f.get("is_open", not f.get("articulated", False))),
                components=list(f.get("components", [])),
            )
        self.objects: dict[str, Obj] = {}
        for o in scene["objects"]:
            states = {s: STATE_DEFAULTS[s] for s in o.get("affordances", []) if s in STATE_DEFAULTS}
            states.update(o.get("states", {}))
            self.objects[o["name"]] = Obj(
                name=o["name"], type=o["type"], on=o["on"], relation=o.get("relation", "on"),
                states=states, affordances=list(o.get("affordances", [])),
            )
        for state_name, per_object in (object_states or {}).items():
            for handle, value in per_object.items():
                if handle in self.objects:
                    self.objects[handle].states[state_name] = bool(value)
        a = scene["agents"][0]
        self.agent = Agent(name=a["name"], room=a["room"], position=tuple(a.get("position", [0.0, 0.0])))
        self.next_to: set[frozenset[str]] = set()

    def copy(self) -> World:
        return copy.deepcopy(self)

    # ------------------------------------------------------------ geometry helpers

    def object_furniture(self, name: str) -> Furniture | None:
        obj = self.objects[name]
        return self.furniture[obj.on] if obj.on else None

    def object_room(self, name: str) -> str:
        furn = self.object_furniture(name)
        return furn.room if furn else self.agent.room

    def position_of(self, name: str) -> tuple[float, float]:
        if name in self.furniture:
            return self.furniture[name].position
        if name in self.objects:
            furn = self.object_furniture(name)
            return furn.position if furn else self.agent.position
        return self.room_center(name)

    def room_center(self, room: str) -> tuple[float, float]:
        points = [f.position for f in self.furniture.values() if f.room == room] or [(0.0, 0.0)]
        return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))

    def distance_to(self, name: str) -> float:
        x, y = self.position_of(name)
        return math.hypot(x - self.agent.position[0], y - self.agent.position[1])

    def object_is_near(self, name: str) -> bool:
        """Within reach: held by the agent, or on the furniture the agent stands at."""
        obj = self.objects[name]
        return obj.held_by == self.agent.name or (obj.on is not None and obj.on == self.agent.near)

    def near_faucet(self) -> bool:
        near = self.agent.near
        return near is not None and self.furniture[near].has_faucet

    def unlink(self, name: str) -> None:
        self.next_to = {pair for pair in self.next_to if name not in pair}

    # ------------------------------------------------------------ snapshot (for logs)

    def snapshot(self) -> dict[str, Any]:
        return {
            "agent": {"room": self.agent.room, "near": self.agent.near, "held": self.agent.held,
                      "position": list(self.agent.position)},
            "objects": {n: {"on": o.on, "relation": o.relation, "held_by": o.held_by, "states": dict(o.states)}
                        for n, o in self.objects.items()},
            "open": {n: f.is_open for n, f in self.furniture.items() if f.articulated},
            "next_to": sorted(sorted(p) for p in self.next_to),
        }

    # ------------------------------------------------------------ predicates

    def single(self, predicate: str, a: str, b: str | None) -> bool:
        if predicate in ("is_on_top", "is_inside"):
            obj = self.objects.get(a)
            if obj is None or obj.on != b:
                return False
            return obj.relation == "within" if predicate == "is_inside" else True
        if predicate == "is_in_room":
            return a in self.objects and self.object_room(a) == b and (
                self.objects[a].on is not None or self.objects[a].held_by is not None)
        if predicate == "is_next_to":
            return frozenset((a, b)) in self.next_to
        raise ValueError(f"unknown predicate {predicate!r}")

    def evaluate(self, proposition: dict[str, Any]) -> PropositionResult:
        name = proposition["function_name"]
        args = proposition.get("args", {})
        if name in ("is_on_top", "is_inside"):
            return self._set_predicate(name, args, "object_handles", "receptacle_handles",
                                       args.get("is_same_receptacle", False))
        if name == "is_in_room":
            return self._set_predicate(name, args, "object_handles", "room_ids", args.get("is_same_room", False))
        if name == "is_next_to":
            return self._set_predicate(name, args, "entity_handles_a", "entity_handles_b",
                                       args.get("is_same_b", False))
        if name == "is_on_floor":
            count, last = 0, ""
            for handle in args["object_handles"]:
                last = handle
                furn = self.object_furniture(handle) if handle in self.objects else None
                if furn is not None and furn.is_floor:
                    count += 1
                    if count >= args.get("number", 1):
                        return PropositionResult(True, {"object_handles": handle})
            return PropositionResult(False, {"object_handles": last})
        if name == "is_clustered":
            return self._clustered(args)
        if name in STATE_PREDICATES:
            state, wanted = STATE_PREDICATES[name]
            count, last = 0, ""
            for handle in args["object_handles"]:
                last = handle
                obj = self.objects[handle]
                if state not in obj.states:
                    raise KeyError(f"object {handle} does not afford {state}")
                if obj.states[state] == wanted:
                    count += 1
                    if count >= args.get("number", 1):
                        return PropositionResult(True, {"object_handles": handle})
            return PropositionResult(False, {"object_handles": last})
        raise ValueError(f"unknown predicate {name!r}")

    def _set_predicate(self, name: str, args: dict, key_a: str, key_b: str, same_b: bool) -> PropositionResult:
        """PARTNR's multi-handle rule: per-b counting when ``is_same_*``, else count satisfied pairs."""
        number = args.get("number", 1)
        handles_a, handles_b = args.get(key_a, []), args.get(key_b, [])
        # is_same_b: all `number` satisfied pairs must share one b; otherwise any pairs count.
        groups = ([[(a, b) for a in handles_a] for b in handles_b] if same_b
                  else [[(a, b) for a in handles_a for b in handles_b]])
        info = {key_a: "", key_b: ""}
        for pairs in groups:
            count = 0
            for a, b in pairs:
                info = {key_a: a, key_b: b}
                if self.single(name, a, b):
                    count += 1
                    if count >= number:
                        return PropositionResult(True, info)
        return PropositionResult(False, info)

    def _clustered(self, args: dict) -> PropositionResult:
        groups: list[list[str]] = [list(g) for g in args.get("*args", [])]
        numbers = args.get("number") or [1] * len(groups)
        handles = {h for g in groups for h in g}
        parent = {h: h for h in handles}

        def find(h: str) -> str:
            while parent[h] != h:
                parent[h] = parent[parent[h]]
                h = parent[h]
            return h

        for pair in self.next_to:
            a, b = tuple(pair)
            if a in parent and b in parent:
                parent[find(a)] = find(b)
        components: dict[str, set[str]] = {}
        for h in handles:
            components.setdefault(find(h), set()).add(h)
        for members in components.values():
            picked = [[h for h in g if h in members] for g in groups]
            if all(len(p) >= n for p, n in zip(picked, numbers, strict=True)):
                return PropositionResult(True, {"*args": tuple(picked)})
        return PropositionResult(False, {"*args": tuple([] for _ in groups)})

    # ------------------------------------------------------------ PARTNR's text world description

    def describe(self) -> str:
        lines = ["Furniture:"]
        for room in self.rooms:
            names = [f.name for f in self.furniture.values() if f.room == room]
            names.sort(key=lambda n: not self.furniture[n].is_floor)  # floor first, then scene order
            lines.append(f"{room}: {', '.join(names)}")
        faucets = [f.name for f in self.furniture.values() if f.has_faucet]
        if faucets:
            lines.append(f"The following furnitures have a faucet: {', '.join(faucets)}")
        lines.append(self.describe_objects())
        return "\n".join(lines)

    def describe_objects(self) -> str:
        lines = ["Objects:"]
        if not self.objects:
            lines.append("No objects found yet")
        for obj in self.objects.values():
            if obj.held_by:
                where = "held by the agent"
            else:
                where = f"{obj.on} in {self.furniture[obj.on].room}"
            states = ""
            if obj.states:
                states = ". States: " + ", ".join(
                    f"{s.removeprefix('is_')}: {v}" for s, v in sorted(obj.states.items()))
            lines.append(f"{obj.name}: {where}{states}")
        return "\n".join(lines)

