"""Property: on an "only the last handle placed" plan, --partnr-compat credits a counted proposition
in full exactly where PARTNR would (its last evaluated pair holds), and the intended semantics give
the one copy in ``number`` that one handle can satisfy.

Episodes: 80 random ones over the test house (predicate, handles and their order, count, receptacles
and their order, is_same_receptacle all drawn from a seeded RNG) plus the generator's own
"two of the three" episodes.
"""

import random

import pytest

from framebench.embodied.checks import counted_propositions, last_handle_only_plan, replay
from framebench.embodied.episodes import validate_episode
from framebench.embodied.generator import generate
from framebench.embodied.oracle import oracle_plan
from tests.partnr_quirk_helpers import SPOONS, episode, on_top, place


def random_episode(seed: int):
    rng = random.Random(seed)
    handles = rng.sample(SPOONS, rng.randint(2, 4))
    number = rng.randint(2, len(handles))
    kind = rng.choice(["is_on_top", "is_on_floor", "is_in_room"])
    if kind == "is_on_top":
        targets = rng.sample(["table_1", "table_2"], rng.randint(1, 2))
        prop = on_top(handles, targets, number=number, same=rng.random() < 0.5)
    elif kind == "is_on_floor":
        targets = []
        prop = {"function_name": "is_on_floor", "args": {"object_handles": handles, "number": number}}
    else:
        targets = ["living_room_1"]
        prop = {"function_name": "is_in_room", "args": {"object_handles": handles, "room_ids": targets,
                                                        "number": number, "is_same_room": False}}
    props, cons = [prop], [{"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0]}}]
    if rng.random() < 0.5:  # an unrelated second step after the counted one
        props.append(on_top(["cup_5"], ["table_2"]))
        cons.append({"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]]}})
    ep = episode(props, cons, eid=f"rand_{seed}")
    validate_episode(ep, where="generated")
    return ep, handles, number, targets


@pytest.mark.parametrize("seed", range(80))
def test_last_handle_only_is_credited_in_compat_mode(seed):
    ep, handles, number, targets = random_episode(seed)
    plan = last_handle_only_plan(ep)
    intended, compat = replay(ep, plan), replay(ep, plan, partnr_compat=True)
    n_props = len(ep["evaluation_propositions"])
    # unrolled: `number` copies of the counted proposition (+1 for the cup). Intended: one handle
    # meets only the number=1 copy, and the cup, which must follow the never-met original, is invalid.
    total = number + n_props - 1
    assert compat["percent_complete"] == 1.0 and compat["success"]
    assert intended["percent_complete"] == pytest.approx(1 / total)


@pytest.mark.parametrize("seed", range(0, 80, 4))
def test_other_handles_alone_are_not_credited(seed):
    # the first handle instead of the last (or the last handle on a non-last receptacle): the last
    # pair evaluated fails, so PARTNR agrees with the intended score.
    ep, handles, number, targets = random_episode(seed)
    prop = ep["evaluation_propositions"][0]
    if prop["function_name"] == "is_on_top" and len(targets) == 2:
        plan = place(handles[-1], targets[0]) + ["Done[]"]
    else:
        dest = {"is_on_top": targets[:1], "is_in_room": ["table_1"], "is_on_floor": ["floor_living_room_1"]}
        plan = place(handles[0], dest[prop["function_name"]][0]) + ["Done[]"]
    assert replay(ep, plan)["percent_complete"] == replay(ep, plan, partnr_compat=True)["percent_complete"]


def test_generated_two_of_three_episodes():
    episodes = [ep for ep in generate(40, seed=0) if counted_propositions(ep)]
    assert len(episodes) >= 2
    for ep in episodes:
        plan = last_handle_only_plan(ep)
        assert replay(ep, plan, partnr_compat=True)["percent_complete"] == 1.0
        assert replay(ep, plan)["percent_complete"] == 0.5  # "two of the three": number 2 and 1
        assert len(plan) < len(oracle_plan(ep))
