"""The embodied engines (registered under ``framebench.engines`` in pyproject.toml): the
non-LLM planners and the symbolic simulator. Any model engine's spec is also a planner spec
(``embodied.planners.load_planner`` wraps it in the LLM planner)."""

from __future__ import annotations

from pathlib import Path

from framebench.backends.engines import HF_OPTIONS
from framebench.registry import Engine
from framebench.simulation import RemoteRun, SimulationSettings, Simulator


def _oracle(arg: str):
    from embodied.planners import OraclePlanner

    return OraclePlanner()


def _choice(arg: str, **options):
    from embodied.choice_planner import ChoicePlanner, check_model_spec
    from framebench.registry import build_engine

    check_model_spec(arg)
    return ChoicePlanner(build_engine(arg, "model", options))


def _script(arg: str):
    from embodied.planners import ScriptPlanner

    return ScriptPlanner(arg)


class SymbolicSimulator(Simulator):
    """Runs planners in framebench's symbolic PARTNR-semantics household (``embodied.env``)."""

    name = "symbolic"

    def ray_runner(self) -> RemoteRun:
        from embodied.ray_executor import run_embodied_ray

        return run_embodied_ray

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings, *,
            progress: bool = True, force: bool = False, remote: RemoteRun | None = None) -> Path:
        from embodied.episodes import read_episodes
        from embodied.planners import check_planner_spec, load_planner
        from embodied.runner import run, run_identity
        from framebench.runinfo import check_reuse

        check_planner_spec(planner)
        n_episodes = len(read_episodes(episodes))  # validate before loading any model
        s = settings
        identity = run_identity(planner, episodes, replan_cap=s.replan_cap, partnr_compat=s.partnr_compat,
                                limit=s.limit, max_new_tokens=s.max_new_tokens)
        check_reuse(out, identity, force)
        if s.limit is not None and s.limit < n_episodes:
            from framebench.console import warn

            warn(f"--limit {s.limit}: running {s.limit} of {n_episodes} episodes; these metrics are not the "
                 "benchmark's (use --limit for smoke tests only)")
        if remote is not None:
            remote(planner, episodes, out, replan_cap=s.replan_cap, partnr_compat=s.partnr_compat,
                   max_new_tokens=s.max_new_tokens, limit=s.limit, progress=progress)
            return out
        chosen = load_planner(planner, max_new_tokens=s.max_new_tokens, model_args=dict(s.model_args))
        return run(chosen, episodes, out, replan_cap=s.replan_cap, partnr_compat=s.partnr_compat,
                   limit=s.limit, progress=progress, identity=identity)


ORACLE = Engine("oracle", "planner", _oracle, arg="none",
                help="the reference plan from the episode's own goal (no model)")
SCRIPT = Engine("script", "planner", _script, arg_help="FILE",
                help="replays {episode_id: [actions]} from a JSON file")
CHOICE = Engine("choice", "planner", _choice, HF_OPTIONS, arg_help="MODEL",
                help="scores the actions the simulator would accept under a model (hf:, smollm2), "
                     "runs the best")
SYMBOLIC = Engine("symbolic", "simulator", lambda arg: SymbolicSimulator(), arg="none",
                  help="the symbolic PARTNR-semantics household (CPU, no Habitat)")
