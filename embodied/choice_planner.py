"""``choice:<model spec>``: a planner that scores the valid skill calls instead of generating text.

At every decision the planner lists the calls the simulator would accept in the current state
(``valid_actions``: every candidate in PARTNR's argument grammar, with names from the world, is run
on a copy of the world and kept when the skill answers ``Successful execution!``), adds
``Done[]``, scores each candidate after the prompt (tools, framed instruction, world text, history)
and the assistant prefix ``Action:``, and executes the best. Candidates are ranked by their mean
token log-probability (definition and reasons in ``docs/susceptibility.md``); ties go to the first
candidate in enumeration order. The candidates of all variants in a round (the 7 framings of an
episode, decided in lockstep by the runner) go to the backend in one call.
"""

from __future__ import annotations

import math
from typing import Any

from embodied.planners import Planner
from embodied.skills import SUCCESS, TOOL_DESCRIPTIONS, Action, SkillExecutor
from embodied.world import World
from framebench.errors import UserError

PROMPT_VERSION = "choice-v1"
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


def valid_actions(world: World) -> list[str]:
    """The candidates the simulator accepts in this state (run on a copy), then ``Done[]``."""
    valid = []
    for text in candidate_actions(world):
        tool, _, rest = text.partition("[")
        probe = world.copy()
        if SkillExecutor(probe, lambda _steps: None).run(Action(tool, rest[:-1])) == SUCCESS:
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

    def _states(self, sessions) -> dict[str, Any]:
        """Per-session KV-cache states for backends that reuse a growing prompt's cache."""
        import inspect

        if "states" in inspect.signature(self.backend.score_continuations).parameters:
            return {"states": [s["kv"] for s in sessions]}
        return {}

    def fingerprint(self) -> str:
        return f"choice:{self.backend.fingerprint()}|{PROMPT_VERSION}"

    def settings(self) -> dict[str, Any]:
        return {"prompt_version": PROMPT_VERSION, "history_turns": self.history_turns,
                "candidate_score": "mean token log-probability after 'Action:'"}

    def open(self, episode, instruction, world_text):
        task = {"role": "user", "content": f"Task: {instruction}\n\n{world_text}\n\nWhat is your next action?"}
        return {"task": task, "turns": [], "env": None, "kv": {}}

    def decide(self, sessions, results, objects):
        chats, candidates = [], []
        for session, result, objects_text in zip(sessions, results, objects, strict=True):
            turns = session["turns"]
            if result is not None:
                turns.append({"role": "user", "content": f"Result: {result}\n{objects_text}\n\n"
                                                         "What is your next action?"})
            recent = turns[-2 * self.history_turns:]
            if recent and recent[0]["role"] == "user":
                recent = recent[1:]
            chats.append([{"role": "system", "content": self.system}, session["task"]] + recent)
            candidates.append(valid_actions(session["env"].world))
        scores = self.backend.score_continuations(
            chats, [[" " + c for c in cands] for cands in candidates],
            assistant_prefixes=[ANSWER_PREFIX] * len(chats), per_token=True,
            **self._states(sessions)) if chats else []
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
