"""The embodied engines (registered under ``framebench.engines`` in pyproject.toml): the
non-LLM planners and the symbolic simulator. Any model engine's spec is also a planner spec
(``embodied.planners.load_planner`` wraps it in the LLM planner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from framebench.backends.engines import HF_OPTIONS
from framebench.registry import Engine


def _oracle(arg: str):
    from embodied.planners import OraclePlanner

    return OraclePlanner()


def _choice(arg: str, **options):
    from embodied.choice_planner import ChoicePlanner
    from framebench.registry import build_engine

    return ChoicePlanner(build_engine(arg, "model", options))


def _script(arg: str):
    from embodied.planners import ScriptPlanner

    return ScriptPlanner(arg)


class SymbolicSimulator:
    """Runs planners in framebench's symbolic PARTNR-semantics household (``embodied.env``)."""

    name = "symbolic"

    def ray_runner(self) -> Any:
        """The same run on a Ray cluster (``run``'s ``remote``, bound to a cluster by the caller)."""
        from embodied.ray_executor import run_embodied_ray

        return run_embodied_ray

    def run(self, planner: str, episodes: Path, out: Path, *, replan_cap: int, max_new_tokens: int,
            partnr_compat: bool, limit: int | None, model_args: dict[str, Any],
            progress: bool = True, force: bool = False, remote: Any = None) -> Path:
        """``remote``: run the episodes elsewhere (``ray_runner()`` bound to a cluster) after the
        same checks."""
        from embodied.episodes import read_episodes
        from embodied.planners import check_planner_spec, load_planner
        from embodied.runner import run, run_identity
        from framebench.runinfo import check_reuse

        check_planner_spec(planner)
        n_episodes = len(read_episodes(episodes))  # validate before loading any model
        identity = run_identity(planner, episodes, replan_cap=replan_cap, partnr_compat=partnr_compat,
                                limit=limit, max_new_tokens=max_new_tokens)
        check_reuse(out, identity, force)
        if limit is not None and limit < n_episodes:
            from framebench.console import warn

            warn(f"--limit {limit}: running {limit} of {n_episodes} episodes; these metrics are not the "
                 "benchmark's (use --limit for smoke tests only)")
        if remote is not None:
            remote(planner, episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat,
                   max_new_tokens=max_new_tokens, limit=limit, progress=progress)
            return out
        chosen = load_planner(planner, max_new_tokens=max_new_tokens, model_args=model_args)
        return run(chosen, episodes, out, replan_cap=replan_cap, partnr_compat=partnr_compat,
                   limit=limit, progress=progress, identity=identity)


ORACLE = Engine("oracle", "planner", _oracle, arg="none",
                help="the reference plan from the episode's own goal (no model)")
SCRIPT = Engine("script", "planner", _script, arg_help="FILE",
                help="replays {episode_id: [actions]} from a JSON file")
CHOICE = Engine("choice", "planner", _choice, HF_OPTIONS, arg_help="MODEL",
                help="scores the actions the simulator would accept under a model (hf:, smollm2), "
                     "runs the best")
SYMBOLIC = Engine("symbolic", "simulator", lambda arg: SymbolicSimulator(), arg="none",
                  help="the symbolic PARTNR-semantics household (CPU, no Habitat)")
