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
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class SimulationSettings:
    """How a planner runs the episodes (``framebench embodied``'s flags).

    ``replan_cap``: most LLM planner calls past the first (PARTNR's ``replanning_threshold``);
    ``max_new_tokens``: LLM planners' tokens per decision; ``partnr_compat``: evaluate as
    PARTNR's code does, quirks included (symbolic simulator only); ``limit``: only the first N
    episodes; ``model_args``: the model engine's options (``--model-arg``)."""

    replan_cap: int = 25
    max_new_tokens: int = 64
    partnr_compat: bool = False
    limit: int | None = None
    model_args: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Simulator(Protocol):
    """A simulator engine's value."""

    name: str

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings, *,
            progress: bool = True, force: bool = False, executor: str = "local",
            ray_address: str | None = None, ray_workers: int | None = None) -> Path:
        """Run ``planner`` (a planner spec) on every framing of every episode in ``episodes`` and
        write the run folder ``out`` (records, run.json, prompts); ``force``: start over where a
        different run was there; ``executor``: where the units run (``local`` or ``ray``, on the
        cluster at ``ray_address`` with ``ray_workers`` workers; ``framebench.pipeline``)."""
        ...
