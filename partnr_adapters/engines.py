"""The Habitat simulator engine (registered under ``framebench.engines``): runs the planner in
PARTNR/Habitat 3.0 through the in-container runner (Docker or a local habitat install), then ingests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from framebench.errors import UserError
from framebench.registry import Engine
from framebench.simulation import SimulationSettings, Simulator

if TYPE_CHECKING:
    from framebench.pipeline.driver import Execution


class HabitatSimulator(Simulator):
    """PARTNR in Habitat 3.0 (``framebench.partnr_adapters.habitat_simulator``): the in-container runner runs the framed
    episodes, ingest writes the run folder."""

    name = "habitat"

    def check_options(self, options) -> None:
        if options.get("partnr_compat"):
            raise UserError("--partnr-compat applies to the symbolic simulator (Habitat runs PARTNR's own evaluator)")
        super().check_options(options)

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings,
            execution: Execution) -> Path:
        """Locally the in-container runner runs here; on Ray its batches are units on the ``habitat`` hosts."""
        from framebench.partnr_adapters import habitat_simulator

        self.check_options(settings.options)
        e = execution
        habitat_simulator.run_habitat(planner=planner, episodes=episodes, out=out, executor=e.executor,
                                      ray_address=e.ray_address, workers=e.workers, progress=e.progress,
                                      force=e.force, replanning_threshold=settings.replan_cap,
                                      max_tokens=settings.max_new_tokens, limit=settings.limit,
                                      **settings.model_args)
        return out


HABITAT = Engine("habitat", "simulator", lambda arg: HabitatSimulator(), arg="none",
                 help="PARTNR in Habitat 3.0 (Docker image or local habitat-llm)")
