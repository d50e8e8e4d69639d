"""The choice-scoring planner: candidates are the calls the simulator accepts, PARTNR's oracle plan
is always among them, 7 framings are scored in one call, and it never issues an invalid action."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embodied.choice_planner import NULL_TASK, ChoicePlanner, candidate_actions, valid_actions
from embodied.episodes import read_episodes
from embodied.framing import VARIANTS
from embodied.oracle import oracle_plan
from embodied.runner import run_variants
from embodied.skills import SUCCESS, SkillExecutor, parse_action
from embodied.world import World

DEMO = Path(__file__).resolve().parent.parent / "datasets" / "demo" / "robotics" / "episodes.json.gz"


def test_oracle_plans_stay_inside_the_valid_candidates():
    """Every oracle step that changes the state is a candidate; its no-op steps (navigating to an
    object beside the furniture the agent stands at) are the ones left out."""
    skipped = 0
    for episode in read_episodes(DEMO):
        world = World(episode["scene"], episode.get("object_states"))
        for step in oracle_plan(episode):
            before = world.snapshot()
            valid = valid_actions(world)
            if step == "Done[]":
                assert step in valid
                break
            assert SkillExecutor(world, lambda _n: None).run(parse_action(step)) == SUCCESS
            changed = world.snapshot() != before
            assert (step in valid) == changed, (episode["episode_id"], step)
            skipped += not changed
    assert skipped > 0  # the demo's oracle plans do hold such no-ops


def test_valid_actions_follow_the_state():
    episode = read_episodes(DEMO)[0]
    world = World(episode["scene"], episode.get("object_states"))
    first = valid_actions(world)
    obj = next(iter(world.objects))
    assert f"Navigate[{obj}]" in first and f"Pick[{obj}]" not in first  # too far to pick
    assert f"Pick[{obj}]" in candidate_actions(world)
    SkillExecutor(world, lambda _n: None).run(parse_action(f"Navigate[{obj}]"))
    assert f"Pick[{obj}]" in valid_actions(world)
    assert first[-1] == "Done[]" and not any(a.startswith(("Wait", "Rearrange")) for a in first)


class OracleScorer:
    """Scores the oracle's next action highest (its plan replayed per variant), else by order."""

    spec = "fake:scorer"

    def __init__(self, episode):
        self.plan = oracle_plan(episode)
        self.calls: list[int] = []

    def fingerprint(self):
        return "fake"

    def score_continuations(self, chats, continuations, assistant_prefixes=None, per_token=False):
        self.calls.append(len(chats))
        out = []
        for chat, cands in zip(chats, continuations, strict=True):
            if NULL_TASK["content"] in chat[1]["content"] and "Task:" not in chat[1]["content"]:  # no task: flat
                out.append([0.0] * len(cands))
                continue
            done = sum(1 for m in chat if m["role"] == "assistant")
            target = " " + self.plan[min(done, len(self.plan) - 1)]
            out.append([0.0 if c == target else -1.0 - k / 100 for k, c in enumerate(cands)])
        return out


def test_choice_planner_batches_variants_and_logs_probability_and_margin():
    episode = read_episodes(DEMO)[0]
    scorer = OracleScorer(episode)
    planner = ChoicePlanner(scorer)
    results = run_variants(episode, list(VARIANTS), planner, replan_cap=25)
    assert all(fields["success"] for fields, _ in results)
    assert scorer.calls[0] == len(VARIANTS)  # all framings of the episode in one call
    step = results[0][1]["steps"][0]
    assert 0 < step["choice"]["probability"] <= 1 and step["choice"]["margin"] > 0
    assert step["choice"]["n_candidates"] > 10


def test_tiny_model_choice_planner_never_acts_invalidly(tiny_llama_dir):
    from framebench.backends.hf import HFBackend

    backend = HFBackend(str(tiny_llama_dir), spec="hf:tiny")
    planner = ChoicePlanner(backend)
    episode = read_episodes(DEMO)[1]
    results = run_variants(episode, list(VARIANTS)[:2], planner, replan_cap=4)
    for _fields, log in results:
        for step in log["steps"]:
            if step["action"] not in ("Done[]", None):
                assert step["result"] == SUCCESS, step
            assert step["response"].startswith("Action: ")
    json.dumps([log["steps"][0]["choice"] for _f, log in results])


def test_choice_needs_a_scoring_backend():
    from framebench.backends import load_backend
    from framebench.errors import UserError

    with pytest.raises(UserError, match="cannot score candidates"):
        ChoicePlanner(load_backend("baseline:always-yes"))
