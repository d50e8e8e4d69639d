"""The symbolic PARTNR simulator as a ``gymnasium.Env`` (text actions in, text world description out).

One ``step`` runs one high-level action (``"Navigate[table_14]"``, ``"Done[]"``, or free planner text
whose last ``Tool[args]`` line is used). Every skill that consumes sim steps records one evaluation
state (Rearrange records two: after the pick and after the place), mirroring PARTNR's per-step
tracker at skill granularity; ``reset`` records the initial state and ending the episode (Done, the
sim-step limit, or ``finish()``) records the extra final state PARTNR's runner forces.

Reward is the change in percent complete; ``terminated`` on ``Done[]`` and (``partnr_compat``) when
PARTNR's evaluator would have raised (``info["evaluation_error"]``); ``truncated`` once the sim
steps reach ``max_sim_steps`` (PARTNR's 20,000).
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from framebench.embodied.evaluation import PropositionTracker
from framebench.embodied.skills import Action, SkillExecutor, parse_action
from framebench.embodied.world import World

CHARSET = string.printable
MAX_SIM_STEPS = 20_000
ENV_ID = "framebench/SymbolicPartnr-v0"


class SymbolicPartnrEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, episodes: list[dict[str, Any]], partnr_compat: bool = False,
                 max_sim_steps: int = MAX_SIM_STEPS, render_mode: str | None = None):
        if not episodes:
            raise ValueError("SymbolicPartnrEnv needs at least one episode")
        self.episodes = episodes
        self.partnr_compat = partnr_compat
        self.max_sim_steps = max_sim_steps
        self.render_mode = render_mode
        self.observation_space = spaces.Text(max_length=200_000, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=1_000, min_length=0, charset=CHARSET)
        self.episode: dict[str, Any] | None = None
        self.world: World | None = None
        self.tracker: PropositionTracker | None = None
        self.sim_steps = 0
        self.finished = False
        self._last_percent = 0.0

    # ------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "episode" in options:
            self.episode = options["episode"]
        elif "episode_index" in options:
            self.episode = self.episodes[int(options["episode_index"])]
        else:
            self.episode = self.episodes[int(self.np_random.integers(len(self.episodes)))]
        self.world = World(self.episode["scene"], self.episode.get("object_states"),
                           partnr_compat=self.partnr_compat)
        self.tracker = PropositionTracker(self.episode, partnr_compat=self.partnr_compat)
        self.sim_steps = 0
        self.finished = False
        self.tracker.update(self.world.evaluate)
        self._last_percent = self.tracker.percent_complete()
        return self.world.describe(), self._info("", self._last_percent)

    def step(self, action: str):
        if self.world is None or self.tracker is None:
            raise RuntimeError("call reset() before step()")
        if self.finished:
            return self.world.describe(), 0.0, True, False, self._info("The episode has ended.", self.tracker.percent_complete())
        parsed = parse_action(action)
        terminated = truncated = False
        if isinstance(parsed, str):
            response = parsed
        elif parsed.tool == "Done":
            response, terminated = "Done", True
        else:
            response = self.execute(parsed)
        if self.tracker.error is not None:  # compat: PARTNR's evaluator raised, its episode ends here
            terminated = True
        elif self.sim_steps >= self.max_sim_steps:
            truncated = not terminated
        if terminated or truncated:
            self.finish()
        percent = self.tracker.percent_complete()
        reward, self._last_percent = percent - self._last_percent, percent
        return self.world.describe(), float(reward), terminated, truncated, self._info(response, percent)

    def render(self) -> str | None:
        return self.world.describe() if self.render_mode == "ansi" and self.world else None

    # ------------------------------------------------------------ runner helpers

    def execute(self, action: Action) -> str:
        return SkillExecutor(self.world, self._record).run(action)

    def _record(self, steps: int) -> None:
        if steps > 0:
            self.sim_steps += steps
            self.tracker.update(self.world.evaluate)

    def finish(self) -> None:
        """End the episode: record PARTNR's extra final state (once)."""
        if not self.finished:
            self.tracker.update(self.world.evaluate)
            self.finished = True

    def metrics(self) -> dict[str, Any]:
        percent = self.tracker.percent_complete()
        return {"percent_complete": percent, "success": percent == 1.0, "sim_steps": self.sim_steps,
                "evaluation_error": self.tracker.error}

    def _info(self, response: str, percent: float) -> dict[str, Any]:
        return {"response": response, "percent_complete": percent, "success": percent == 1.0,
                "sim_steps": self.sim_steps, "episode_id": self.episode["episode_id"],
                "evaluation_error": self.tracker.error}


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="framebench.embodied.env:SymbolicPartnrEnv")
