"""``choice:<model spec>``: a planner that scores the valid skill calls instead of generating text.

At every decision the planner lists the calls the simulator would accept in the current state
(``valid_actions``: every candidate in PARTNR's argument grammar, with names from the world, is run
on a copy of the world and kept when the skill answers ``Successful execution!`` and leads to a
state the variant has not been in, so it neither idles nor loops), adds ``Done[]``, scores each
candidate after the prompt (tools, world text, framed instruction, history) and the assistant
prefix ``Action:``, and executes the best. A candidate's score is its mean token log-probability
minus the same under that prompt without the task (same world and history): what the instruction
adds to it (domain-conditional PMI; without it a 135M model repeats whatever string the world text
makes likely). Definitions in ``docs/susceptibility.md``; ties go to the first candidate in
enumeration order. All variants of an episode (the 7 framings, decided in lockstep by the runner)
are scored in one backend call per prompt kind.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from typing import Any

from embodied.planners import Planner, recent_turns
from embodied.skills import SUCCESS, TOOL_DESCRIPTIONS, Action, SkillExecutor
from embodied.world import World
from framebench.errors import UserError

PROMPT_VERSION = "choice-v3"
NULL_TASK = {"role": "user", "content": "What is your next action?"}
ANSWER_PREFIX = "Action:"
CANDIDATE_TOOLS = ("Navigate", "Explore", "Pick", "Place", "Open", "Close", "Clean", "Fill", "Pour",
                   "PowerOn", "PowerOff", "Done")
SYSTEM_PROMPT = (
    "You are a robot acting in a house. Complete the task by calling tools, one action at a time.\n\n"
    "Tools:\n{tools}\n\n"
    "Use the exact furniture, object and room names from the world description.\n"
    "Answer with one action, for example: Action: Navigate[cup_0]\n"
    "When the task is complete, answer with Action: Done[]"
)


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


def softmax(scores: list[float]) -> list[float]:
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]


class ChoicePlanner(Planner):
    uses_cap = True
    needs_env = True  # the runner puts the variant's env into the session (state for candidates)

    def __init__(self, backend: Any, history_turns: int = 32):
        if not hasattr(backend, "score_continuations"):
            raise UserError(f"--planner choice:{backend.spec}: this backend cannot score candidates "
                            "(use an hf: model or smollm2)")
        self.backend = backend
        self.spec = f"choice:{backend.spec}"
        self.history_turns = history_turns
        self.system = SYSTEM_PROMPT.format(tools="\n".join(
            f"- {TOOL_DESCRIPTIONS[t]}" for t in CANDIDATE_TOOLS))

    def _states(self, sessions, key: str) -> dict[str, Any]:
        """Per-session KV-cache states for backends that reuse a growing prompt's cache."""
        import inspect

        if "states" in inspect.signature(self.backend.score_continuations).parameters:
            return {"states": [s[key] for s in sessions]}
        return {}

    def fingerprint(self) -> str:
        return f"choice:{self.backend.fingerprint()}|{PROMPT_VERSION}"

    def settings(self) -> dict[str, Any]:
        return {"prompt_version": PROMPT_VERSION, "history_turns": self.history_turns,
                "candidate_score": "mean token log-probability after 'Action:', minus the same "
                                   "in the prompt without the task (what the instruction adds)"}

    def _score(self, sessions, chats, candidates, key: str) -> list[list[float]]:
        return self.backend.score_continuations(
            chats, [[" " + c for c in cands] for cands in candidates],
            assistant_prefixes=[ANSWER_PREFIX] * len(chats), per_token=True, **self._states(sessions, key))

    def open(self, episode, instruction, world_text):
        # the world first: the 7 framings of an episode then share every token before the task
        task = {"role": "user", "content": f"{world_text}\n\nTask: {instruction}\n\nWhat is your next action?"}
        no_task = {"role": "user", "content": f"{world_text}\n\n{NULL_TASK['content']}"}
        return {"task": task, "no_task": no_task, "turns": [], "env": None, "kv": {}, "kv_no_task": {},
                "visited": set()}

    def decide(self, sessions, results, objects):
        chats, no_task, candidates = [], [], []
        for session, result, objects_text in zip(sessions, results, objects, strict=True):
            recent = recent_turns(session["turns"], result, objects_text, self.history_turns)
            chats.append([{"role": "system", "content": self.system}, session["task"]] + recent)
            no_task.append([{"role": "system", "content": self.system}, session["no_task"]] + recent)
            world = session["env"].world
            session["visited"].add(state_key(world))  # never back to a state this variant has been in
            candidates.append(valid_actions(world, session["visited"]))
        if not chats:
            return []
        # every variant scored with the task, then without it (the same world and history); the
        # difference is what the instruction adds to each candidate (domain-conditional PMI)
        with_task = self._score(sessions, chats, candidates, "kv")
        without = self._score(sessions, no_task, candidates, "kv_no_task")
        scores = [[a - b for a, b in zip(ra, rb, strict=True)]
                  for ra, rb in zip(with_task, without, strict=True)]
        out = []
        for session, chat, cands, row in zip(sessions, chats, candidates, scores, strict=True):
            best = max(range(len(cands)), key=lambda k: (row[k], -k))
            probs = softmax(row)
            runner_up = max((p for k, p in enumerate(probs) if k != best), default=0.0)
            session["turns"].append({"role": "assistant", "content": f"{ANSWER_PREFIX} {cands[best]}"})
            choice = {"probability": probs[best], "margin": probs[best] - runner_up,
                      "n_candidates": len(cands), "score": row[best]}
            out.append((f"{ANSWER_PREFIX} {cands[best]}", chat, {"choice": choice}))
        return out
