"""The embodied interfaces: the Simulator protocol both simulators implement, the typed settings,
planners' Decision, and the runner acting only through the gym env's step()."""

import inspect
from pathlib import Path

import pytest

from framebench.embodied import runner
from framebench.embodied.env import SymbolicPartnrEnv
from framebench.embodied.episodes import read_episodes
from framebench.embodied.framing import FRAMINGS
from framebench.embodied.oracle import oracle_plan
from framebench.embodied.planners import Decision, OraclePlanner, PlanPlanner
from framebench.pipeline import Execution
from framebench.registry import build_engine
from framebench.simulation import SimulationSettings, Simulator

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"


@pytest.fixture(scope="module")
def episode():
    return read_episodes(DEMO)[0]


@pytest.mark.parametrize("name", ["symbolic", "habitat"])
def test_both_simulators_implement_the_protocol(name):
    sim = build_engine(name, "simulator")
    assert isinstance(sim, Simulator) and sim.name == name
    assert inspect.signature(type(sim).run) == inspect.signature(Simulator.run)


def test_settings_reach_the_symbolic_runner(tmp_path, monkeypatch):
    seen = {}

    def fake_run(planner, episodes, out, **kw):
        seen.update(kw, planner=planner)
        return out

    monkeypatch.setattr(runner, "run", fake_run)
    settings = SimulationSettings(replan_cap=3, max_new_tokens=9, limit=1, options={"partnr_compat": True})
    build_engine("symbolic", "simulator").run("oracle", DEMO, tmp_path / "r", settings,
                                              Execution(progress=False, force=True))
    assert (seen["replan_cap"], seen["partnr_compat"], seen["limit"]) == (3, True, 1)
    assert (seen["progress"], seen["force"], seen["executor"]) == (False, True, "local")
    assert seen["planner"] == "oracle" and seen["max_new_tokens"] == 9  # built by the executor's worker


class CountingEnv(SymbolicPartnrEnv):
    """Counts step() calls and fails if a skill runs outside one."""

    steps = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._in_step = False

    def step(self, action):
        CountingEnv.steps += 1
        self._in_step = True
        try:
            return super().step(action)
        finally:
            self._in_step = False

    def execute(self, action):
        assert self._in_step, "the runner ran a skill outside env.step()"
        return super().execute(action)


def test_runner_acts_only_through_env_step(episode, monkeypatch):
    """The oracle's plan (its actions, then Done): one step() per entry, per framing; each logged
    action's sim steps add up to the record's."""
    monkeypatch.setattr(runner, "SymbolicPartnrEnv", CountingEnv)
    CountingEnv.steps = 0
    results = runner.run_framings(episode, FRAMINGS, OraclePlanner())
    plan = oracle_plan(episode)
    assert plan[-1] == "Done[]" and CountingEnv.steps == len(FRAMINGS) * len(plan)
    for fields, log in results:
        assert log["end"] == "done" and fields["success"]
        assert sum(s.get("sim_steps", 0) for s in log["steps"]) == fields["sim_steps"] > 0


class PairPlanner(PlanPlanner):
    """Answers with bare (text, prompt) pairs, as planners written before Decision did."""

    spec = "pairs"

    def plan_for(self, episode):
        return ["Navigate[nowhere_1]"]

    def decide(self, sessions, results, objects):
        return [(d.text, "the prompt") for d in super().decide(sessions, results, objects)]


class LoggingPlanner(PlanPlanner):
    spec = "logging"

    def plan_for(self, episode):
        return []

    def decide(self, sessions, results, objects):
        return [Decision("Action: Done[]", None, {"choice": {"step": "done"}}) for _ in sessions]


def test_decisions_pairs_and_log_fields(episode):
    (fields, log), = runner.run_framings(episode, FRAMINGS[:1], PairPlanner())
    first, last = log["steps"]
    assert first["prompt"] == "the prompt" and first["action"] == "Navigate[nowhere_1]"
    assert "not present" in first["result"] and first["sim_steps"] == 0
    assert last["action"] == "Done[]" and log["end"] == "done"
    (fields, log), = runner.run_framings(episode, FRAMINGS[:1], LoggingPlanner())
    assert log["steps"] == [{"decision": 1, "prompt": None, "response": "Action: Done[]",
                             "choice": {"step": "done"}, "action": "Done[]"}]
    assert Decision("x") == ("x", None, None)  # a Decision is the pair it replaces, plus its log
