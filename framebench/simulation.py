"""What a simulator engine is (``framebench.registry`` engines of kind ``simulator``): it runs a
planner on every framing of every episode in an episode file and writes a run folder.

``SimulationSettings`` are the settings that determine the results (the run's identity);
``Simulator`` is the protocol the registered simulators implement (``symbolic`` in its suite
package, ``habitat`` in its adapter package); ``framebench.api.run_embodied`` and sweeps call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from framebench.errors import UserError

if TYPE_CHECKING:
    from framebench.pipeline.driver import Execution

DEFAULT_SIMULATOR = "symbolic"  # the embedded default (docs/design.md), the one without Habitat


@dataclass(frozen=True)
class SimulationSettings:
    """How a planner runs the episodes (``framebench embodied``'s flags).

    ``replan_cap``: most LLM planner calls past the first (PARTNR's ``replanning_threshold``);
    ``max_new_tokens``: LLM planners' tokens per decision; ``limit``: only the first N
    episodes; ``model_args``: the model engine's options (``--model-arg``); ``options``: the
    simulator's own options, which that simulator checks and reads (the symbolic one's are in its
    package: ``framebench.embodied.engines``)."""

    replan_cap: int = 25
    max_new_tokens: int = 64
    limit: int | None = None
    model_args: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DryRun:
    """What a simulator run would do, counted before anything runs (``framebench embodied
    --dry-run``): ``episodes`` of ``episodes_in_file`` run (``limit``), each in every one of
    ``framings`` (neutral first); ``calls_per_framing``: the most planner calls to a model one
    episode framing makes (0: the planner calls no model; None: not known before the planner is
    built); ``per_call``: what one such call does; ``ends``: what ends one."""

    episodes: int
    episodes_in_file: int
    framings: tuple[str, ...]
    calls_per_framing: int | None
    per_call: str = ""
    ends: tuple[str, ...] = ()

    @property
    def episode_framings(self) -> int:
        return self.episodes * len(self.framings)

    @property
    def planner_calls(self) -> int | None:
        return None if self.calls_per_framing is None else self.episode_framings * self.calls_per_framing


@runtime_checkable
class Simulator(Protocol):
    """A simulator engine's value. ``options``: its own options (name -> one line of help),
    whose values ``SimulationSettings.options`` carries; it checks them itself."""

    name: str
    options: Mapping[str, str] = MappingProxyType({})

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Refuse an option it does not take, or a value of the wrong type (one line), before
        anything runs (a sweep checks every run's first; ``run`` checks again)."""
        if options:
            raise UserError(f"simulator {self.name}: it takes no simulator options (got {', '.join(options)})")

    def check_episodes(self, episodes: Path) -> None:
        """Refuse an episode file it cannot run (one line naming the file), before anything runs."""

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings,
            execution: Execution) -> Path:
        """Run ``planner`` (a planner spec) on every framing of every episode in ``episodes`` and
        write the run folder ``out`` (records, run.json, prompts), through the driver
        (``framebench.pipeline.drive``), which refuses another run in ``out`` unless
        ``execution.force`` and runs the units where ``execution`` says."""
        ...

    def dry_run(self, planner: str, episodes: Path, settings: SimulationSettings) -> DryRun:
        """What ``run`` would do with these arguments, checked as ``run`` checks them, without
        running or writing anything (a simulator that cannot count it says so)."""
        from framebench.errors import UserError

        raise UserError(f"--dry-run: the {self.name} simulator cannot count its run in advance")
