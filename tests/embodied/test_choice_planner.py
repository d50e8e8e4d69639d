"""The choice-scoring planner: candidates are the calls the simulator accepts, PARTNR's oracle plan
is always among them, 7 framings are scored in one call, and it never issues an invalid action."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.embodied.choice_planner import (
    ChoicePlanner,
    candidate_actions,
    describe_action,
    describe_scene,
    plan_prefix,
    spoken_names,
    valid_actions,
)
from framebench.embodied.episodes import read_episodes
from framebench.embodied.framing import FRAMINGS
from framebench.embodied.oracle import oracle_plan
from framebench.embodied.runner import run_framings
from framebench.embodied.skills import SUCCESS, SkillExecutor, parse_action
from framebench.embodied.world import World

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "robotics" / "episodes.json.gz"


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
    """Scores the description of the oracle's next action highest (its plan replayed per variant,
    the step number read from the plan prefix), else by order."""

    spec = "fake:scorer"

    def __init__(self, episode):
        spoken = spoken_names(World(episode["scene"], episode.get("object_states")))
        self.plan = [describe_action(a, spoken) for a in oracle_plan(episode)]
        self.calls: list[int] = []

    def fingerprint(self):
        return "fake"

    def info(self):
        return {}

    def score_continuations(self, chats, continuations, assistant_prefixes=None, per_token=False,
                            states=None):
        self.calls.append(len(chats))
        out = []
        for prefix, cands in zip(assistant_prefixes, continuations, strict=True):
            done = prefix.count("\n") - 1  # "Steps:\n1. ...\n2. ...\n3."
            target = " " + self.plan[min(done, len(self.plan) - 1)]
            out.append([0.0 if c == target else -1.0 - k / 100 for k, c in enumerate(cands)])
        return out


def test_calls_are_said_as_the_instruction_says_them():
    episode = read_episodes(DEMO)[0]
    world = World(episode["scene"], episode.get("object_states"))
    spoken = spoken_names(world)
    assert spoken["hand_towel_0"] == "hand towel" and spoken["bathroom_1"] == "bathroom"
    assert spoken["counter_27"] == "counter in the bathroom"
    assert spoken["floor_kitchen_1"] == "floor of the kitchen"
    assert describe_action("Place[cup_1, on, counter_27, None, None]", spoken) == \
        "put the cup on the counter in the bathroom"
    assert describe_action("Place[cup_1, within, cabinet_26, next_to, box_2]", spoken) == \
        "put the cup in the cabinet in the bathroom next to the box"
    assert describe_action("Pick[cup_1]", spoken) == "pick up the cup"
    assert describe_action("Navigate[sink_25]", spoken) == "go to the sink in the kitchen"
    assert describe_action("PowerOn[speaker_4]", spoken) == "turn on the speaker"
    assert describe_action("Done[]", spoken) == "done"
    assert describe_scene(world, spoken).startswith(
        "The hand towel is on the table in the living room. The cup is on the couch in the living room.")
    # every call the simulator can be asked for has a description, each one different
    texts = [describe_action(a, spoken) for a in candidate_actions(world)]
    assert len(set(texts)) == len(texts)
    assert plan_prefix([]) == "Steps:\n1." and plan_prefix(["go to the cup"]) == "Steps:\n1. go to the cup\n2."


def test_names_shared_by_two_of_a_kind_keep_their_number():
    scene = {"rooms": ["bedroom_1", "bedroom_2"], "agents": [{"name": "agent_0", "room": "bedroom_1"}],
             "furniture": [{"name": "bed_3", "type": "bed", "room": "bedroom_1", "position": [0, 0]},
                           {"name": "bed_4", "type": "bed", "room": "bedroom_2", "position": [1, 0]},
                           {"name": "table_5", "type": "table", "room": "bedroom_2", "position": [2, 0]},
                           {"name": "table_6", "type": "table", "room": "bedroom_2", "position": [3, 0]}],
             "objects": [{"name": "cup_0", "type": "cup", "on": "bed_3"},
                         {"name": "cup_1", "type": "cup", "on": "bed_4"},
                         {"name": "book_2", "type": "book", "on": "table_5"}]}
    spoken = spoken_names(World(scene))
    assert spoken["bedroom_1"] == "bedroom 1" and spoken["cup_1"] == "cup 1" and spoken["book_2"] == "book"
    assert spoken["bed_3"] == "bed in the bedroom 1"  # one bed per room: the room tells them apart
    assert spoken["table_5"] == "table 5 in the bedroom 2"


def test_choice_planner_batches_variants_and_logs_probability_and_margin():
    episode = read_episodes(DEMO)[0]
    scorer = OracleScorer(episode)
    planner = ChoicePlanner(scorer)
    results = run_framings(episode, list(FRAMINGS), planner, replan_cap=25)
    assert all(fields["success"] for fields, _ in results)
    assert scorer.calls[0] == len(FRAMINGS)  # all framings of the episode in one call
    step = results[0][1]["steps"][0]
    assert 0 < step["choice"]["probability"] <= 1 and step["choice"]["margin"] > 0
    assert step["choice"]["n_candidates"] > 10


def test_tiny_model_choice_planner_never_acts_invalidly(tiny_llama_dir):
    from framebench.backends.hf import HFBackend

    backend = HFBackend(str(tiny_llama_dir), spec="hf:tiny")
    planner = ChoicePlanner(backend)
    episode = read_episodes(DEMO)[1]
    results = run_framings(episode, list(FRAMINGS)[:2], planner, replan_cap=4)
    for _fields, log in results:
        for step in log["steps"]:
            if step["action"] not in ("Done[]", None):
                assert step["result"] == SUCCESS, step
            assert step["response"].startswith("Action: ")
    json.dumps([log["steps"][0]["choice"] for _f, log in results])


def test_choice_needs_a_scoring_backend():
    from framebench.backends import load_backend
    from framebench.errors import UserError

    with pytest.raises(UserError, match="cannot score continuations"):
        ChoicePlanner(load_backend("baseline:always-yes"))


def test_world_copy_is_independent_and_equals_a_deep_copy():
    """Every call the simulator accepts, run on ``World.copy()``, leaves the original untouched and
    ends in the same state as on a ``copy.deepcopy``; the oracle plans cover pick, place (next to),
    open, clean and Done."""
    import copy

    for episode in read_episodes(DEMO):
        world = World(episode["scene"], episode.get("object_states"))
        for step in oracle_plan(episode)[:-1]:
            before = world.snapshot()
            for text in candidate_actions(world):
                fast, deep = world.copy(), copy.deepcopy(world)
                results = [SkillExecutor(w, lambda _n: None).run(parse_action(text)) for w in (fast, deep)]
                assert results[0] == results[1] and fast.snapshot() == deep.snapshot(), (step, text)
                assert world.snapshot() == before, (step, text)
            SkillExecutor(world, lambda _n: None).run(parse_action(step))
