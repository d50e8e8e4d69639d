"""Episode files: PARTNR's episode JSON plus ``scene`` and ``info`` (read, validate, write).

Files are JSON or gzipped JSON ``{"episodes": [...]}``. Validation names file, episode and field.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from framebench.embodied.evaluation import CONSTRAINT_TYPES, MODES, RELATIONS
from framebench.embodied.framing import validate_purposes
from framebench.embodied.world import HANDLE_ARGS, PREDICATES, STATE_PREDICATES
from framebench.errors import UserError
from framebench.files import write_text_atomic

CONSTRAINT_KINDS = ("none", "spatial", "temporal", "heterogeneous")
_ENTITY_ARGS = {
    "object_handles": "object", "receptacle_handles": "furniture", "room_ids": "room",
    "entity_handles_a": "entity", "entity_handles_b": "entity",
}


def load_episode_container(path: str | Path) -> dict[str, Any]:
    """The ``{"episodes": [...]}`` object of a ``.json`` or gzipped file; episodes not yet checked."""
    from framebench.jsonl import loads_strict, read_text_strict

    path = Path(path)
    if not path.exists() and not path.is_symlink():  # a folder, a link loop: read_text_strict names it
        raise UserError(f"{path}: no such episode file")
    data = loads_strict(read_text_strict(path, allow_gzip=True), f"{path}: episode file")
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise UserError(f'{path}: expected an object {{"episodes": [...]}}')
    return data


def read_episodes(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate an episode file."""
    data = load_episode_container(path)
    seen: set[str] = set()
    for index, episode in enumerate(data["episodes"]):
        validate_episode(episode, where=f"{path}: episode {index}")
        if episode["episode_id"] in seen:
            raise UserError(f"{path}: episode {index}: duplicate episode_id {episode['episode_id']!r}")
        seen.add(episode["episode_id"])
    return data["episodes"]


def write_episodes(episodes: list[dict[str, Any]], path: str | Path) -> Path:
    """Write ``{"episodes": [...]}`` atomically; gzipped when the name ends in ``.gz``."""
    path = Path(path)
    text = json.dumps({"episodes": episodes}, indent=None, sort_keys=False)
    payload: str | bytes = gzip.compress(text.encode(), mtime=0) if path.suffix == ".gz" else text
    return write_text_atomic(payload, path)


def _fail(where: str, field: str, message: str) -> UserError:
    return UserError(f"{where}: {field}: {message}")


def validate_episode(ep: Any, where: str) -> None:
    if not isinstance(ep, dict):
        raise UserError(f"{where}: expected an object")
    eid = ep.get("episode_id")
    if not isinstance(eid, str) or not eid:
        raise _fail(where, "episode_id", "expected a non-empty string")
    check_safe_id(eid, f"{where}: episode_id")
    where = f"{where} ({eid})"
    if not isinstance(ep.get("instruction"), str) or not ep["instruction"].strip():
        raise _fail(where, "instruction", "expected a non-empty string")
    scene = ep.get("scene")
    names = _validate_scene(scene, where)
    props = ep.get("evaluation_propositions")
    if not isinstance(props, list) or not props:
        raise _fail(where, "evaluation_propositions", "expected a non-empty list")
    objects = {o["name"]: o for o in scene["objects"]}
    for i, prop in enumerate(props):
        _validate_proposition(prop, f"evaluation_propositions[{i}]", where, names, objects)
    n = len(props)
    for key in ("evaluation_proposition_dependencies", "evaluation_constraints"):
        if not isinstance(ep.get(key, []), list):
            raise _fail(where, key, "expected a list")
    states = ep.get("object_states", {})
    if not isinstance(states, dict) or not all(
            isinstance(v, dict) and all(isinstance(b, bool) for b in v.values()) for v in states.values()):
        raise _fail(where, "object_states", "expected an object {state: {object: true|false}}")
    for i, dep in enumerate(ep.get("evaluation_proposition_dependencies", [])):
        field = f"evaluation_proposition_dependencies[{i}]"
        if not isinstance(dep, dict):
            raise _fail(where, field, "expected an object")
        if dep.get("relation_type") not in RELATIONS:
            raise _fail(where, f"{field}.relation_type", f"expected one of {', '.join(RELATIONS)}")
        if dep.get("dependency_mode", "all") not in MODES:
            raise _fail(where, f"{field}.dependency_mode", f"expected all or any, got {dep['dependency_mode']!r}")
        for key in ("proposition_indices", "depends_on"):
            _check_indices(dep.get(key), n, where, f"{field}.{key}")
    for i, con in enumerate(ep.get("evaluation_constraints", [])):
        field = f"evaluation_constraints[{i}]"
        if not isinstance(con, dict) or con.get("type") not in CONSTRAINT_TYPES:
            raise _fail(where, f"{field}.type", f"expected one of {', '.join(CONSTRAINT_TYPES)}")
        args = con.get("args", {})
        if not isinstance(args, dict):
            raise _fail(where, f"{field}.args", "expected an object")
        limit = n
        if "n_propositions" in args:
            limit = args["n_propositions"]
            if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= n:
                raise _fail(where, f"{field}.args.n_propositions",
                            f"expected a whole number up to the episode's {n} propositions, got {limit!r}")
        if con["type"] == "TemporalConstraint":
            edges = args.get("dag_edges")
            if not isinstance(edges, list) or any(not isinstance(e, list) or len(e) != 2 for e in edges):
                raise _fail(where, f"{field}.args.dag_edges", "expected a list of [i, j] pairs")
            _check_indices([i for e in edges for i in e], limit, where, f"{field}.args.dag_edges")
        else:
            indices = args.get("proposition_indices")
            _check_indices(indices, limit, where, f"{field}.args.proposition_indices")
            if con["type"] != "TerminalSatisfactionConstraint":
                _arg_names_valid(args.get("arg_names"), indices, props, where, f"{field}.args.arg_names")
    _check_acyclic(ep, where)
    info = ep.get("info")
    if not isinstance(info, dict):
        raise _fail(where, "info", "expected an object with constraint_type and purposes")
    if info.get("constraint_type") not in CONSTRAINT_KINDS:
        raise _fail(where, "info.constraint_type", f"expected one of {', '.join(CONSTRAINT_KINDS)}")
    validate_purposes(info.get("purposes"), where=f"{where}: info.purposes")


def _check_indices(value: Any, n: int, where: str, field: str) -> None:
    if not isinstance(value, list) or any(not isinstance(i, int) or isinstance(i, bool) for i in value):
        raise _fail(where, field, "expected a list of proposition indices")
    for i in value:
        if not 0 <= i < n:
            raise _fail(where, field, f"proposition index {i} is out of range (n_propositions = {n})")


def _validate_scene(scene: Any, where: str) -> dict[str, set[str]]:
    if not isinstance(scene, dict):
        raise _fail(where, "scene", "expected an object with rooms, furniture, objects, agents")
    for key in ("rooms", "furniture", "objects", "agents"):
        if not isinstance(scene.get(key), list):
            raise _fail(where, f"scene.{key}", "expected a list")
    for i, room in enumerate(scene["rooms"]):
        if not isinstance(room, str) or not room:
            raise _fail(where, f"scene.rooms[{i}]", f"expected a room name (a string), got {room!r}"[:120])
    rooms = set(scene["rooms"])
    if len(rooms) != len(scene["rooms"]):
        raise _fail(where, "scene.rooms", "room names must be unique")
    taken = set(rooms)
    furniture: set[str] = set()
    for i, f in enumerate(scene["furniture"]):
        field = f"scene.furniture[{i}]"
        _check_entity(f, field, where, FURNITURE_FIELDS, taken)
        if f.get("room") not in rooms:
            raise _fail(where, f"{field}.room", f"unknown room {f.get('room')!r}")
        if not set(f.get("receptacles", ["on"])) <= {"on", "within"}:
            raise _fail(where, f"{field}.receptacles", "expected a subset of ['on', 'within']")
        furniture.add(f["name"])
    objects: set[str] = set()
    for i, o in enumerate(scene["objects"]):
        field = f"scene.objects[{i}]"
        _check_entity(o, field, where, OBJECT_FIELDS, taken)
        if o.get("on") not in furniture:
            raise _fail(where, f"{field}.on", f"unknown furniture {o.get('on')!r}")
        if o.get("relation", "on") not in ("on", "within"):
            raise _fail(where, f"{field}.relation", "expected on or within")
        objects.add(o["name"])
    agents = scene["agents"]
    if not agents or not all(isinstance(a, dict) for a in agents):
        raise _fail(where, "scene.agents", "expected a non-empty list of agent objects")
    for i, a in enumerate(agents):
        _check_entity(a, f"scene.agents[{i}]", where, AGENT_FIELDS, set())
    if agents[0].get("room") not in rooms:
        raise _fail(where, "scene.agents[0].room", "expected a known room")
    return {"room": rooms, "furniture": furniture, "object": objects, "entity": furniture | objects}


FURNITURE_FIELDS: dict[str, Any] = {"name": str, "type": str, "room": str, "position": list[float],
                                   "receptacles": list[str], "articulated": bool, "is_open": bool,
                                   "components": list[str]}
OBJECT_FIELDS: dict[str, Any] = {"name": str, "type": str, "on": str, "relation": str,
                                 "states": dict[str, bool], "affordances": list[str]}
AGENT_FIELDS: dict[str, Any] = {"name": str, "room": str, "position": list[float]}
_REQUIRED_ENTITY = ("name", "type", "room", "on")


def _check_entity(entity: Any, field: str, where: str, specs: dict[str, Any], taken: set[str]) -> None:
    """Types of one furniture/object/agent entry; its name must be new among rooms, furniture, objects."""
    from framebench.schema import check_fields

    if not isinstance(entity, dict):
        raise _fail(where, field, "expected an object")
    optional = tuple(k for k in specs if k not in _REQUIRED_ENTITY)
    check_fields(entity, specs, f"{where}: {field}", optional=optional, allow_extra=True)
    if "position" in entity and len(entity["position"]) != 2:
        raise _fail(where, f"{field}.position", "expected [x, y]")
    if not entity["name"]:
        raise _fail(where, f"{field}.name", "expected a non-empty string")
    if entity["name"] in taken:
        raise _fail(where, f"{field}.name", f"duplicate name {entity['name']!r}")
    taken.add(entity["name"])


def _check_acyclic(ep: dict[str, Any], where: str) -> None:
    """Dependencies and temporal constraints together must order the propositions (no cycle)."""
    edges: set[tuple[int, int]] = set()
    for dep in ep.get("evaluation_proposition_dependencies", []):
        edges |= {(d, p) for d in dep["depends_on"] for p in dep["proposition_indices"]}
    for con in ep.get("evaluation_constraints", []):
        if con["type"] == "TemporalConstraint":
            edges |= {(a, b) for a, b in con.get("args", {}).get("dag_edges", [])}
    graph: dict[int, set[int]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[int, int] = {}  # 1 = on the current path, 2 = done
    for start in list(graph):
        if state.get(start):
            continue
        stack = [(start, iter(graph.get(start, ())))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                raise _fail(where, "evaluation_proposition_dependencies/evaluation_constraints",
                            f"propositions {node} and {child} depend on each other (a cycle)")
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(graph.get(child, ()))))


def check_safe_id(value: str, where: str) -> str:
    """An id that will name files: letters, digits and ``_ - . : @ +``, not starting with a dot."""
    from framebench.paths import check_safe_name

    return check_safe_name(value, where)


def _validate_proposition(prop: Any, field: str, where: str, names: dict[str, set[str]],
                          objects: dict[str, dict]) -> None:
    """Evaluation semantics: the handle arguments the predicate needs, known handles, and a count
    ``number`` between 1 and what the handles can give (PARTNR raises on a missing argument, an
    unknown handle or ``number < 1`` over several handles; a larger count can never be met and would
    be unrolled into that many copies)."""
    if not isinstance(prop, dict) or prop.get("function_name") not in PREDICATES:
        raise _fail(where, f"{field}.function_name", f"expected one of {', '.join(PREDICATES)}")
    args = prop.get("args")
    if not isinstance(args, dict):
        raise _fail(where, f"{field}.args", "expected an object")
    fn = prop["function_name"]
    if fn == "is_clustered":
        _validate_clustered(args, f"{field}.args", where, names)
        return
    key_a, key_b, same_key = HANDLE_ARGS[fn]
    for key in (key_a, key_b):
        if key is None:
            continue
        kind = _ENTITY_ARGS[key]
        handles = args.get(key)
        if not isinstance(handles, list) or not handles:
            raise _fail(where, f"{field}.args.{key}", f"expected a non-empty list of {kind} names")
        for handle in handles:
            if not isinstance(handle, str) or handle not in names[kind]:
                raise _fail(where, f"{field}.args.{key}", f"unknown {kind} {handle!r}")
    same = args.get(same_key, False) if same_key else False
    if not isinstance(same, bool):
        raise _fail(where, f"{field}.args.{same_key}", "expected true or false")
    # what `number` counts: a-handles (one list, or per b when is_same_*), else (a, b) pairs
    n_a, n_b = len(args[key_a]), (len(args[key_b]) if key_b else 1)
    most = n_a if same else n_a * n_b
    counted = f"{n_a} handle(s)" if most == n_a else f"{most} ({key_a}, {key_b}) pairs"
    _check_count(args.get("number", 1), most, counted, where, f"{field}.args.number")
    if fn in STATE_PREDICATES:
        state = STATE_PREDICATES[fn][0]
        for handle in args.get("object_handles", []):
            if state not in objects[handle].get("affordances", []):
                raise _fail(where, f"{field}.args.object_handles", f"{handle} does not afford {state}")


def _validate_clustered(args: dict[str, Any], field: str, where: str, names: dict[str, set[str]]) -> None:
    groups = args.get("*args")
    if not isinstance(groups, list) or not groups or any(not isinstance(g, list) or not g for g in groups):
        raise _fail(where, f"{field}.*args", "expected a non-empty list of non-empty handle lists")
    for group in groups:
        for handle in group:
            if not isinstance(handle, str) or handle not in names["object"]:
                raise _fail(where, f"{field}.*args", f"unknown object {handle!r}")
    number = args.get("number")
    if not isinstance(number, list) or len(number) != len(groups):
        raise _fail(where, f"{field}.number",
                    f"is_clustered needs a list of {len(groups)} counts, one per handle group")
    for i, (n, group) in enumerate(zip(number, groups, strict=True)):
        _check_count(n, len(group), f"{len(group)} handle(s) in group {i}", where, f"{field}.number[{i}]")


def _check_count(number: Any, most: int, counted: str, where: str, field: str) -> None:
    if not isinstance(number, int) or isinstance(number, bool):
        raise _fail(where, field, f"expected a whole number, got {number!r}")
    if number < 1:
        raise _fail(where, field, f"expected at least 1, got {number}")
    if number > most:
        raise _fail(where, field, f"{number} is more than the {counted} it counts")


def _arg_names_valid(arg_names: Any, indices: list[int], props: list[dict[str, Any]], where: str,
                     field: str) -> None:
    """Each name must be an argument of its proposition: a handle argument, or ``*args_<i>`` of an
    ``is_clustered`` with at least i+1 groups."""
    if not isinstance(arg_names, list) or len(arg_names) != len(indices):
        raise _fail(where, field, "expected one name per proposition index")
    for idx, name in zip(indices, arg_names, strict=True):
        fn = props[idx]["function_name"]
        if fn == "is_clustered":
            n_groups = len(props[idx]["args"]["*args"])
            allowed = [f"*args_{i}" for i in range(n_groups)]
        else:
            allowed = [k for k in HANDLE_ARGS[fn][:2] if k]
        if name not in allowed:
            raise _fail(where, field, f"{name!r} is not an argument of proposition {idx} ({fn}); "
                        f"expected one of {', '.join(allowed)}")
