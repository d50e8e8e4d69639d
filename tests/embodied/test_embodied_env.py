"""The gymnasium env, the symbolic predicates and PARTNR's text world description."""

import copy

import pytest
from gymnasium.utils.env_checker import check_env

from framebench.embodied.env import SymbolicPartnrEnv
from framebench.embodied.world import World
from tests.embodied.test_embodied_skills import SCENE

PURPOSES = {"action": "doing it", "correct": {"purpose": "p", "goal": "g", "stance": "appropriate"},
            "incorrect": {"purpose": "q", "goal": "h", "stance": "inappropriate"}}


def episode(props, deps=(), cons=(), eid="ep_1"):
    return {"episode_id": eid, "instruction": "Do it.", "evaluation_propositions": props,
            "evaluation_proposition_dependencies": list(deps), "evaluation_constraints": list(cons),
            "object_states": {}, "scene": copy.deepcopy(SCENE),
            "info": {"constraint_type": "none", "purposes": PURPOSES}}


LAMP_ON = {"function_name": "is_powered_on", "args": {"object_handles": ["lamp_2"], "number": 1}}
TOY_ON_COUNTER = {"function_name": "is_on_top", "args": {"object_handles": ["toy_4"],
                                                         "receptacle_handles": ["counter_12"], "number": 1}}


@pytest.mark.filterwarnings("error::UserWarning")
def test_check_env_passes():
    env = SymbolicPartnrEnv([episode([LAMP_ON]), episode([TOY_ON_COUNTER], eid="ep_2")])
    check_env(env, skip_render_check=True)


@pytest.mark.filterwarnings("error::UserWarning")
def test_registered_env_passes_check_env_with_render():
    import gymnasium as gym

    from framebench.embodied.env import ENV_ID

    env = gym.make(ENV_ID, episodes=[episode([LAMP_ON])], render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=0)
    assert env.render().startswith("Furniture:")


def test_world_description_format():
    text = World(SCENE).describe()
    assert text.splitlines()[:5] == [
        "Furniture:",
        "living_room_1: floor_living_room_1, table_10, cabinet_11",
        "kitchen_1: floor_kitchen_1, counter_12, sink_13",
        "hallway_1: floor_hallway_1",
        "The following furnitures have a faucet: sink_13",
    ]
    assert "Objects:" in text
    assert "cup_0: counter_12 in kitchen_1. States: clean: False, filled: False" in text
    assert "book_1: cabinet_11 in living_room_1" in text


def test_held_object_description_and_room():
    w = World(SCENE)
    w.agent.near = "table_10"
    w.objects["lamp_2"].on, w.objects["lamp_2"].held_by, w.agent.held = None, "agent_0", "lamp_2"
    assert "lamp_2: held by the agent" in w.describe_objects()
    room = {"function_name": "is_in_room", "args": {"object_handles": ["lamp_2"], "room_ids": ["living_room_1"]}}
    top = {"function_name": "is_on_top", "args": {"object_handles": ["lamp_2"], "receptacle_handles": ["table_10"]}}
    assert w.evaluate(room).is_satisfied and not w.evaluate(top).is_satisfied


def test_set_predicate_number_and_same_receptacle():
    w = World(SCENE)
    w.objects["toy_4"].on = "counter_12"  # table_10: lamp_2; counter_12: cup_0, kettle_3, toy_4
    args = {"object_handles": ["lamp_2", "cup_0", "toy_4"], "receptacle_handles": ["table_10", "counter_12"]}
    two = w.evaluate({"function_name": "is_on_top", "args": {**args, "number": 2}})
    assert two.is_satisfied  # pairs counted across receptacles: lamp/table + cup/counter
    assert two.info == {"object_handles": "cup_0", "receptacle_handles": "counter_12"}
    same3 = w.evaluate({"function_name": "is_on_top", "args": {**args, "number": 3, "is_same_receptacle": True}})
    assert not same3.is_satisfied
    same2 = w.evaluate({"function_name": "is_on_top", "args": {**args, "number": 2, "is_same_receptacle": True}})
    assert same2.is_satisfied and same2.info["receptacle_handles"] == "counter_12"


def test_inside_floor_next_to_clustered():
    w = World(SCENE)
    inside = {"function_name": "is_inside", "args": {"object_handles": ["book_1"], "receptacle_handles": ["cabinet_11"]}}
    on_top = {"function_name": "is_on_top", "args": {"object_handles": ["book_1"], "receptacle_handles": ["cabinet_11"]}}
    assert w.evaluate(inside).is_satisfied and w.evaluate(on_top).is_satisfied  # "above" semantics (Q3)
    w.objects["toy_4"].on = "floor_living_room_1"
    assert w.evaluate({"function_name": "is_on_floor", "args": {"object_handles": ["toy_4"]}}).is_satisfied
    nxt = {"function_name": "is_next_to", "args": {"entity_handles_a": ["cup_0"], "entity_handles_b": ["kettle_3"]}}
    assert not w.evaluate(nxt).is_satisfied
    w.next_to.add(frozenset({"cup_0", "kettle_3"}))
    assert w.evaluate(nxt).is_satisfied
    cluster = {"function_name": "is_clustered",
               "args": {"*args": [["cup_0"], ["kettle_3"], ["lamp_2"]], "number": [1, 1, 1]}}
    assert not w.evaluate(cluster).is_satisfied
    w.next_to.add(frozenset({"lamp_2", "kettle_3"}))  # cup - kettle - lamp: one component
    result = w.evaluate(cluster)
    assert result.is_satisfied and result.info["*args"] == (["cup_0"], ["kettle_3"], ["lamp_2"])


def test_state_predicates_and_missing_affordance():
    w = World(SCENE)
    assert w.evaluate({"function_name": "is_dirty", "args": {"object_handles": ["cup_0"]}}).is_satisfied
    assert w.evaluate({"function_name": "is_filled", "args": {"object_handles": ["kettle_3"]}}).is_satisfied
    assert w.evaluate({"function_name": "is_powered_off", "args": {"object_handles": ["lamp_2"]}}).is_satisfied
    with pytest.raises(KeyError):
        w.evaluate({"function_name": "is_clean", "args": {"object_handles": ["book_1"]}})


def test_episode_object_states_override_scene():
    ep = episode([LAMP_ON])
    ep["object_states"] = {"is_powered_on": {"lamp_2": True}}
    env = SymbolicPartnrEnv([ep])
    env.reset(options={"episode": ep})
    env.step("Done[]")
    assert env.metrics()["success"]


def test_done_terminates_and_reward_is_progress():
    ep = episode([LAMP_ON, TOY_ON_COUNTER])
    env = SymbolicPartnrEnv([ep])
    env.reset(options={"episode": ep})
    env.step("Navigate[lamp_2]")
    _, reward, terminated, truncated, info = env.step("Thought: on\nAction: PowerOn[lamp_2]")
    assert reward == pytest.approx(0.5) and not terminated and info["response"] == "Successful execution!"
    _, reward, terminated, truncated, info = env.step("Action: Done[]")
    assert terminated and not truncated and info["percent_complete"] == 0.5


def test_sim_step_limit_truncates():
    ep = episode([LAMP_ON])
    env = SymbolicPartnrEnv([ep], max_sim_steps=1000)
    env.reset(options={"episode": ep})
    assert env.step("Wait[]")[3] is False
    _, _, terminated, truncated, _ = env.step("Wait[]")
    assert truncated and not terminated and env.sim_steps == 1200


def test_extra_final_state_resolves_the_lag():
    # the toy only counts while the lamp is on (one-step lag). Power the lamp on as the last action:
    # without PARTNR's extra final state the toy would still be gated.
    dep = {"proposition_indices": [1], "depends_on": [0], "relation_type": "while_satisfied"}
    ep = episode([LAMP_ON, TOY_ON_COUNTER], deps=[dep])
    env = SymbolicPartnrEnv([ep])
    env.reset(options={"episode": ep})
    for action in ["Rearrange[toy_4, on, counter_12, None, None]", "Navigate[lamp_2]", "PowerOn[lamp_2]"]:
        assert env.step(action)[4]["response"] == "Successful execution!"
    assert env.tracker.percent_complete() == 0.5
    env.step("Done[]")
    assert env.metrics()["percent_complete"] == 1.0
    assert env.tracker.satisfied_at[1] == len(env.tracker.states) - 1


def test_unparseable_text_is_answered_not_raised():
    ep = episode([LAMP_ON])
    env = SymbolicPartnrEnv([ep])
    env.reset(options={"episode": ep})
    for text in ["", "I will now turn on the lamp", "Action: PowerOn[lamp_2", "\x00\x01"]:
        _, _, terminated, _, info = env.step(text)
        assert not terminated and info["response"] and info["sim_steps"] == 0
