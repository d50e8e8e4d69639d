"""``choice:<model spec>``: a planner that scores the valid skill calls instead of generating text.

At every decision the planner lists the calls the simulator would accept in the current state
(``valid_actions``: every candidate in PARTNR's argument grammar, with names from the world, is run
on a copy of the world and kept when the skill answers ``Successful execution!`` and leads to a
state the framing has not been in, so it neither idles nor loops), adds ``Done[]``, and executes the
one whose description the model finds most likely as the next step of the plan (SayCan-style):
each call is said in words with the names said as an instruction says them (``Pick[cup_1]`` ->
"pick up the cup"), after two worked plans, the objects' places, the framed task and the steps so
far. The score is the sum of the description's token log-probabilities; ties go to the first
candidate in enumeration order. Definitions and the measured alternatives in
``docs/susceptibility.md``. All 7 framings of an episode (decided in lockstep by the runner) are
scored in one backend call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from typing import Any

from framebench.backends.base import ScoresContinuations, require
from framebench.embodied.planners import Decision, Planner
from framebench.embodied.skills import SUCCESS, Action, SkillExecutor
from framebench.embodied.world import World

PROMPT_VERSION = "choice-v4"
SYSTEM_PROMPT = """You are a household robot. You list the steps that complete the task, one per line.

Example 1:
The apple is on the table in the kitchen. The book is on the couch in the living room. The bowl is in the cabinet in the kitchen.
Task: Put the apple and the book on the shelves in the bedroom.
Steps:
1. go to the apple
2. pick up the apple
3. go to the shelves in the bedroom
4. put the apple on the shelves in the bedroom
5. go to the book
6. pick up the book
7. go to the shelves in the bedroom
8. put the book on the shelves in the bedroom
9. done

Example 2:
The plate is in the cabinet in the dining room. The vase is on the table in the hallway.
Task: Clean the plate, then put it in the chest of drawers in the hallway.
Steps:
1. go to the plate
2. open the cabinet in the dining room
3. clean the plate
4. pick up the plate
5. go to the chest of drawers in the hallway
6. open the chest of drawers in the hallway
7. put the plate in the chest of drawers in the hallway
8. done"""
VERBS = {"Pick": "pick up", "Open": "open", "Close": "close", "Clean": "clean", "Fill": "fill",
         "Pour": "pour", "PowerOn": "turn on", "PowerOff": "turn off", "Navigate": "go to",
         "Explore": "explore"}


def candidate_actions(world: World) -> list[str]:
    """Every call in PARTNR's argument grammar over the world's names (valid or not)."""
    furniture = [f for f in world.furniture.values() if not f.is_floor]
    objects = list(world.objects)
    out = [f"Navigate[{f.name}]" for f in furniture] + [f"Navigate[{o}]" for o in objects]
    out += [f"Explore[{room}]" for room in world.rooms]
    out += [f"Pick[{o}]" for o in objects]
    held = world.agent.held
    if held is not None:
        for f in world.furniture.values():
            for relation in ("on", "within"):
                out.append(f"Place[{held}, {relation}, {f.name}, None, None]")
                out += [f"Place[{held}, {relation}, {f.name}, next_to, {o}]"
                        for o in objects if o != held and world.objects[o].on == f.name]
    out += [f"{verb}[{f.name}]" for verb in ("Open", "Close") for f in furniture if f.articulated]
    out += [f"{verb}[{o}]" for verb in ("Clean", "Fill", "Pour", "PowerOn", "PowerOff") for o in objects]
    return out


def state_key(world: World) -> str:
    return json.dumps(world.snapshot(), sort_keys=True)


def valid_actions(world: World, visited: Collection[str] = ()) -> list[str]:
    """The candidates the simulator accepts in this state and that lead to a state neither this
    one nor one in ``visited`` (``state_key``s; each candidate is run on a copy, so a no-op such
    as navigating to where the agent stands, or undoing the last step, is left out), then
    ``Done[]``."""
    valid = []
    seen = {state_key(world), *visited}
    for text in candidate_actions(world):
        tool, _, rest = text.partition("[")
        probe = world.copy()
        if (SkillExecutor(probe, lambda _steps: None).run(Action(tool, rest[:-1])) == SUCCESS
                and state_key(probe) not in seen):
            valid.append(text)
    return valid + ["Done[]"]


def _words(name: str) -> str:
    return re.sub(r"_\d+$", "", name).replace("_", " ")


def spoken_names(world: World) -> dict[str, str]:
    """Each room, object and furniture name as an instruction says it: ``bathroom``, ``hand
    towel``, ``counter in the bathroom``, ``floor of the bathroom``. A name whose words another
    of its kind shares (two cups; two counters in one room) keeps its number: ``cup 1``."""

    def unique(groups: dict[Any, list[str]], plain: dict[str, str]) -> dict[str, str]:
        return {n: plain[n] if len(names) == 1 else n.replace("_", " ")
                for names in groups.values() for n in names}

    def group(names, key) -> dict[Any, list[str]]:
        out: dict[Any, list[str]] = {}
        for n in names:
            out.setdefault(key(n), []).append(n)
        return out

    rooms = unique(group(world.rooms, _words), {r: _words(r) for r in world.rooms})
    spoken = dict(rooms)
    spoken.update(unique(group(world.objects, _words), {o: _words(o) for o in world.objects}))
    furniture = unique(group(world.furniture, lambda f: (_words(f), world.furniture[f].room)),
                       {f: _words(f) for f in world.furniture})
    for name, words in furniture.items():
        room = rooms[world.furniture[name].room]
        spoken[name] = f"floor of the {room}" if world.furniture[name].is_floor else f"{words} in the {room}"
    return spoken


def describe_action(action: str, spoken: dict[str, str]) -> str:
    """A candidate call as a plan step: ``Place[cup_1, within, cabinet_26, None, None]`` ->
    ``put the cup in the cabinet in the bathroom``."""
    tool, _, rest = action.partition("[")
    args = [a.strip() for a in rest.removesuffix("]").split(",")] if rest != "]" else []
    if tool == "Done":
        return "done"
    if tool == "Place":
        held, relation, furniture, next_to, reference = args
        step = f"put the {spoken[held]} {'in' if relation == 'within' else 'on'} the {spoken[furniture]}"
        return step + (f" next to the {spoken[reference]}" if next_to == "next_to" else "")
    return f"{VERBS[tool]} the {spoken[args[0]]}"


def describe_scene(world: World, spoken: dict[str, str]) -> str:
    """Where each object is, in the words of the plan steps."""
    places = []
    for obj in world.objects.values():
        where = "held by the robot" if obj.held_by else \
            f"{'in' if obj.relation == 'within' else 'on'} the {spoken[obj.on]}"
        places.append(f"The {spoken[obj.name]} is {where}.")
    return " ".join(places)


def softmax(scores: list[float]) -> list[float]:
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]


def plan_prefix(steps: list[str]) -> str:
    """The assistant's plan so far, ending where the next step's words go."""
    done = "".join(f"{k}. {step}\n" for k, step in enumerate(steps, start=1))
    return f"Steps:\n{done}{len(steps) + 1}."


def check_model_spec(model: str) -> None:
    """Before the model loads: its engine declares that it scores continuations."""
    from framebench.registry import require_capability

    require_capability(model, "score_continuations", f"--planner choice:{model}")


class ChoicePlanner(Planner):
    uses_cap = True
    needs_env = True  # the runner puts the framing's env into the session (state for candidates)

    def __init__(self, backend: ScoresContinuations):
        require(backend, "score_continuations", f"--planner choice:{getattr(backend, 'spec', '?')}")
        self.backend = backend
        self.spec = f"choice:{backend.spec}"

    def fingerprint(self) -> str:
        return f"choice:{self.backend.fingerprint()}|{PROMPT_VERSION}"

    def settings(self) -> dict[str, Any]:
        return {"prompt_version": PROMPT_VERSION,
                "candidate_score": "sum of the token log-probabilities of the call's description as "
                                   "the next plan step"}

    def open(self, episode, instruction, world_text):
        return {"instruction": instruction, "env": None, "kv": {}, "visited": set(), "steps": [],
                "spoken": None, "chat": None}

    def _chat(self, session) -> list[dict[str, str]]:
        if session["chat"] is None:  # the scene as it was when the task was given; the steps follow it
            world = session["env"].world
            session["spoken"] = spoken_names(world)
            # the scene first: the 7 framings of an episode then share every token before the task
            task = f"{describe_scene(world, session['spoken'])}\nTask: {session['instruction']}"
            session["chat"] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
        return session["chat"]

    def decide(self, sessions, results, objects):
        chats, candidates, described = [], [], []
        for session in sessions:
            chats.append(self._chat(session))
            world = session["env"].world
            session["visited"].add(state_key(world))  # never back to a state this framing has been in
            candidates.append(valid_actions(world, session["visited"]))
            described.append([describe_action(c, session["spoken"]) for c in candidates[-1]])
        if not chats:
            return []
        prefixes = [plan_prefix(s["steps"]) for s in sessions]
        scores = self.backend.score_continuations(
            chats, [[" " + d for d in row] for row in described], assistant_prefixes=prefixes,
            states=[s["kv"] for s in sessions])
        out = []
        for session, chat, prefix, cands, words, row in zip(sessions, chats, prefixes, candidates, described,
                                                            scores, strict=True):
            best = max(range(len(cands)), key=lambda k: (row[k], -k))
            probs = softmax(row)
            runner_up = max((p for k, p in enumerate(probs) if k != best), default=0.0)
            session["steps"].append(words[best])
            choice = {"step": words[best], "probability": probs[best], "margin": probs[best] - runner_up,
                      "n_candidates": len(cands), "score": row[best]}
            prompt = [*chat, {"role": "assistant", "content": prefix}]
            out.append(Decision(f"Action: {cands[best]}", prompt, {"choice": choice}))
        return out
