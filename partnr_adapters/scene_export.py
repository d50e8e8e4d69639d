"""Export PARTNR episodes to the symbolic ``scene`` format (runs inside the Habitat image).

The ground-truth world graph PARTNR builds for an episode (``EnvironmentInterface.full_world_graph``:
rooms, furniture with receptacles, objects, agents; names like ``table_14``, ``cup_0``,
``floor_living_room_1``) becomes the embodied runner's ``scene``; proposition arguments and
``object_states`` are rewritten from simulator handles / region ids to those names, so the episode
replays on the symbolic simulator on a CPU box.

Python 3.9-compatible (it runs in the container); the conversion functions are pure and take the
world graph duck-typed (``get_all_rooms/get_all_furnitures/get_all_objects/get_agents`` and
``graph[node]`` neighbours; nodes with ``name``, ``properties``, ``sim_handle``; classes named
``Room``, ``Furniture``/``Floor``, ``Receptacle``, ``Object``, ``SpotRobot``/``Human``).
Positions are the horizontal plane ``[x, z]`` of Habitat's y-up translation.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

HANDLE_ARGS = ("object_handles", "receptacle_handles", "room_ids", "entity_handles_a", "entity_handles_b")
OBJECT_STATE_NAMES = ("is_clean", "is_filled", "is_powered_on")
_STATE_PREDICATES = ("is_clean", "is_dirty", "is_filled", "is_empty", "is_powered_on", "is_powered_off")
_SPATIAL_PREDICATES = ("is_next_to", "is_on_floor", "is_clustered", "is_in_room")


def _kind(node: Any) -> str:
    """The world-graph class name, with the classes the exporter treats alike folded together."""
    names = [cls.__name__ for cls in type(node).__mro__]
    for kind in ("Floor", "Furniture", "Receptacle", "Object", "Room", "SpotRobot", "Human"):
        if kind in names:
            return kind
    return names[0]


def _neighbours(wg: Any, node: Any) -> list[Any]:
    return list(wg.graph[node])


def _plane(translation: Any) -> list[float]:
    """[x, z] of a y-up translation; [0, 0] when there is none."""
    if translation is None:
        return [0.0, 0.0]
    values = [float(v) for v in translation]
    return [values[0], values[2]] if len(values) >= 3 else (values + [0.0, 0.0])[:2]


def _room_of(wg: Any, node: Any) -> str | None:
    for other in _neighbours(wg, node):
        if _kind(other) == "Room":
            return other.name
    return None


def _furniture_of_receptacle(wg: Any, receptacle: Any) -> Any | None:
    for other in _neighbours(wg, receptacle):
        if _kind(other) in ("Furniture", "Floor"):
            return other
    return None


def _object_location(wg: Any, obj: Any) -> tuple[str | None, str, str | None]:
    """(furniture name, relation on|within, holding agent name)."""
    for other in _neighbours(wg, obj):
        kind = _kind(other)
        if kind == "Receptacle":
            furniture = _furniture_of_receptacle(wg, other)
            if furniture is not None:
                return furniture.name, str(other.properties.get("type", "on")), None
        elif kind in ("Furniture", "Floor"):
            return other.name, "on", None
        elif kind in ("SpotRobot", "Human"):
            return None, "on", other.name
    return None, "on", None


def scene_from_world_graph(
    wg: Any,
    is_open: Callable[[Any], bool | None] | None = None,
    affordances: Callable[[Any], Iterable[str]] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The symbolic ``scene`` of a world graph, plus warnings for what could not be placed.

    ``is_open(furniture)`` gives an articulated furniture's open state (None: unknown, exported as
    closed); ``affordances(object)`` the object states it supports (default: the states it has).
    """
    warnings: list[str] = []
    rooms = sorted(room.name for room in wg.get_all_rooms())
    furniture = []
    for node in sorted(wg.get_all_furnitures(), key=lambda n: n.name):
        props = node.properties
        floor = _kind(node) == "Floor"
        room = _room_of(wg, node)
        if room is None and floor and node.name.startswith("floor_"):
            room = node.name[len("floor_"):]
        if room is None:
            warnings.append(f"furniture {node.name} has no room; skipped")
            continue
        receptacles = sorted({str(r.properties.get("type", "on")) for r in _neighbours(wg, node)
                              if _kind(r) == "Receptacle"})
        articulated = bool(props.get("is_articulated", False)) and not floor
        state = is_open(node) if (articulated and is_open is not None) else None
        furniture.append({
            "name": node.name,
            "type": "floor" if floor else str(props.get("type", "")),
            "room": room,
            "position": _plane(props.get("translation")),
            "receptacles": receptacles or ["on"],
            "articulated": articulated,
            "is_open": (not articulated) or bool(state),
            "components": sorted(str(c) for c in props.get("components", [])),
        })
    placed = {f["name"] for f in furniture}
    objects = []
    for node in sorted(wg.get_all_objects(), key=lambda n: n.name):
        on, relation, holder = _object_location(wg, node)
        if on is None or on not in placed:
            where = (f"held by {holder}") if holder else "on no furniture"
            warnings.append(f"object {node.name} is {where}; skipped")
            continue
        states = {str(k): bool(v) for k, v in (node.properties.get("states") or {}).items()}
        afford = sorted(set(affordances(node))) if affordances is not None else sorted(states)
        objects.append({
            "name": node.name, "type": str(node.properties.get("type", "")), "on": on,
            "relation": relation, "states": states, "affordances": afford,
        })
    agents = []
    for node in sorted(wg.get_agents(), key=lambda n: n.name):
        agents.append({"name": node.name, "room": _room_of(wg, node) or (rooms[0] if rooms else ""),
                       "position": _plane(node.properties.get("translation"))})
    return {"rooms": rooms, "furniture": furniture, "objects": objects, "agents": agents}, warnings


def _rename(value: Any, names: dict[str, str], unmapped: set[str]) -> Any:
    if isinstance(value, list):
        return [_rename(v, names, unmapped) for v in value]
    if isinstance(value, str):
        if value in names:
            return names[value]
        unmapped.add(value)
    return value


def rewrite_handles(episode: dict[str, Any], names: dict[str, str]) -> tuple[dict[str, Any], set[str]]:
    """A copy of ``episode`` with handles in proposition args and ``object_states`` replaced by names.

    ``names`` maps simulator handles (objects, furniture, receptacles) and region ids to world-graph
    names. Returns the new episode and the handles that had no name (left unchanged).
    """
    out = copy.deepcopy(episode)
    unmapped: set[str] = set()
    for proposition in out.get("evaluation_propositions", []):
        args = proposition.get("args", {})
        for key in HANDLE_ARGS:
            if key in args:
                args[key] = _rename(args[key], names, unmapped)
        if "*args" in args:
            args["*args"] = _rename(args["*args"], names, unmapped)
    states = out.get("object_states") or {}
    out["object_states"] = {
        state: {_rename(handle, names, unmapped): value for handle, value in values.items()}
        for state, values in states.items()
    }
    return out, unmapped


def infer_constraint_type(episode: dict[str, Any]) -> str:
    """PARTNR episodes carry no constraint label; infer the FramingQA family from the evaluation.

    temporal: a TemporalConstraint with edges; heterogeneous: any object-state predicate; spatial: a
    Same/DifferentArg constraint or a next-to / on-floor / clustered / in-room predicate; else none.
    """
    constraints = episode.get("evaluation_constraints", [])
    if any(c.get("type") == "TemporalConstraint" and c.get("args", {}).get("dag_edges") for c in constraints):
        return "temporal"
    functions = {p.get("function_name") for p in episode.get("evaluation_propositions", [])}
    if functions & set(_STATE_PREDICATES):
        return "heterogeneous"
    if functions & set(_SPATIAL_PREDICATES) or any(
        c.get("type") in ("SameArgConstraint", "DifferentArgConstraint") for c in constraints
    ):
        return "spatial"
    return "none"


def export_episode(episode: dict[str, Any], wg: Any, names: dict[str, str],
                   is_open: Callable[[Any], bool | None] | None = None,
                   affordances: Callable[[Any], Iterable[str]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The episode with ``scene``, names instead of handles and ``info.constraint_type`` (if absent)."""
    scene, warnings = scene_from_world_graph(wg, is_open, affordances)
    out, unmapped = rewrite_handles(episode, names)
    out["scene"] = scene
    info = out.get("info") if isinstance(out.get("info"), dict) else {}
    info.setdefault("constraint_type", infer_constraint_type(episode))
    out["info"] = info
    warnings += [f"handle {h} has no world-graph name" for h in sorted(unmapped)]
    return out, warnings


# --------------------------------------------------------------------------- in-container glue


def _handle_names(env_interface: Any) -> dict[str, str]:
    perception = env_interface.perception
    names = dict(getattr(perception, "sim_handle_to_name", {}) or {})
    names.update(getattr(perception, "region_id_to_name", {}) or {})
    return names


def export_dataset(episodes_path: str, out_path: str, partnr_root: str = ".") -> int:  # pragma: no cover - needs habitat
    """Load every episode in habitat (full observability, ground-truth graph) and export it."""
    from habitat_llm.agent.env import (
        EnvironmentInterface,
        register_actions,
        register_measures,
        register_sensors,
    )
    from habitat_llm.agent.env.dataset import CollaborationDatasetV0
    from habitat_llm.utils import fix_config, setup_config
    from habitat_llm.utils.core import get_config
    from habitat_llm.utils.sim import is_open as sim_is_open

    os.chdir(partnr_root)
    config = get_config("baselines/heuristic_full_obs.yaml", overrides=[
        "habitat.dataset.data_path=" + episodes_path, "world_model.partial_obs=False",
        "evaluation.save_video=False",
    ])
    fix_config(config)
    config = setup_config(config)
    register_sensors(config)
    register_actions(config)
    register_measures(config)
    dataset = CollaborationDatasetV0(config.habitat.dataset)
    env_interface = EnvironmentInterface(config, dataset=dataset, init_wg=False)
    env_interface.initialize_perception_and_world_graph()
    sim = env_interface.sim

    def open_state(furniture: Any) -> bool | None:
        try:
            return bool(sim_is_open(furniture, env_interface))
        except ValueError:
            return None

    def affords(obj: Any) -> list[str]:
        states = sim.object_state_machine.objects_with_states.get(obj.sim_handle, [])
        return [s.name for s in states if s.name in OBJECT_STATE_NAMES]

    with open(episodes_path, "rb") as fh:
        raw = fh.read()
    source = json.loads((gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8"))["episodes"]
    exported = []
    for index in range(len(dataset.episodes)):
        if index:
            env_interface.reset_environment()
        current = env_interface.env.env.env._env.current_episode
        episode = source[index]
        if str(episode["episode_id"]) != str(current.episode_id):
            raise RuntimeError(f"episode order mismatch at {index}")
        out, warnings = export_episode(episode, env_interface.full_world_graph, _handle_names(env_interface),
                                       open_state, affords)
        for warning in warnings:
            print(f"episode {current.episode_id}: {warning}")
        exported.append(out)
    payload = json.dumps({"episodes": exported}).encode("utf-8")
    tmp = f"{out_path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(gzip.compress(payload, mtime=0) if out_path.endswith(".gz") else payload)
    os.replace(tmp, out_path)
    return len(exported)
