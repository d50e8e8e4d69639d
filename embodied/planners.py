"""Planners: ``oracle``, ``script:FILE`` and LLM planners over the shared model backends.

A planner answers one decision at a time with a ``Decision``: planner text (``Thought: ...`` /
``Action: Tool[args]``), the prompt that produced it and any fields for the framing's log; the
runner parses the text strictly, so a planner never needs to be well-behaved.

The LLM planner is a ZeroShotReact-style loop as in PARTNR: the prompt holds the tools, the task
(the framed instruction) and the world description; after every action the skill's result and the
object list are appended (``Result: ...`` / ``Objects: ...``); one LLM generation per decision. The
runner decides the framings of an episode in lockstep, so their generations reach the backend as one
batch (same results as one call each with greedy decoding, less wall time). To bound
prompt length for small local models the chat keeps the task message and the last
``history_turns`` exchanges.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from framebench.embodied.oracle import oracle_plan
from framebench.embodied.skills import TOOL_DESCRIPTIONS
from framebench.errors import UserError
from framebench.registry import check_planner_spec, planner_specs  # noqa: F401  (re-exported)

PROMPT_VERSION = "react-v2"
SYSTEM_PROMPT = (
    "You are a robot acting in a house. Complete the task by calling tools, one action at a time.\n\n"
    "Tools:\n{tools}\n\n"
    "Use the exact furniture, object and room names from the world description.\n"
    "Answer with one thought and one action, exactly in this format:\n"
    "Thought: <short reasoning>\n"
    "Action: <Tool>[<arguments>]\n"
    "For example:\n"
    "Thought: I need to go to the cup first.\n"
    "Action: Navigate[cup_0]\n"
    "When the task is complete, answer with Action: Done[]"
)


class Decision(NamedTuple):
    """One planner decision: ``text`` (planner text, parsed strictly by the runner), ``prompt``
    (what produced it: the chat, or None for plan planners) and ``log`` (extra fields for the
    framing's step log, e.g. the choice planner's ``choice``). A plain ``(text, prompt)`` pair
    reads as a Decision with no log."""

    text: str
    prompt: Any = None
    log: Mapping[str, Any] | None = None


class Planner:
    """Base planner: ``open`` a session per framing of an episode, then ``decide`` for a batch of
    sessions."""

    spec = ""
    # LLM planners: the replan cap (PARTNR's replanning_threshold) applies and ``replans`` counts
    # their calls; plan planners (oracle, script) make no LLM calls and record no replans.
    uses_cap = False

    def fingerprint(self) -> str:
        return self.spec

    def settings(self) -> dict[str, Any]:
        return {}

    def open(self, episode: dict[str, Any], instruction: str, world_text: str) -> Any:
        """Per-framing planner state (``instruction``: the framed instruction; ``world_text``: the
        simulator's first observation)."""
        raise NotImplementedError

    def decide(self, sessions: list[Any], results: list[str | None], objects: list[str]) -> list[Decision]:
        """One decision per session, in order: ``results`` is each session's last skill result
        (None before the first action), ``objects`` the objects' state now."""
        raise NotImplementedError


class PlanPlanner(Planner):
    """Replays a fixed list of actions, then says Done."""

    def plan_for(self, episode: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def open(self, episode, instruction, world_text):
        return list(self.plan_for(episode))

    def decide(self, sessions, results, objects):
        return [Decision(f"Action: {queue.pop(0) if queue else 'Done[]'}") for queue in sessions]


class OraclePlanner(PlanPlanner):
    spec = "oracle"

    def __init__(self) -> None:
        self._cache: dict[str, list[str]] = {}

    def fingerprint(self) -> str:
        return "oracle-v1"

    def plan_for(self, episode):
        eid = episode["episode_id"]
        if eid not in self._cache:
            self._cache[eid] = oracle_plan(episode)
        return self._cache[eid]


class ScriptPlanner(PlanPlanner):
    """``script:FILE``: JSON ``{episode_id: ["Navigate[table_14]", ...]}``, replayed on every framing."""

    def __init__(self, path: str):
        self.spec = f"script:{path}"
        file = Path(path)
        from framebench.jsonl import loads_strict, read_text_strict

        text = read_text_strict(file)
        scripts = loads_strict(text, f"{path}: script file")
        if not isinstance(scripts, dict):
            raise UserError(f"{path}: expected an object {{episode_id: [actions]}}")
        for eid, actions in scripts.items():
            if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
                raise UserError(f"{path}: episode {eid!r}: expected a list of action strings")
        self.scripts = scripts
        self._hash = hashlib.sha256(file.read_bytes()).hexdigest()[:16]

    def fingerprint(self) -> str:
        return f"script-{self._hash}"

    def plan_for(self, episode):
        return self.scripts.get(episode["episode_id"], [])


def recent_turns(turns: list[dict[str, str]], result: str | None, objects_text: str,
                 history_turns: int) -> list[dict[str, str]]:
    """Append the last action's result (and the objects' state) to a session's turns; return the
    last ``history_turns`` exchanges, starting with an assistant turn so user and assistant
    alternate after the task message."""
    if result is not None:
        turns.append({"role": "user", "content": f"Result: {result}\n{objects_text}\n\n"
                                                 "What is your next action?"})
    recent = turns[-2 * history_turns:]
    return recent[1:] if recent and recent[0]["role"] == "user" else recent


class LLMPlanner(Planner):
    uses_cap = True

    def __init__(self, backend: Any, max_new_tokens: int = 64, history_turns: int = 8):
        self.backend = backend
        self.spec = backend.spec
        self.max_new_tokens = max_new_tokens
        self.history_turns = history_turns
        from framebench.backends.base import Decoding

        self.decoding = Decoding(max_new_tokens=max_new_tokens, temperature=0.0,
                                 stop=("Assigned!", "\nResult:", "\nObservation:"))
        self.system = SYSTEM_PROMPT.format(tools="\n".join(f"- {d}" for d in TOOL_DESCRIPTIONS.values()))

    def fingerprint(self) -> str:
        return f"{self.backend.fingerprint()}|{PROMPT_VERSION}"

    def settings(self) -> dict[str, Any]:
        return {"decoding": self.decoding.as_dict(), "history_turns": self.history_turns,
                "prompt_version": PROMPT_VERSION}

    def open(self, episode, instruction, world_text):
        task = {"role": "user", "content": f"Task: {instruction}\n\n{world_text}\n\nWhat is your next action?"}
        return {"task": task, "turns": []}

    def decide(self, sessions, results, objects):
        """One LLM generation per session, sent to the backend as one batch."""
        chats = []
        for session, result, objects_text in zip(sessions, results, objects, strict=True):
            recent = recent_turns(session["turns"], result, objects_text, self.history_turns)
            chats.append([{"role": "system", "content": self.system}, session["task"]] + recent)
        texts = self.backend.generate(chats, self.decoding) if chats else []
        out = []
        for session, chat, text in zip(sessions, chats, texts, strict=True):
            text = text if isinstance(text, str) else ""
            session["turns"].append({"role": "assistant", "content": _trim_reply(text)})
            out.append(Decision(text, chat))
        return out


def _trim_reply(text: str) -> str:
    """Keep the reply up to its first action line (what the planner committed to)."""
    lines = []
    for line in text.strip().splitlines():
        lines.append(line)
        if "[" in line and "]" in line:
            break
    return "\n".join(lines) or text.strip()


def load_planner(spec: str, max_new_tokens: int = 64, history_turns: int = 8,
                 model_args: dict[str, Any] | None = None) -> Planner:
    """A registered planner engine (``oracle``, ``script:FILE``, ...), or any model spec wrapped
    in the LLM planner (``model_args``: that model engine's options)."""
    from framebench.registry import build_engine, engines_of

    check_planner_spec(spec)
    engine = engines_of("planner").get(spec.partition(":")[0])
    if engine is not None:
        if model_args and not engine.options:
            raise UserError(f"--model-arg: planner {spec!r} runs no model")
        return build_engine(spec, "planner", model_args)
    from framebench.backends import load_backend

    return LLMPlanner(load_backend(spec, **(model_args or {})), max_new_tokens=max_new_tokens,
                      history_turns=history_turns)
