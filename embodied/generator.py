"""Seeded procedural PARTNR-style episodes: a small house, a task in one of PARTNR's families, a natural
instruction, PARTNR evaluation propositions/constraints, and a coherent correct/incorrect purpose pair.

Families (``info.constraint_type``): ``none`` (plain rearrangement: onto, into, to a room, n of m),
``spatial`` (next to, same receptacle, different receptacles, on the floor of a room, clustered),
``temporal`` (ordered steps, "there and back", three ordered steps) and ``heterogeneous`` (object
states — clean, fill, power — combined with rearrangement). Object and furniture vocabulary follows
PARTNR's instruction templates (``../shared/data/partnr/instruction_prompts``).

Every episode is checked: the oracle plan must reach success 1.0 and doing nothing must not.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

ROOM_FURNITURE = {
    "living_room": [("table", ["on"], False), ("couch", ["on"], False), ("shelves", ["on"], False),
                    ("cabinet", ["on", "within"], True), ("chest_of_drawers", ["on", "within"], True)],
    "kitchen": [("counter", ["on"], False), ("cabinet", ["on", "within"], True), ("table", ["on"], False)],
    "bedroom": [("bed", ["on"], False), ("table", ["on"], False), ("chest_of_drawers", ["on", "within"], True),
                ("shelves", ["on"], False)],
    "dining_room": [("table", ["on"], False), ("cabinet", ["on", "within"], True), ("chair", ["on"], False)],
    "office": [("table", ["on"], False), ("shelves", ["on"], False), ("cabinet", ["on", "within"], True)],
    "bathroom": [("counter", ["on"], False), ("cabinet", ["on", "within"], True)],
}
# object type -> affordances (PARTNR's affordance table, abridged)
OBJECT_TYPES = {
    "cup": ["is_clean", "is_filled"], "mug": ["is_clean", "is_filled"], "bowl": ["is_clean"],
    "plate": ["is_clean"], "kettle": ["is_clean", "is_filled", "is_powered_on"],
    "vase": ["is_clean", "is_filled"], "jug": ["is_clean", "is_filled"], "candle": [],
    "candle_holder": ["is_clean"], "plant_container": [], "book": [], "laptop": ["is_powered_on"],
    "lamp": ["is_powered_on"], "toy_airplane": ["is_clean"], "shoe": ["is_clean"], "basket": [],
    "box": [], "picture_frame": ["is_clean"], "stuffed_toy": ["is_clean"], "phone_stand": [],
    "toaster": ["is_clean", "is_powered_on"], "kitchen_utensil": ["is_clean"], "hand_towel": [],
    "tablet": ["is_powered_on"], "speaker": ["is_powered_on"], "sponge": [],
}
ROOM_PURPOSE = {
    "living_room": ("decoration", "decorate the living room"),
    "kitchen": ("cooking dinner", "prepare dinner in the kitchen"),
    "bedroom": ("a bedtime routine", "get the bedroom ready for the night"),
    "dining_room": ("a family dinner", "set up the dining room for dinner"),
    "office": ("a work session", "set up the office for work"),
    "bathroom": ("a morning routine", "get the bathroom ready for the morning"),
}


def _said(name: str) -> str:
    return name.rsplit("_", 1)[0].replace("_", " ")


def _room_said(room: str) -> str:
    return room.rsplit("_", 1)[0].replace("_", " ")


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + (", and " if len(items) > 2 else " and ") + items[-1]


def _the(names: list[str]) -> str:
    return _join([f"the {_said(n)}" for n in names])


def _purposes(action: str, correct: tuple[str, str], incorrect: tuple[str, str]) -> dict[str, Any]:
    return {"action": action,
            "correct": {"purpose": correct[0], "goal": correct[1], "stance": "appropriate"},
            "incorrect": {"purpose": incorrect[0], "goal": incorrect[1], "stance": "inappropriate"}}


class House:
    """A procedural house; names follow PARTNR's world graph (``<type>_<N>``, ``floor_<room>``)."""

    def __init__(self, rng: random.Random, n_objects: int, extra_tables: bool = False):
        self.rng = rng
        kinds = ["living_room", "kitchen"] + rng.sample(["bedroom", "dining_room", "office", "bathroom"], 2)
        self.rooms = [f"{k}_1" for k in kinds]
        self.furniture: list[dict[str, Any]] = []
        counter = rng.randint(10, 20)
        for r, room in enumerate(self.rooms):
            kind = room[:-2]
            ox, oy = 6.0 * (r % 2), 6.0 * (r // 2)
            self.furniture.append(self._furn(f"floor_{room}", "floor", room, ox + 2.5, oy + 2.5, ["on"], False))
            types = list(ROOM_FURNITURE[kind])
            picked = rng.sample(types, min(len(types), rng.randint(2, 3)))
            if kind == "kitchen":
                picked = [t for t in picked if t[0] != "counter"] + [("counter", ["on"], False)]
            if extra_tables and kind == "living_room":
                picked = [t for t in picked if t[0] != "table"] + [("table", ["on"], False)] * 2
            for ftype, recs, articulated in picked:
                self.furniture.append(self._furn(f"{ftype}_{counter}", ftype, room, ox + rng.uniform(0.5, 5.5),
                                                 oy + rng.uniform(0.5, 5.5), recs, articulated))
                counter += 1
            if kind in ("kitchen", "bathroom"):
                self.furniture.append(self._furn(f"sink_{counter}", "sink", room, ox + rng.uniform(0.5, 5.5),
                                                 oy + rng.uniform(0.5, 5.5), ["on"], False, ["faucet"]))
                counter += 1
        self.objects: list[dict[str, Any]] = []
        self.n_objects = n_objects
        self.agent = {"name": "agent_0", "room": rng.choice(self.rooms), "position": [0.0, 0.0]}

    @staticmethod
    def _furn(name, ftype, room, x, y, recs, articulated, components=None) -> dict[str, Any]:
        return {"name": name, "type": ftype, "room": room, "position": [round(x, 2), round(y, 2)],
                "receptacles": list(recs), "articulated": articulated, "is_open": not articulated,
                "components": list(components or [])}

    def add_object(self, otype: str, furniture: dict[str, Any], states: dict[str, bool] | None = None) -> str:
        name = f"{otype}_{len(self.objects)}"
        within = "within" in furniture["receptacles"] and self.rng.random() < 0.5
        self.objects.append({"name": name, "type": otype, "on": furniture["name"],
                             "relation": "within" if within else "on", "states": dict(states or {}),
                             "affordances": list(OBJECT_TYPES[otype])})
        return name

    def surfaces(self, room: str | None = None, exclude: set[str] = frozenset()) -> list[dict[str, Any]]:
        return [f for f in self.furniture if f["type"] not in ("floor", "sink") and f["name"] not in exclude
                and (room is None or f["room"] == room)]

    def unique_in_room(self, furn: dict[str, Any]) -> bool:
        return sum(f["type"] == furn["type"] and f["room"] == furn["room"] for f in self.furniture) == 1

    def fill_clutter(self) -> None:
        while len(self.objects) < self.n_objects:
            otype = self.rng.choice(sorted(OBJECT_TYPES))
            if any(o["type"] == otype for o in self.objects):
                continue
            self.add_object(otype, self.rng.choice(self.surfaces()))

    def scene(self) -> dict[str, Any]:
        return {"rooms": self.rooms, "furniture": self.furniture, "objects": self.objects, "agents": [self.agent]}


def _furn_said(f: dict[str, Any]) -> str:
    return f"the {_said(f['name'])} in the {_room_said(f['room'])}"


def _prop(fn: str, **args: Any) -> dict[str, Any]:
    return {"function_name": fn, "args": args}


def _on_top(objs: list[str], recs: list[str], **kw: Any) -> dict[str, Any]:
    return _prop("is_on_top", object_handles=objs, receptacle_handles=recs, number=kw.pop("number", 1),
                 is_same_receptacle=kw.pop("same", False))


def _terminal(indices: list[int], n: int) -> dict[str, Any]:
    return {"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": indices, "n_propositions": n}}


class TaskBuilder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.house = House(rng, n_objects=rng.randint(4, 6))

    def types(self, k: int, need: str | None = None) -> list[str]:
        pool = sorted(t for t, aff in OBJECT_TYPES.items() if need is None or need in aff)
        return self.rng.sample(pool, k)

    def destination(self, room: str | None = None, within: bool = False, exclude=frozenset()) -> dict[str, Any]:
        options = [f for f in self.house.surfaces(room, set(exclude)) if self.house.unique_in_room(f)
                   and ("within" in f["receptacles"]) == within]
        return self.rng.choice(options)

    def place_away(self, otypes: list[str], away_from: dict[str, Any] | None, states=None) -> list[str]:
        names = []
        for otype in otypes:
            options = [f for f in self.house.surfaces() if away_from is None or f["room"] != away_from["room"]]
            names.append(self.house.add_object(otype, self.rng.choice(options), (states or {}).get(otype)))
        return names


# ---------------------------------------------------------------- families: return episode parts

Family = Callable[[TaskBuilder], tuple[str, list, list, list, dict]]


def fam_move(b: TaskBuilder):
    dest = b.destination()
    objs = b.place_away(b.types(b.rng.randint(1, 3)), dest)
    props = [_on_top([o], [dest["name"]]) for o in objs]
    what = _the(objs)
    room = dest["room"][:-2]
    instruction = f"Move {what} to {_furn_said(dest)}."
    action = f"putting {what} on the {_said(dest['name'])}"
    return instruction, props, [], [_terminal(list(range(len(props))), len(props))], _purposes(
        action, ROOM_PURPOSE[room], (f"clearing the {_said(dest['name'])}",
                                     f"clear the {_said(dest['name'])} in the {_room_said(dest['room'])}"))


def fam_store(b: TaskBuilder):
    dest = b.destination(within=True)
    objs = b.place_away(b.types(b.rng.randint(1, 2)), dest)
    props = [_prop("is_inside", object_handles=[o], receptacle_handles=[dest["name"]], number=1,
                   is_same_receptacle=False) for o in objs]
    what = _the(objs)
    return (f"Put {what} away in {_furn_said(dest)}.", props, [], [_terminal(list(range(len(props))), len(props))],
            _purposes(f"putting {what} in the {_said(dest['name'])}",
                      ("tidying up", f"tidy up the {_room_said(dest['room'])}"),
                      ("display", f"show off {what} to guests")))


def fam_bring(b: TaskBuilder):
    room = b.rng.choice(b.house.rooms)
    objs = b.place_away(b.types(b.rng.randint(1, 2)), {"room": room})
    props = [_prop("is_in_room", object_handles=[o], room_ids=[room], number=1, is_same_room=False) for o in objs]
    what = _the(objs)
    return (f"Bring {what} to the {_room_said(room)}.", props, [], [_terminal(list(range(len(props))), len(props))],
            _purposes(f"bringing {what} to the {_room_said(room)}", ROOM_PURPOSE[room[:-2]],
                      ("emptying the room", f"empty the {_room_said(room)}")))


def fam_n_of_m(b: TaskBuilder):
    dest = b.destination()
    otype = b.types(1)[0]
    objs = b.place_away([otype] * 3, dest)
    props = [_on_top(objs, [dest["name"]], number=2)]
    plural = _said(objs[0]) + "s"
    return (f"Put two of the three {plural} on {_furn_said(dest)}.", props, [], [_terminal([0], 1)],
            _purposes(f"putting two {plural} on the {_said(dest['name'])}", ROOM_PURPOSE[dest["room"][:-2]],
                      (f"clearing the {_said(dest['name'])}", f"clear the {_said(dest['name'])}")))


def fam_next_to(b: TaskBuilder):
    dest = b.destination()
    objs = b.place_away(b.types(2), dest)
    props = [_on_top([objs[0]], [dest["name"]]), _on_top([objs[1]], [dest["name"]]),
             _prop("is_next_to", entity_handles_a=[objs[0]], entity_handles_b=[objs[1]], number=1,
                   is_same_b=False, l2_threshold=0.5)]
    what = _the(objs)
    return (f"Move {what} to {_furn_said(dest)} and place them next to each other.", props, [],
            [_terminal([0, 1, 2], 3)],
            _purposes(f"placing {what} next to each other on the {_said(dest['name'])}",
                      ("organizing", "keep related items together"),
                      ("spreading things out", f"spread things out across the {_room_said(dest['room'])}")))


def _two_tables(b: TaskBuilder) -> list[str]:
    b.house = House(b.rng, n_objects=b.house.n_objects, extra_tables=True)
    return [f["name"] for f in b.house.furniture if f["type"] == "table" and f["room"] == "living_room_1"]


def fam_same(b: TaskBuilder):
    tables = _two_tables(b)
    objs = b.place_away(b.types(2), {"room": "living_room_1"})
    props = [_on_top([objs[0]], tables), _on_top([objs[1]], tables)]
    cons = [{"type": "SameArgConstraint", "args": {"proposition_indices": [0, 1],
             "arg_names": ["receptacle_handles", "receptacle_handles"], "n_propositions": 2}}, _terminal([0, 1], 2)]
    what = _the(objs)
    return (f"Put {what} on the same table in the living room.", props, [], cons,
            _purposes(f"putting {what} on the same table", ("grouping things", "keep the items together"),
                      ("spreading things out", "spread the items across the living room")))


def fam_different(b: TaskBuilder):
    tables = _two_tables(b)
    objs = b.place_away(b.types(2), {"room": "living_room_1"})
    props = [_on_top([objs[0]], tables), _on_top([objs[1]], tables)]
    cons = [{"type": "DifferentArgConstraint", "args": {"proposition_indices": [0, 1],
             "arg_names": ["receptacle_handles", "receptacle_handles"], "n_propositions": 2}}, _terminal([0, 1], 2)]
    what = _the(objs)
    return (f"Put {what} on different tables in the living room.", props, [], cons,
            _purposes(f"putting {what} on different tables", ("spreading things out",
                      "spread the items across the living room"), ("grouping things", "keep the items together")))


def fam_floor(b: TaskBuilder):
    room = b.rng.choice(b.house.rooms)
    objs = b.place_away(b.types(1), None)
    props = [_prop("is_on_floor", object_handles=objs, number=1),
             _prop("is_in_room", object_handles=objs, room_ids=[room], number=1, is_same_room=False)]
    what = _the(objs)
    return (f"Put {what} on the floor in the {_room_said(room)}.", props, [], [_terminal([0, 1], 2)],
            _purposes(f"putting {what} on the floor", ("freeing up the furniture", "free up space on the furniture"),
                      ("keeping the floor clear", f"keep the floor of the {_room_said(room)} clear")))


def fam_cluster(b: TaskBuilder):
    dest = b.destination()
    objs = b.place_away(b.types(3), dest)
    props = [_on_top([o], [dest["name"]]) for o in objs]
    props.append(_prop("is_clustered", **{"*args": [[o] for o in objs], "number": [1, 1, 1]}))
    what = _the(objs)
    return (f"Gather {what} together on {_furn_said(dest)}.", props, [], [_terminal([0, 1, 2, 3], 4)],
            _purposes(f"gathering {what} together on the {_said(dest['name'])}",
                      ("organizing", "keep related items together"),
                      ("spreading things out", f"spread things out across the {_room_said(dest['room'])}")))


def fam_ordered(b: TaskBuilder):
    first = b.destination()
    second = b.destination(within=True, exclude={first["name"]})
    objs = b.place_away(b.types(1), first) + b.place_away(b.types(1), second)
    props = [_on_top([objs[0]], [first["name"]]),
             _prop("is_inside", object_handles=[objs[1]], receptacle_handles=[second["name"]], number=1,
                   is_same_receptacle=False)]
    cons = [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]], "n_propositions": 2}}, _terminal([0, 1], 2)]
    return (f"First move the {_said(objs[0])} to {_furn_said(first)}, then put the {_said(objs[1])} in "
            f"{_furn_said(second)}.", props, [], cons,
            _purposes(f"moving the {_said(objs[0])} and then storing the {_said(objs[1])}",
                      ("tidying up", "tidy up the house"), ("making a mess", "leave things lying around")))


def fam_there_and_back(b: TaskBuilder):
    first = b.destination()
    objs = b.place_away(b.types(1), first)
    home = b.house.objects[-1]
    home["relation"] = "on"
    props = [_on_top(objs, [first["name"]]), _on_top(objs, [home["on"]])]
    deps = [{"proposition_indices": [1], "depends_on": [0], "relation_type": "after_satisfied",
             "dependency_mode": "all"}]
    cons = [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]], "n_propositions": 2}}, _terminal([1], 2)]
    what = _the(objs)
    back = next(f for f in b.house.furniture if f["name"] == home["on"])
    return (f"Move {what} to {_furn_said(first)}, then bring it back to {_furn_said(back)}.",
            props, deps, cons,
            _purposes(f"moving {what} to the {_said(first['name'])} and back",
                      ("cleaning under it", f"wipe the {_said(back['name'])} clean"),
                      ("moving out", f"pack {what} away for good")))


def fam_three_steps(b: TaskBuilder):
    dests = [b.destination()]
    dests.append(b.destination(exclude={dests[0]["name"]}))
    busy = {d["name"] for d in dests}
    objs = [b.house.add_object(t, b.rng.choice(b.house.surfaces(exclude=busy))) for t in b.types(3)]
    targets = [dests[0], dests[1], dests[0]]
    props = [_on_top([o], [t["name"]]) for o, t in zip(objs, targets, strict=True)]
    cons = [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1], [1, 2]], "n_propositions": 3}},
            _terminal([0, 1, 2], 3)]
    o = [_said(x) for x in objs]
    return (f"Move the {o[0]} to {_furn_said(dests[0])}, then the {o[1]} to {_furn_said(dests[1])}, and "
            f"finally the {o[2]} to the {_said(dests[0]['name'])}.", props, [], cons,
            _purposes(f"moving the {o[0]}, the {o[1]} and the {o[2]} in that order", ("a house party",
                      "get the house ready for guests"), ("a deep clean", "clear every surface in the house")))


def fam_clean_and_move(b: TaskBuilder):
    dest = b.destination()
    otype = b.types(1, need="is_clean")[0]
    objs = b.place_away([otype], dest, states={otype: {"is_clean": False}})
    props = [_prop("is_clean", object_handles=objs, number=1), _on_top(objs, [dest["name"]])]
    cons = [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]], "n_propositions": 2}}, _terminal([0, 1], 2)]
    what = _the(objs)
    return (f"Clean {what} and then put it on {_furn_said(dest)}.", props, [], cons,
            _purposes(f"cleaning {what} and putting it on the {_said(dest['name'])}",
                      ("hygiene", f"make sure {what} is clean to use"), ("saving water", "avoid wasting water")))


def fam_fill_and_power(b: TaskBuilder):
    filled = b.types(1, need="is_filled")[0]
    powered = b.rng.choice([t for t in sorted(OBJECT_TYPES) if "is_powered_on" in OBJECT_TYPES[t] and t != filled])
    objs = b.place_away([filled, powered], None, states={filled: {"is_filled": False},
                                                         powered: {"is_powered_on": False}})
    props = [_prop("is_filled", object_handles=[objs[0]], number=1),
             _prop("is_powered_on", object_handles=[objs[1]], number=1)]
    return (f"Fill the {_said(objs[0])} with water and turn on the {_said(objs[1])}.", props, [],
            [_terminal([0, 1], 2)],
            _purposes(f"filling the {_said(objs[0])} and turning on the {_said(objs[1])}",
                      ("making tea", "make tea"), ("saving energy", "save water and electricity")))


def fam_power_off_and_bring(b: TaskBuilder):
    room = b.rng.choice(b.house.rooms)
    powered = b.rng.choice([t for t in sorted(OBJECT_TYPES) if "is_powered_on" in OBJECT_TYPES[t]])
    other = b.rng.choice([t for t in sorted(OBJECT_TYPES) if t != powered])
    objs = b.place_away([powered], None, states={powered: {"is_powered_on": True}})
    objs += b.place_away([other], {"room": room})
    props = [_prop("is_powered_off", object_handles=[objs[0]], number=1),
             _prop("is_in_room", object_handles=[objs[1]], room_ids=[room], number=1, is_same_room=False)]
    return (f"Turn off the {_said(objs[0])} and bring the {_said(objs[1])} to the {_room_said(room)}.", props, [],
            [_terminal([0, 1], 2)],
            _purposes(f"turning off the {_said(objs[0])} and bringing the {_said(objs[1])} to the "
                      f"{_room_said(room)}", ("saving energy", "save electricity"),
                      ("keeping things running", f"keep the {_said(objs[0])} running")))


FAMILIES: dict[str, list[Family]] = {
    "none": [fam_move, fam_store, fam_bring, fam_n_of_m],
    "spatial": [fam_next_to, fam_same, fam_different, fam_floor, fam_cluster],
    "temporal": [fam_ordered, fam_there_and_back, fam_three_steps],
    "heterogeneous": [fam_clean_and_move, fam_fill_and_power, fam_power_off_and_bring],
}


def kind_for(index: int) -> str:
    """Kinds cycle none/spatial/temporal; every tenth episode is heterogeneous instead."""
    if index % 10 == 9:
        return "heterogeneous"
    return ("none", "spatial", "temporal")[index % 3]


def make_episode(seed: int, index: int, max_tries: int = 50) -> dict[str, Any]:
    from framebench.embodied.checks import solvable_not_trivial

    kind = kind_for(index)
    for attempt in range(max_tries):
        rng = random.Random(f"{seed}:{index}:{attempt}")
        builder = TaskBuilder(rng)
        ordinal = sum(kind_for(j) == kind for j in range(index))
        family = FAMILIES[kind][(ordinal + attempt) % len(FAMILIES[kind])]
        try:
            instruction, props, deps, cons, purposes = family(builder)
        except (IndexError, ValueError, StopIteration):
            continue  # the house lacks what this family needs; draw another
        builder.house.fill_clutter()
        episode_id = f"robo_{seed}_{index:04d}"
        episode = {
            "episode_id": episode_id, "scene_id": f"procedural_{seed}_{index}",
            "instruction": instruction,
            "evaluation_propositions": props,
            "evaluation_proposition_dependencies": deps,
            "evaluation_constraints": cons,
            "object_states": {},
            "scene": builder.house.scene(),
            "info": {"constraint_type": kind, "family": family.__name__.removeprefix("fam_"),
                     "purposes": purposes, "extra_info": {"episode_id": episode_id, "instruction": instruction}},
        }
        if solvable_not_trivial(episode):
            return episode
    raise RuntimeError(f"could not generate a valid {kind} episode for index {index}")


def generate(n: int, seed: int = 0, progress: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    episodes = []
    for index in range(n):
        episodes.append(make_episode(seed, index))
        if progress:
            progress()
    return episodes
