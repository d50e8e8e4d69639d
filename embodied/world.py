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

Several handles are counted as PARTNR's ``set_predicate`` counts them (pairs, or per b with
``is_same_*``). ``World(..., partnr_compat=True)`` adds PARTNR's counting quirks 1 and 2 (a failed
count returns the last pair's result; a single handle ignores ``number``), see ``datasets/robotics.md``.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any

from framebench.embodied.evaluation import PropositionResult

STATE_PREDICATES = {
    "is_clean": ("is_clean", True), "is_dirty": ("is_clean", False),
    "is_filled": ("is_filled", True), "is_empty": ("is_filled", False),
    "is_powered_on": ("is_powered_on", True), "is_powered_off": ("is_powered_on", False),
}
STATE_DEFAULTS = {"is_clean": False, "is_filled": False, "is_powered_on": False}
PLACEMENT_PREDICATES = ("is_on_top", "is_inside", "is_in_room", "is_on_floor", "is_next_to", "is_clustered")
PREDICATES = PLACEMENT_PREDICATES + tuple(STATE_PREDICATES)
# predicate -> (a-handle arg, b-handle arg or None, is_same_* flag or None); is_clustered takes *args
HANDLE_ARGS: dict[str, tuple[str, str | None, str | None]] = {
    "is_on_top": ("object_handles", "receptacle_handles", "is_same_receptacle"),
    "is_inside": ("object_handles", "receptacle_handles", "is_same_receptacle"),
    "is_in_room": ("object_handles", "room_ids", "is_same_room"),
    "is_next_to": ("entity_handles_a", "entity_handles_b", "is_same_b"),
    "is_on_floor": ("object_handles", None, None),
    **{name: ("object_handles", None, None) for name in STATE_PREDICATES},
}


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

    def __init__(self, scene: dict[str, Any], object_states: dict[str, dict[str, bool]] | None = None,
                 partnr_compat: bool = False):
        self.partnr_compat = partnr_compat
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
        """An independent world: everything a skill can change (the agent, each object and its
        states, furniture open/closed, next-to pairs) is copied; names, positions and lists that
        only the constructor writes are shared. A planner probes every candidate call on one, so
        this is ~10x cheaper than ``copy.deepcopy``."""
        new = copy.copy(self)
        new.agent = copy.copy(self.agent)
        new.furniture = {n: copy.copy(f) for n, f in self.furniture.items()}
        new.objects = {n: replace(o, states=dict(o.states)) for n, o in self.objects.items()}
        new.next_to = set(self.next_to)
        return new

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

    def holds(self, predicate: str, a: str, b: str | None = None) -> bool:
        """One handle (and, for two-list predicates, one b) against one predicate."""
        if predicate == "is_on_floor":
            furn = self.object_furniture(a) if a in self.objects else None
            return furn is not None and furn.is_floor
        if predicate in STATE_PREDICATES:
            state, wanted = STATE_PREDICATES[predicate]
            obj = self.objects[a]
            if state not in obj.states:
                raise KeyError(f"object {a} does not afford {state}")
            return obj.states[state] == wanted
        return self.single(predicate, a, b)

    def evaluate(self, proposition: dict[str, Any]) -> PropositionResult:
        name = proposition["function_name"]
        args = proposition.get("args", {})
        if name == "is_clustered":
            return self._clustered(args)
        if name not in PREDICATES:
            raise ValueError(f"unknown predicate {name!r}")
        key_a, key_b, same_key = HANDLE_ARGS[name]
        return self._set_predicate(name, args, key_a, key_b, bool(args.get(same_key, False)) if same_key else False)

    def _set_predicate(self, name: str, args: dict, key_a: str, key_b: str | None,
                       same_b: bool) -> PropositionResult:
        """PARTNR's multi-handle rule: per-b counting when ``is_same_*``, else count satisfied pairs.

        Under ``partnr_compat`` two of PARTNR's quirks apply: one a-handle with at most one b-handle
        is judged alone, whatever ``number`` says (quirk 2); and when the count never reaches
        ``number`` the result is that of the last pair evaluated (quirk 1)."""
        number = args.get("number", 1)
        handles_a = list(args.get(key_a, []))
        handles_b: list[str | None] = list(args.get(key_b, [])) if key_b else [None]

        def info(a: str, b: str | None) -> dict[str, Any]:
            return {key_a: a} if key_b is None else {key_a: a, key_b: b}

        if self.partnr_compat and len(handles_a) == 1 and len(handles_b) == 1:
            a, b = handles_a[0], handles_b[0]
            ok = self.holds(name, a, b)
            return PropositionResult(ok, info(a, b) if ok else info("", ""))
        # is_same_b: all `number` satisfied pairs must share one b; otherwise any pairs count.
        groups = ([[(a, b) for a in handles_a] for b in handles_b] if same_b
                  else [[(a, b) for a in handles_a for b in handles_b]])
        last: tuple[str, str | None] = ("", "")
        last_ok = False
        for pairs in groups:
            count = 0
            for a, b in pairs:
                last, last_ok = (a, b), self.holds(name, a, b)
                if last_ok:
                    count += 1
                    if count >= number:
                        return PropositionResult(True, info(a, b))
        if self.partnr_compat and last_ok:
            return PropositionResult(True, info(*last))
        return PropositionResult(False, info(*last))

    def _clustered(self, args: dict) -> PropositionResult:
        """Connected components of the next-to links over the listed handles; the largest component
        that holds ``number[i]`` handles of every group satisfies it (ties: by sorted member names)."""
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
        for members in sorted(components.values(), key=lambda m: (-len(m), sorted(m))):
            picked = [[h for h in g if h in members] for g in groups]
            if all(len(p) >= n for p, n in zip(picked, numbers, strict=True)):
                return PropositionResult(True, {"*args": tuple(picked)})
        return PropositionResult(False, {"*args": tuple([] for _ in groups)})

    # ------------------------------------------------------------ PARTNR's text world description

    def describe(self) -> str:
        return f"{self._furniture_text}\n{self.describe_objects()}"

    @functools.cached_property
    def _furniture_text(self) -> str:
        """The furniture part of ``describe``: no skill changes it (the env observes every step)."""
        lines = ["Furniture:"]
        for room in self.rooms:
            names = [f.name for f in self.furniture.values() if f.room == room]
            names.sort(key=lambda n: not self.furniture[n].is_floor)  # floor first, then scene order
            lines.append(f"{room}: {', '.join(names)}")
        faucets = [f.name for f in self.furniture.values() if f.has_faucet]
        if faucets:
            lines.append(f"The following furnitures have a faucet: {', '.join(faucets)}")
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

