"""The oracle planner: compiles an episode's propositions and constraints into a valid skill plan.

Like PARTNR's scripted heuristic planner it works on full knowledge of the world. Propositions are
ordered by the Temporal DAG and the dependencies (what a proposition depends on comes first;
``before_satisfied`` reverses that), then each one is made true by Navigate/Open/Pick/Place and the
object-state skills, choosing receptacles that honour Same/DifferentArg constraints and the other
propositions on the same object that are not ordered against it. The plan is checked by running it
on a copy of the world; a skill failure is an ``OracleError``.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from framebench.embodied.skills import FAUCET_CLEANED, SUCCESS, Action, SkillExecutor
from framebench.embodied.world import World


class OracleError(RuntimeError):
    """The oracle cannot build a plan for this episode."""


_STATE_GOALS = {"is_clean": ("Clean", "is_clean", True), "is_filled": ("Fill", "is_filled", True),
                "is_powered_on": ("PowerOn", "is_powered_on", True),
                "is_powered_off": ("PowerOff", "is_powered_on", False)}


def proposition_order(episode: dict[str, Any]) -> tuple[list[int], nx.DiGraph]:
    props = episode["evaluation_propositions"]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(props)))
    for con in episode.get("evaluation_constraints", []):
        if con["type"] == "TemporalConstraint":
            graph.add_edges_from(tuple(e) for e in con["args"]["dag_edges"])
    for dep in episode.get("evaluation_proposition_dependencies", []):
        for gated in dep["proposition_indices"]:
            for other in dep["depends_on"]:
                if dep["relation_type"] == "before_satisfied":
                    graph.add_edge(gated, other)
                else:
                    graph.add_edge(other, gated)
    if not nx.is_directed_acyclic_graph(graph):
        raise OracleError("propositions cannot be ordered (cyclic temporal/dependency structure)")
    return list(nx.lexicographical_topological_sort(graph)), graph


class OracleCompiler:
    def __init__(self, episode: dict[str, Any]):
        self.episode = episode
        self.props = episode["evaluation_propositions"]
        self.world = World(episode["scene"], episode.get("object_states"))
        self.plan: list[str] = []
        self.chosen: dict[int, str] = {}  # proposition -> receptacle/room it was satisfied with
        self.order, self.graph = proposition_order(episode)

    # ------------------------------------------------------------ plan building

    def do(self, text: str) -> None:
        action = Action(text.split("[", 1)[0], text.split("[", 1)[1][:-1])
        response = SkillExecutor(self.world, lambda steps: None).run(action)
        if response != SUCCESS:
            raise OracleError(f"episode {self.episode['episode_id']}: {text} -> {response}")
        self.plan.append(text)

    def compile(self) -> list[str]:
        for idx in self.order:
            self.achieve(idx)
        self.plan.append("Done[]")
        return self.plan

    def unordered_with(self, idx: int) -> list[int]:
        related = nx.ancestors(self.graph, idx) | nx.descendants(self.graph, idx) | {idx}
        return [i for i in range(len(self.props)) if i not in related]

    def arg_peers(self, idx: int, kind: str) -> list[int]:
        peers = []
        for con in self.episode.get("evaluation_constraints", []):
            if con["type"] == kind and idx in con["args"]["proposition_indices"]:
                peers += [i for i in con["args"]["proposition_indices"] if i != idx]
        return peers

    def achieve(self, idx: int) -> None:
        prop = self.props[idx]
        fn, args = prop["function_name"], prop["args"]
        if fn in ("is_on_top", "is_inside", "is_in_room"):
            self.achieve_placement(idx, fn, args)
        elif fn == "is_on_floor":
            for obj in self.pick_objects(args["object_handles"], args.get("number", 1),
                                         lambda o: self.world.object_furniture(o).is_floor):
                self.move(obj, self.destination(obj, idx, {"floor": True}))
        elif fn == "is_next_to":
            a_list, b_list = args["entity_handles_a"], args["entity_handles_b"]
            done = sum(self.world.single("is_next_to", a, b) for a in a_list for b in b_list)
            for a in a_list:
                if done >= args.get("number", 1):
                    break
                b = next((b for b in b_list if b != a and b in self.world.objects), None)
                if b is None or self.world.single("is_next_to", a, b):
                    continue
                self.move(a, (self.world.objects[b].on, "on", b))
                done += 1
        elif fn == "is_clustered":
            groups, numbers = args["*args"], args.get("number") or [1] * len(args["*args"])
            anchor = groups[0][0]
            for group, n in zip(groups, numbers, strict=True):
                members = [anchor] if anchor in group else []
                for obj in group:
                    if len(members) >= n:
                        break
                    if obj != anchor:
                        self.move(obj, (self.world.objects[anchor].on, "on", anchor))
                        members.append(obj)
        elif fn in _STATE_GOALS:
            tool, state, wanted = _STATE_GOALS[fn]
            for obj in self.pick_objects(args["object_handles"], args.get("number", 1),
                                         lambda o: self.world.objects[o].states.get(state) == wanted):
                self.change_state(obj, tool)
        else:
            raise OracleError(f"episode {self.episode['episode_id']}: the oracle cannot achieve {fn}")

    def pick_objects(self, handles: list[str], number: int, satisfied) -> list[str]:
        already = [h for h in handles if satisfied(h)]
        todo = [h for h in handles if not satisfied(h)]
        return todo[: max(0, number - len(already))]

    def achieve_placement(self, idx: int, fn: str, args: dict[str, Any]) -> None:
        key = "room_ids" if fn == "is_in_room" else "receptacle_handles"
        targets = list(args[key])
        same = self.arg_peers(idx, "SameArgConstraint")
        fixed = [self.chosen[p] for p in same if p in self.chosen and self.chosen[p] in targets]
        if fixed:
            targets = fixed[:1]
        used = {self.chosen[p] for p in self.arg_peers(idx, "DifferentArgConstraint") if p in self.chosen}
        targets = [t for t in targets if t not in used] or targets
        objects, number = args["object_handles"], args.get("number", 1)
        same_target = args.get("is_same_receptacle", False) or args.get("is_same_room", False) or bool(fixed)
        target = targets[0]
        if not same_target:
            target = next((t for t in targets if any(self.world.single(fn, o, t) for o in objects)), targets[0])
        already = [o for o in objects if self.world.single(fn, o, target)]
        for obj in [o for o in objects if o not in already][: max(0, number - len(already))]:
            want = {"room": target} if fn == "is_in_room" else {"furniture": target, "within": fn == "is_inside"}
            self.move(obj, self.destination(obj, idx, want))
        self.chosen[idx] = target

    def destination(self, obj: str, idx: int, want: dict[str, Any]) -> tuple[str, str, str | None]:
        """A furniture (and relation) meeting ``want`` and the unordered propositions on ``obj``."""
        rooms, floor, furniture, within = set(self.world.rooms), bool(want.get("floor")), None, False
        if "room" in want:
            rooms = {want["room"]}
        if "furniture" in want:
            furniture, within = want["furniture"], want["within"]
        for other in self.unordered_with(idx):
            prop = self.props[other]
            args = prop["args"]
            if obj not in args.get("object_handles", []):
                continue
            if prop["function_name"] == "is_in_room":
                rooms &= set(args["room_ids"])
            elif prop["function_name"] == "is_on_floor":
                floor = True
            elif prop["function_name"] in ("is_on_top", "is_inside") and furniture is None:
                furniture = self.chosen.get(other, args["receptacle_handles"][0])
                within = prop["function_name"] == "is_inside"
        if furniture is not None:
            furn = self.world.furniture[furniture]
            relation = "within" if within or "on" not in furn.receptacles else "on"
            return furniture, relation, None
        candidates = [f for f in self.world.furniture.values()
                      if f.room in rooms and f.is_floor == floor and "on" in f.receptacles]
        if not candidates:
            raise OracleError(f"episode {self.episode['episode_id']}: no furniture fits {obj}")
        current = self.world.object_furniture(obj)
        if current is not None and current in candidates:
            return current.name, "on", None
        return candidates[0].name, "on", None

    def move(self, obj: str, dest: tuple[str, str, str | None]) -> None:
        furniture, relation, ref = dest
        self.fetch(obj)
        self.do(f"Navigate[{furniture}]")
        furn = self.world.furniture[furniture]
        if relation == "within" and furn.articulated and not furn.is_open:
            self.do(f"Open[{furniture}]")
        if ref:
            self.do(f"Place[{obj}, {relation}, {furniture}, next_to, {ref}]")
        else:
            self.do(f"Place[{obj}, {relation}, {furniture}, None, None]")

    def fetch(self, obj: str) -> None:
        furn = self.world.object_furniture(obj)
        self.do(f"Navigate[{obj}]")
        if self.world.objects[obj].relation == "within" and furn.articulated and not furn.is_open:
            self.do(f"Open[{furn.name}]")
        self.do(f"Pick[{obj}]")

    def change_state(self, obj: str, tool: str) -> None:
        needs_faucet = tool == "Fill" or (tool == "Clean" and self.world.objects[obj].type in FAUCET_CLEANED)
        if not needs_faucet:
            self.do(f"Navigate[{obj}]")
            self.do(f"{tool}[{obj}]")
            return
        home = self.world.object_furniture(obj)
        relation = self.world.objects[obj].relation
        sink = next((f.name for f in self.world.furniture.values() if f.has_faucet), None)
        if sink is None:
            raise OracleError(f"episode {self.episode['episode_id']}: no faucet for {tool}[{obj}]")
        self.fetch(obj)
        self.do(f"Navigate[{sink}]")
        self.do(f"{tool}[{obj}]")
        self.do(f"Navigate[{home.name}]")
        self.do(f"Place[{obj}, {relation}, {home.name}, None, None]")


def oracle_plan(episode: dict[str, Any]) -> list[str]:
    """A skill plan (ending in ``Done[]``) that solves the episode in the symbolic simulator."""
    return OracleCompiler(episode).compile()
