"""The Habitat simulator engine (registered under ``framebench.engines``): runs the planner in
PARTNR/Habitat 3.0 through the driver (Docker or a local habitat install), then ingests."""

from __future__ import annotations

from pathlib import Path

from framebench.errors import UserError
from framebench.registry import Engine
from framebench.simulation import RemoteRun, SimulationSettings, Simulator


class HabitatSimulator(Simulator):
    """PARTNR in Habitat 3.0 (``partnr_adapters.habitat_simulator``): the driver runs the framed
    episodes, ingest writes the run folder."""

    name = "habitat"

    def ray_runner(self) -> RemoteRun:
        from partnr_adapters.ray_executor import run_habitat_ray

        return run_habitat_ray

    def run(self, planner: str, episodes: Path, out: Path, settings: SimulationSettings, *,
            progress: bool = True, force: bool = False, remote: RemoteRun | None = None) -> Path:
        from partnr_adapters import habitat_simulator

        if settings.partnr_compat:
            raise UserError("--partnr-compat applies to the symbolic simulator (Habitat runs PARTNR's own evaluator)")
        run = remote or habitat_simulator.run_habitat  # remote: the driver's batches on a Ray cluster
        run(planner=planner, episodes=episodes, out=out, replanning_threshold=settings.replan_cap,
            max_tokens=settings.max_new_tokens, limit=settings.limit, **settings.model_args)
        return out


HABITAT = Engine("habitat", "simulator", lambda arg: HabitatSimulator(), arg="none",
                 help="PARTNR in Habitat 3.0 (Docker image or local habitat-llm)")
