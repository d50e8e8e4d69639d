"""Scene export on a fake world graph shaped like habitat_llm's (classes, names, edges)."""

from __future__ import annotations

from collections import defaultdict

from framebench.embodied.world import World
from framebench.partnr_adapters.scene_export import (
    export_episode,
    infer_constraint_type,
    rewrite_handles,
    scene_from_world_graph,
)


class Entity:
    def __init__(self, name, properties=None, sim_handle=None):
        self.name, self.properties, self.sim_handle = name, properties or {}, sim_handle

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Entity) and other.name == self.name


class Room(Entity): ...
class Furniture(Entity): ...
class Floor(Furniture): ...
class Receptacle(Entity): ...
class Object(Entity): ...
class SpotRobot(Entity): ...
class Human(Entity): ...


class FakeWorldGraph:
    def __init__(self):
        self.graph = defaultdict(dict)

    def link(self, a, b):
        self.graph[a][b] = "edge"
        self.graph[b][a] = "edge"

    def _of(self, cls):
        return [n for n in self.graph if isinstance(n, cls)]

    def get_all_rooms(self):
        return self._of(Room)

    def get_all_furnitures(self):
        return self._of(Furniture)

    def get_all_objects(self):
        return self._of(Object)

    def get_agents(self):
        return self._of((SpotRobot, Human))


def build_graph():
    wg = FakeWorldGraph()
    living, kitchen = Room("living_room_1", {"type": "living_room"}), Room("kitchen_1", {"type": "kitchen"})
    floor = Floor("floor_living_room_1", {"type": "floor"})
    table = Furniture("table_14", {"type": "table", "is_articulated": False, "translation": [3.0, 0.4, 1.5],
                                   "components": []}, "table_f6_:0000")
    cabinet = Furniture("cabinet_22", {"type": "cabinet", "is_articulated": True, "translation": [1.0, 0.0, -2.0],
                                       "components": []}, "cabinet_c1_:0000")
    sink = Furniture("sink_21", {"type": "sink", "is_articulated": False, "translation": [0.5, 0.9, -1.0],
                                 "components": ["faucet"]}, "sink_s1_:0000")
    for fur, room in ((floor, living), (table, living), (cabinet, kitchen), (sink, kitchen)):
        wg.link(fur, room)
    rec_table = Receptacle("rec_table_14_0", {"type": "on"}, "table_f6_:0000|receptacle_mesh_top")
    rec_cab_on = Receptacle("rec_cabinet_22_0", {"type": "on"}, "cabinet_c1_:0000|top")
    rec_cab_in = Receptacle("rec_cabinet_22_1", {"type": "within"}, "cabinet_c1_:0000|drawer")
    for rec, fur in ((rec_table, table), (rec_cab_on, cabinet), (rec_cab_in, cabinet)):
        wg.link(rec, fur)
    cup = Object("cup_0", {"type": "cup", "translation": [1.0, 0.5, -2.0], "states": {"is_clean": False}}, "cup_a1_:0000")
    book = Object("book_1", {"type": "book", "translation": [3.0, 0.0, 1.0], "states": {}}, "book_c3_:0000")
    vase = Object("vase_2", {"type": "vase", "translation": [3.0, 0.8, 1.5], "states": {}}, "vase_v1_:0000")
    wg.link(cup, rec_cab_in)
    wg.link(book, floor)
    wg.link(vase, rec_table)
    robot = SpotRobot("agent_0", {"translation": [0.0, 0.0, 0.5]})
    wg.link(robot, kitchen)
    return wg


def test_scene_from_world_graph():
    scene, warnings = scene_from_world_graph(
        build_graph(), is_open=lambda f: False,
        affordances=lambda o: ["is_clean", "is_filled"] if o.name == "cup_0" else [])
    assert warnings == []
    assert scene["rooms"] == ["kitchen_1", "living_room_1"]
    furniture = {f["name"]: f for f in scene["furniture"]}
    assert furniture["cabinet_22"] == {"name": "cabinet_22", "type": "cabinet", "room": "kitchen_1",
                                       "position": [1.0, -2.0], "receptacles": ["on", "within"],
                                       "articulated": True, "is_open": False, "components": []}
    assert furniture["sink_21"]["components"] == ["faucet"] and furniture["sink_21"]["is_open"] is True
    assert furniture["floor_living_room_1"]["type"] == "floor"
    assert furniture["floor_living_room_1"]["receptacles"] == ["on"]
    objects = {o["name"]: o for o in scene["objects"]}
    assert objects["cup_0"] == {"name": "cup_0", "type": "cup", "on": "cabinet_22", "relation": "within",
                                "states": {"is_clean": False}, "affordances": ["is_clean", "is_filled"]}
    assert (objects["book_1"]["on"], objects["book_1"]["relation"]) == ("floor_living_room_1", "on")
    assert (objects["vase_2"]["on"], objects["vase_2"]["relation"]) == ("table_14", "on")
    assert scene["agents"] == [{"name": "agent_0", "room": "kitchen_1", "position": [0.0, 0.5]}]
    World(scene)  # the symbolic simulator accepts it


def test_unplaceable_objects_are_warned_not_silently_dropped():
    wg = build_graph()
    mug = Object("mug_3", {"type": "mug", "states": {}}, "mug_m1_:0000")
    wg.graph[mug]  # an object with no edge
    scene, warnings = scene_from_world_graph(wg)
    assert "mug_3" not in {o["name"] for o in scene["objects"]}
    assert warnings == ["object mug_3 is on no furniture; skipped"]


def test_rewrite_handles_and_export_episode():
    names = {"cup_a1_:0000": "cup_0", "vase_v1_:0000": "vase_2", "table_f6_:0000": "table_14",
             "cabinet_c1_:0000": "cabinet_22", "region_7": "kitchen_1"}
    episode = {
        "episode_id": "42", "instruction": "Clean the cup and put it next to the vase on the table.",
        "object_states": {"is_clean": {"cup_a1_:0000": False}},
        "evaluation_propositions": [
            {"function_name": "is_clean", "args": {"object_handles": ["cup_a1_:0000"], "number": 1}},
            {"function_name": "is_on_top", "args": {"object_handles": ["cup_a1_:0000"],
                                                    "receptacle_handles": ["table_f6_:0000", "ghost_:0001"]}},
            {"function_name": "is_next_to", "args": {"entity_handles_a": ["cup_a1_:0000"],
                                                     "entity_handles_b": ["vase_v1_:0000"], "l2_threshold": 0.5}},
            {"function_name": "is_in_room", "args": {"object_handles": ["cup_a1_:0000"], "room_ids": ["region_7"]}},
            {"function_name": "is_clustered", "args": {"*args": [["cup_a1_:0000"], ["vase_v1_:0000"]], "number": [1, 1]}},
        ],
        "evaluation_constraints": [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]], "n_propositions": 5}}],
        "info": {"extra_info": {}},
    }
    out, unmapped = rewrite_handles(episode, names)
    assert unmapped == {"ghost_:0001"}
    props = out["evaluation_propositions"]
    assert props[1]["args"]["receptacle_handles"] == ["table_14", "ghost_:0001"]
    assert props[2]["args"]["entity_handles_b"] == ["vase_2"] and props[2]["args"]["l2_threshold"] == 0.5
    assert props[3]["args"]["room_ids"] == ["kitchen_1"]
    assert props[4]["args"]["*args"] == [["cup_0"], ["vase_2"]]
    assert out["object_states"] == {"is_clean": {"cup_0": False}}
    assert episode["evaluation_propositions"][0]["args"]["object_handles"] == ["cup_a1_:0000"]  # input untouched

    exported, warnings = export_episode(episode, build_graph(), names)
    assert exported["info"]["constraint_type"] == "temporal"
    assert exported["scene"]["rooms"] == ["kitchen_1", "living_room_1"]
    assert warnings == ["handle ghost_:0001 has no world-graph name"]


def test_infer_constraint_type():
    on_top = {"function_name": "is_on_top", "args": {}}
    assert infer_constraint_type({"evaluation_propositions": [on_top], "evaluation_constraints": [
        {"type": "TerminalSatisfactionConstraint", "args": {}}]}) == "none"
    assert infer_constraint_type({"evaluation_propositions": [on_top], "evaluation_constraints": [
        {"type": "SameArgConstraint", "args": {}}]}) == "spatial"
    assert infer_constraint_type({"evaluation_propositions": [{"function_name": "is_on_floor"}]}) == "spatial"
    assert infer_constraint_type({"evaluation_propositions": [{"function_name": "is_filled"}]}) == "heterogeneous"
    assert infer_constraint_type({"evaluation_propositions": [on_top], "evaluation_constraints": [
        {"type": "TemporalConstraint", "args": {"dag_edges": []}}]}) == "none"
