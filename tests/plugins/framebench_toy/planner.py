"""``firstplan``: navigates to the episode's first target receptacle, then says Done."""

from __future__ import annotations

from framebench.embodied.planners import PlanPlanner
from framebench.registry import Engine


class FirstFurniturePlanner(PlanPlanner):
    spec = "firstplan"

    def plan_for(self, episode):
        targets = [h for p in episode["evaluation_propositions"]
                   for h in p["args"].get("receptacle_handles", [])]
        return [f"Navigate[{targets[0]}]"] if targets else []


FIRST_PLAN = Engine("firstplan", "planner", lambda arg: FirstFurniturePlanner(), arg="none",
                    help="navigates to the first target receptacle, then Done")
