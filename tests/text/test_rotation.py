"""Option rotation (framebench.text_eval.framingqa.rotation): the build's rotations, and the position statistics on
rotation sets whose letter prior is known (docs/statistics.md "Option rotation")."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from text_helpers import cli_exit_code

from framebench.records import encode_answer_probs, make_row, to_table
from framebench.text_eval.framingqa.rotation import (
    LETTERS,
    complete_cycles,
    families,
    rotate,
    score_rotation,
    with_rotations,
)

OPTIONS = ["W", "X", "Y", "Z"]


def test_cyclic_rotations_put_the_gold_in_every_position():
    item = {"item_id": "c:mc:s", "slot": "s", "suite": "framingqa", "format": "mc", "options": OPTIONS,
            "gold": "B"}  # X
    rotations = [rotate(item, r) for r in range(1, 4)]
    assert [r["options"] for r in rotations] == [["X", "Y", "Z", "W"], ["Y", "Z", "W", "X"], ["Z", "W", "X", "Y"]]
    assert [r["gold"] for r in rotations] == ["A", "D", "C"]
    assert all(r["options"][LETTERS.index(r["gold"])] == "X" for r in rotations)
    assert [r["item_id"] for r in rotations] == ["c:mc:s@r1", "c:mc:s@r2", "c:mc:s@r3"]
    assert rotations[0]["original_options"] == OPTIONS and rotations[0]["suite"] == "framingqa_rotated"
    binary = {**item, "format": "binary", "options": [], "gold": "Yes"}
    assert len(with_rotations([item, binary])) == 2 + 3


def test_build_rotate_options_counts_and_default_unchanged(tmp_path, capsys):
    from framebench.items import read_items

    assert cli_exit_code("build", "framingqa", "--source", "datasets/demo/framingqa",
                         "--out", str(tmp_path / "rot"), "--rotate-options") == 0
    assert "384 MC items + 1152 rotated MC items" in capsys.readouterr().out
    items = read_items(tmp_path / "rot")
    assert sum(1 for it in items if it.get("rotation")) == 3 * 384
    report = (tmp_path / "rot" / "build_report.md").read_text()
    assert "1152 rotated items, 1536 MC items in all" in report
    assert cli_exit_code("build", "framingqa", "--source", "datasets/demo/framingqa", "--out", str(tmp_path / "plain")) == 0
    assert (tmp_path / "plain" / "items.jsonl").read_text() == \
        "".join(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n" for it in items if not it.get("rotation"))


def rows_for(answer, contexts=("c1", "c2"), biases=("correct", "incorrect"), fixed_gold="A",
             model="m") -> pd.DataFrame:
    """Every rotation of one question per (context, bias); ``answer(gold, bias) -> (letter,
    probs or None)``. Rotation r moves the gold from ``fixed_gold`` back by r letters."""
    out = []
    for ctx in contexts:
        for bias in biases:
            for r in range(4):
                gold = LETTERS[(LETTERS.index(fixed_gold) - r) % 4]
                letter, probs = answer(gold, bias)
                base = f"{ctx}:mc:{bias}"
                out.append(make_row(
                    run_id="r", model=model, suite="framingqa" if r == 0 else "framingqa_rotated",
                    task="finance", format="mc", context_id=ctx, item_id=base if r == 0 else f"{base}@r{r}",
                    bias=bias, level="root", slot=bias, gold=gold, answer=letter, parse="ok",
                    correct=letter == gold, answer_mode="constrained" if probs else "generate",
                    answer_probs=encode_answer_probs(probs) if probs else ""))
    return to_table(out).to_pandas()


def test_an_always_a_model_has_the_prior_all_on_a():
    m = score_rotation(rows_for(lambda gold, bias: ("A", None)))["m"]
    assert m["prior"] == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}
    assert m["by_position"] == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}
    assert m["strict_rotations"] == 0.0 and m["n_questions"] == 4 and m["n_rotations"] == 4
    assert m["strict_rotations_ci"] is None and m["small_sample"]  # 2 contexts: below the 10 a rate needs
    assert m["accuracy_fixed"] == 1.0  # the fixed order puts every gold at A: it looks perfect


def test_a_content_only_model_has_a_uniform_prior():
    m = score_rotation(rows_for(lambda gold, bias: (gold, None)))["m"]
    assert m["prior"] == {x: 0.25 for x in LETTERS}
    assert m["strict_rotations"] == 1.0


def test_known_prior_is_recovered_and_divided_out():
    """P(letter) = prior(letter) for a model that ignores the options: the mean over rotations is
    the prior exactly. With content (P ∝ prior × 1.5 at the gold), dividing out the estimated
    prior recovers the gold everywhere, while the raw answers follow the prior."""
    prior = np.array([0.5, 0.25, 0.15, 0.10])
    flat = score_rotation(rows_for(lambda g, b: ("A", dict(zip(LETTERS, prior, strict=True)))))["m"]
    assert [flat["prior"][x] for x in LETTERS] == pytest.approx(prior)

    def content(gold, bias):
        p = prior * np.where(np.array(LETTERS) == gold, 1.5, 1.0)
        p = p / p.sum()
        return LETTERS[int(p.argmax())], dict(zip(LETTERS, p, strict=True))

    for fixed_gold in LETTERS:
        m = score_rotation(rows_for(content, fixed_gold=fixed_gold))["m"]
        assert [m["prior"][x] for x in LETTERS] == pytest.approx(prior, abs=0.05)
        assert m["by_position"] == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}  # 0.375 < 0.5 at B
        assert m["debiased_accuracy"] == 1.0 and m["n_debiased"] == 4
        assert m["accuracy_fixed"] == (1.0 if fixed_gold == "A" else 0.0)


def test_position_balanced_framing_effect():
    """Right on every correct-bias question; on incorrect-bias ones only where the gold is at A.
    In the fixed order (gold at A) the framing effect is 0; over the four rotations it is
    1 - 1/4 = 75 pp."""
    def answer(gold, bias):
        return (gold if bias == "correct" or gold == "A" else "B" if gold != "B" else "C"), None

    m = score_rotation(rows_for(answer))["m"]
    assert m["framing_effect_fixed"] == 0.0
    assert m["framing_effect_balanced"] == pytest.approx(0.75)


def test_fixed_order_metrics_ignore_rotated_rows():
    from framebench.text_eval.framingqa.metrics import score_framingqa

    df = rows_for(lambda gold, bias: ("A", None))
    fixed = score_framingqa(df)["m"]["finance"]["mc"]
    assert fixed["n_rows"] == 4 and fixed["mean"] == 1.0  # rotation 0 only
    assert score_rotation(df[df["suite"] == "framingqa"]) == {}  # no rotation scored: no entry
    # rotations without the fixed order (or with a gap) are no complete cycle: no entry either
    assert score_rotation(df[df["suite"] == "framingqa_rotated"]) == {}
    assert score_rotation(df[~df["item_id"].str.endswith("@r2")]) == {}


DEMO_SLOTS = ("neutral", "correct/root/plain/Q1", "incorrect/root/plain/Q1/d1")


def test_demo_rotated_set_is_the_rotations_of_three_questions_per_mc_context():
    """datasets/demo/framingqa-rotated: rotations 1-3 of the neutral, the root Q1 correct-bias and
    the root Q1 incorrect-bias (first distractor) question of every demo MC context (their fixed
    orders are demo FramingQA items, answered in the demo's constrained run)."""
    from framebench.items import read_items

    fixed = [it for it in read_items("datasets/demo/framingqa") if it["format"] == "mc" and it["slot"] in DEMO_SLOTS]
    expected = [rotate(it, r) for it in fixed for r in range(1, 4)]
    assert read_items("datasets/demo/framingqa-rotated") == expected
    assert len(expected) == 12 * 3 * 3


def test_families_without_rotated_rows_are_empty():
    """Fixed-order MC rows alone hold no family (early exit before any per-item work)."""
    df = rows_for(lambda gold, bias: ("A", None))
    fam = families(df[df["suite"] == "framingqa"])
    assert fam.empty and {"base", "rotation", "right"} <= set(fam.columns)


def test_complete_cycles_need_rotation_zero_and_no_gap():
    rows = pd.DataFrame({"model": ["m"] * 9, "base": ["q1"] * 3 + ["q2"] * 2 + ["q3"] * 2 + ["q4"] * 2,
                         "rotation": [0, 1, 2, 0, 2, 1, 2, 0, 0]})
    assert complete_cycles(rows).tolist() == [True] * 3 + [False] * 6  # q2 gap, q3 no 0, q4 only 0
