"""The embodied engines (registered under ``framebench.engines`` in pyproject.toml): the
non-LLM planners and the symbolic simulator. Any model engine's spec is also a planner spec
(``embodied.planners.load_planner`` wraps it in the LLM planner)."""

from __future__ import annotations

from pathlib import Path

from framebench.backends.engines import HF_OPTIONS
from framebench.registry import Engine
from framebench.simulation import SimulationSettings, Simulator


def _oracle(arg: str):
    from framebench.embodied.planners import OraclePlanner

    return OraclePlanner()


def _choice(arg: str, **options):
    from framebench.embodied.choice_planner import ChoicePlanner, check_model_spec

    from framebench.registry import build_engine

    check_model_spec(arg)
    return ChoicePlanner(build_engine(arg, "model", options))


def _script(arg: str):
    from framebench.embodied.planners import ScriptPlanner

    return ScriptPlanner(arg)


# the symbolic simulator's own options (``SimulationSettings.options``): name -> (type, help)
SYMBOLIC_OPTIONS = {"partnr_compat": (bool, "evaluate as PARTNR's code does, quirks included")}


def symbolic_options(options) -> dict:
    """The symbolic simulator's options with their defaults (False); an unknown one or a value of
    the wrong type is a user error."""
    from framebench.errors import UserError

    for name, value in options.items():
        if name not in SYMBOLIC_OPTIONS:
            raise UserError(f"simulator symbolic: unknown option {name!r} (known: {', '.join(SYMBOLIC_OPTIONS)})")
        if not isinstance(value, SYMBOLIC_OPTIONS[name][0]):
            raise UserError(f"simulator symbolic: option {name!r} must be a {SYMBOLIC_OPTIONS[name][0].__name__}")
    return {"partnr_compat": False, **options}


class SymbolicSimulator(Simulator):
    """Runs planners in framebench's symbolic PARTNR-semantics household (``embodied.env``)."""

    name = "symbolic"
    options = {name: text for name, (_type, text) in SYMBOLIC_OPTIONS.items()}

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings, *,
            progress: bool = True, force: bool = False, executor: str = "local",
            ray_address: str | None = None, ray_workers: int | None = None) -> Path:
        """The planner is built by the executor's workers (here, or on Ray nodes) after the checks."""
        from framebench.embodied.episodes import read_episodes
        from framebench.embodied.planners import check_planner_spec
        from framebench.embodied.runner import run, run_identity

        from framebench.runinfo import check_reuse

        check_planner_spec(planner)
        parsed = read_episodes(episodes)  # validate before loading any model
        s, options = settings, symbolic_options(settings.options)
        identity = run_identity(planner, episodes, replan_cap=s.replan_cap, partnr_compat=options["partnr_compat"],
                                limit=s.limit, max_new_tokens=s.max_new_tokens)
        check_reuse(out, identity, force)
        if s.limit is not None and s.limit < len(parsed):
            from framebench.console import warn

            warn(f"--limit {s.limit}: running {s.limit} of {len(parsed)} episodes; these metrics are not the "
                 "benchmark's (use --limit for smoke tests only)")
        return run(planner, episodes, out, replan_cap=s.replan_cap, partnr_compat=options["partnr_compat"],
                   limit=s.limit, progress=progress, identity=identity, parsed=parsed,
                   max_new_tokens=s.max_new_tokens, model_args=dict(s.model_args), executor=executor,
                   ray_address=ray_address, ray_workers=ray_workers)


ORACLE = Engine("oracle", "planner", _oracle, arg="none",
                help="the reference plan from the episode's own goal (no model)")
SCRIPT = Engine("script", "planner", _script, arg_help="FILE",
                help="replays {episode_id: [actions]} from a JSON file")
CHOICE = Engine("choice", "planner", _choice, HF_OPTIONS, arg_help="MODEL",
                help="scores the actions the simulator would accept under a model (hf:, smollm2), "
                     "runs the best")
SYMBOLIC = Engine("symbolic", "simulator", lambda arg: SymbolicSimulator(), arg="none",
                  help="the symbolic PARTNR-semantics household (CPU, no Habitat)")
