"""The embodied engines (registered under ``framebench.engines`` in pyproject.toml): the
non-LLM planners and the symbolic simulator. Any model engine's spec is also a planner spec
(``framebench.embodied.planners.load_planner`` wraps it in the LLM planner)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from framebench.backends.engines import HF_OPTIONS
from framebench.registry import Engine
from framebench.simulation import DryRun, SimulationSettings, Simulator

if TYPE_CHECKING:
    from framebench.pipeline.driver import Execution


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
    """Runs planners in framebench's symbolic PARTNR-semantics household (``framebench.embodied.env``)."""

    name = "symbolic"
    options = {name: text for name, (_type, text) in SYMBOLIC_OPTIONS.items()}

    def check_options(self, options) -> None:
        symbolic_options(options)

    def check_episodes(self, episodes: Path) -> None:
        from framebench.embodied.episodes import read_episodes

        read_episodes(episodes)

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings,
            execution: Execution) -> Path:
        """The planner is built by the executor's workers (here, or on Ray nodes) after the checks."""
        from framebench.embodied.episodes import read_episodes
        from framebench.embodied.planners import check_planner_spec
        from framebench.embodied.runner import run

        check_planner_spec(planner)
        parsed = read_episodes(episodes)  # validate before loading any model
        s, options, e = settings, symbolic_options(settings.options), execution
        return run(planner, episodes, out, replan_cap=s.replan_cap, partnr_compat=options["partnr_compat"],
                   limit=s.limit, progress=e.progress, parsed=parsed, max_new_tokens=s.max_new_tokens,
                   model_args=dict(s.model_args), executor=e.executor, ray_address=e.ray_address,
                   ray_workers=e.workers, force=e.force)

    def dry_run(self, planner: str, episodes: Path, settings: SimulationSettings) -> DryRun:
        return symbolic_dry_run(planner, episodes, settings)


def planner_calls_model(spec: str) -> bool | None:
    """Whether planner ``spec`` calls a model at every decision (and so is held to the replan
    cap), read from its class without building it; None for a planner engine of a plugin."""
    from framebench.embodied.choice_planner import ChoicePlanner
    from framebench.embodied.planners import LLMPlanner, OraclePlanner, ScriptPlanner
    from framebench.registry import engines_of

    kind = spec.partition(":")[0]
    if kind not in engines_of("planner"):
        return LLMPlanner.uses_cap  # a model spec drives the LLM planner
    classes = {"oracle": OraclePlanner, "script": ScriptPlanner, "choice": ChoicePlanner}
    return classes[kind].uses_cap if kind in classes else None


def symbolic_dry_run(planner: str, episodes: Path, settings: SimulationSettings) -> DryRun:
    """Episodes x framings as the runner runs them; an LLM planner's framing makes at most
    replan_cap + 1 planner calls (``framebench.embodied.runner``: PARTNR's replanning_count)."""
    from framebench.embodied.env import MAX_SIM_STEPS
    from framebench.embodied.episodes import read_episodes
    from framebench.embodied.framing import FRAMINGS, framing_slot
    from framebench.embodied.planners import check_planner_spec

    check_planner_spec(planner)
    symbolic_options(settings.options)
    parsed = read_episodes(episodes)
    calls = planner_calls_model(planner)
    per_variant = None if calls is None else (settings.replan_cap + 1 if calls else 0)
    cap = f"planner call {settings.replan_cap + 1} (replan cap {settings.replan_cap})"
    capped = (cap,) if calls else (f"{cap}, if the planner calls a model",) if calls is None else ()
    choice = planner.partition(":")[0] == CHOICE.name
    per_call = ("scores the actions the simulator would accept" if choice
                else f"generates at most {settings.max_new_tokens} tokens")
    return DryRun(episodes=len(parsed[:settings.limit]), episodes_in_file=len(parsed),
                  framings=tuple(framing_slot(b, lv) for b, lv in FRAMINGS), calls_per_framing=per_variant,
                  per_call=per_call if calls else "", ends=("Done[]", *capped, f"{MAX_SIM_STEPS:,} sim steps"))


ORACLE = Engine("oracle", "planner", _oracle, arg="none",
                help="the reference plan from the episode's own goal (no model)")
SCRIPT = Engine("script", "planner", _script, arg_help="FILE",
                help="replays {episode_id: [actions]} from a JSON file", check_arg=_script)  # reads and checks FILE
CHOICE = Engine("choice", "planner", _choice, HF_OPTIONS, arg_help="MODEL",
                help="scores the actions the simulator would accept under a model (hf:, smollm2), "
                     "runs the best")
SYMBOLIC = Engine("symbolic", "simulator", lambda arg: SymbolicSimulator(), arg="none",
                  help="the symbolic PARTNR-semantics household (CPU, no Habitat)")
