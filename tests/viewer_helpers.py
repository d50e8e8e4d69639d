"""Run folders for the viewer's page tests, small enough to count by hand.

FramingQA context c1 (law_issue_spotting) has seven items: five binary, two multiple choice
(a neutral question and an incorrect-bias one). Models and their wrong answers:

- ``m-a``: only ``binary:correct/global/plain/Q1`` (every model misses it);
- ``m-b``: that one and every incorrect-bias item (two binary, one MC);
- ``m-c`` (constrained, with answer probabilities): that one and the MC neutral question.

So strict breaks per model are 1, 4 and 2; the models disagree on four items (the two binary
incorrect-bias ones and both MC ones); five items break someone's strict result. On the MC
incorrect-bias item m-b answers B after A on the neutral question and m-c answers A after B:
two answers that differ from the model's own neutral answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from framebench.records import make_row, write_records
from framebench.run_folder import EPISODE_LOGS, prompt_line

SCRIPT_MARKER = "<script>window.fbPwned = 1; document.title = 'pwned'</script>"
PASSAGE = "Passage c1: the shop refused to honour the written warranty on a fridge."
# (format, slot, bias, level, form, distractor, gold)
FRAMINGQA_ITEMS = [
    ("binary", "correct/root/plain/Q1", "correct", "root", "plain", "", "Yes"),
    ("binary", "correct/root/negated/Q1", "correct", "root", "negated", "", "No"),
    ("binary", "correct/global/plain/Q1", "correct", "global", "plain", "", "Yes"),
    ("binary", "incorrect/root/plain/Q1/d1", "incorrect", "root", "plain", "d1", "No"),
    ("binary", "incorrect/global/plain/Q1/d1", "incorrect", "global", "plain", "d1", "No"),
    ("mc", "neutral", "neutral", "", "", "", "A"),
    ("mc", "incorrect/root/plain/Q1/d1", "incorrect", "root", "plain", "d1", "A"),
]
WRONG = {"binary": {"Yes": "No", "No": "Yes"}, "mc": {"A": "B", "B": "A"}}


def wrong_items(model: str) -> set[str]:
    everyone = {"binary:correct/global/plain/Q1"}
    if model == "m-b":
        return everyone | {f"{fmt}:{slot}" for fmt, slot, bias, *_ in FRAMINGQA_ITEMS if bias == "incorrect"}
    if model == "m-c":
        return everyone | {"mc:neutral"}
    return everyone


def framingqa_run(run_dir: Path, model: str, wrong_as: str | None = None) -> Path:
    """One model's run of context c1; ``wrong_as``: answer like that model of the three."""
    wrong, rows, prompts = wrong_items(wrong_as or model), [], []
    constrained = (wrong_as or model) == "m-c"
    for fmt, slot, bias, level, form, distractor, gold in FRAMINGQA_ITEMS:
        item_id = f"c1:{fmt}:{slot}"
        answer = WRONG[fmt][gold] if f"{fmt}:{slot}" in wrong else gold
        output = answer
        if model == "m-b" and slot == "correct/root/plain/Q1":
            output = f"{answer} {SCRIPT_MARKER}"
        probs = json.dumps({answer: 0.875, WRONG[fmt][answer]: 0.125}) if constrained else ""
        rows.append(make_row(
            run_id=f"run-{model}", model=model, suite="framingqa", task="law_issue_spotting", format=fmt,
            context_id="c1", item_id=item_id, bias=bias, level=level, form=form,
            phrasing="Q1" if bias != "neutral" else "", option="Consumer", distractor=distractor, slot=slot,
            gold=gold, answer=answer, parse="ok", correct=answer == gold, output="" if constrained else output,
            answer_mode="constrained" if constrained else "generate", answer_probs=probs))
        prompts.append(prompt_line(item_id, f"{PASSAGE}\n\nQuestion {fmt} {slot}?\nAnswer with one word."))
    _write(run_dir, rows, prompts)
    return run_dir


def omit_run(run_dir: Path) -> Path:
    """m-a on scenario S1, both frames, at M0 (one user turn) and M1 (a system turn first)."""
    rows, prompts = [], []
    for condition in ("M0", "M1"):
        for frame, answer in (("action", "No"), ("omission", "Yes")):
            item_id = f"S1:{frame}@{condition}"
            rows.append(make_row(run_id="run-omit", model="m-a", suite="omit", task="omit", format="binary",
                                 context_id="S1", item_id=item_id, bias="neutral", answer=answer, parse="ok",
                                 correct=False, output=answer, frame=frame, condition=condition))
            user = f"Scenario S1, {frame} wording. Will you act?"
            chat = [{"role": "user", "content": user}]
            if condition == "M1":
                chat.insert(0, {"role": "system", "content": "Think about omission bias first."})
            prompts.append(prompt_line(item_id, user, chat))
    _write(run_dir, rows, prompts)
    return run_dir


def embodied_run(run_dir: Path) -> Path:
    """The oracle on episode E1, neutral and correct/root framings, each with a planner log."""
    rows, prompts = [], []
    (run_dir / EPISODE_LOGS).mkdir(parents=True, exist_ok=True)
    for slot, bias, level in (("neutral", "neutral", ""), ("correct_root", "correct", "root")):
        item_id = f"E1__{slot}"
        rows.append(make_row(run_id="run-oracle", model="oracle", suite="embodied", task="robotics",
                             format="episode", context_id="E1", item_id=item_id, bias=bias, level=level,
                             slot=slot, parse="ok", correct=True, output="Action: Done[]", constraint="none",
                             percent_complete=1.0, success=True, sim_steps=12, replans=0))
        prompts.append(prompt_line(item_id, f"Move the cup ({slot})."))
        steps = [{"decision": 0, "prompt": "...", "response": "Navigate[table]", "action": "Navigate[table]"},
                 {"decision": 1, "prompt": "...", "response": "Done[]", "action": "Done[]"}]
        (run_dir / EPISODE_LOGS / f"{item_id}.json").write_text(json.dumps(
            {"episode_id": "E1", "planner": "oracle", "steps": steps, "end": "done"}))
    _write(run_dir, rows, prompts)
    return run_dir


def _write(run_dir: Path, rows: list[dict], prompts: list[dict]) -> None:
    write_records(rows, run_dir)
    (run_dir / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
