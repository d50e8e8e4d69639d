"""The Habitat simulator engine (registered under ``framebench.engines``): runs the planner in
PARTNR/Habitat 3.0 through the driver (Docker or a local habitat install), then ingests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.registry import Engine


class HabitatSimulator:
    name = "habitat"

    def ray_runner(self) -> Any:
        """The driver's batches on a Ray cluster (``run``'s ``remote``, bound by the caller)."""
        from partnr_adapters.ray_executor import run_habitat_ray

        return run_habitat_ray

    def run(self, planner: str, episodes: Path, out: Path, *, replan_cap: int, max_new_tokens: int,
            partnr_compat: bool, limit: int | None, model_args: dict[str, Any],
            progress: bool = True, force: bool = False, remote: Any = None) -> Path:
        from partnr_adapters import habitat_simulator

        if partnr_compat:
            raise UserError("--partnr-compat applies to the symbolic simulator (Habitat runs PARTNR's own evaluator)")
        run = remote or habitat_simulator.run_habitat  # remote: the driver's batches on a Ray cluster
        run(planner=planner, episodes=episodes, out=out, replanning_threshold=replan_cap,
            max_tokens=max_new_tokens, limit=limit, **model_args)
        return out


HABITAT = Engine("habitat", "simulator", lambda arg: HabitatSimulator(), arg="none",
                 help="PARTNR in Habitat 3.0 (Docker image or local habitat-llm)")
