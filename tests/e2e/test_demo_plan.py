"""``framebench demo`` is the sweep plan installed with framebench (``demo:demo-plan.toml``): the
demo's run folders are exactly the plan's [[run]] entries, ``framebench sweep demo:demo-plan.toml``
reads the same runs, and the demo's options reach the runs as the plan's parameters. Nothing is
run here (test_demo.py runs the demo itself; test_wheel.py finds the plan in the wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.paths import demo_root

REPO = Path(__file__).resolve().parents[2]
PLAN_FILE = REPO / "datasets" / "demo" / "demo-plan.toml"

# The demo's runs as docs/demo.md describes them: (folder, kind, model or planner, data, answer
# mode, conditions, replan cap, episodes).
DEMO_RUNS = [
    ("framingqa-model", "text", "smollm2", "framingqa", "generate", "", None, None),
    ("framingqa-model-constrained", "text", "smollm2", "framingqa", "constrained", "", None, None),
    ("framingqa-rotated-constrained", "text", "smollm2", "framingqa-rotated", "constrained", "", None, None),
    ("framingqa-always-yes", "text", "baseline:always-yes", "framingqa", "generate", "", None, None),
    ("omit-model", "text", "smollm2", "omit", "generate", "M0,M1", None, None),
    ("omit-model-constrained", "text", "smollm2", "omit", "constrained", "M0,M1", None, None),
    ("embodied-oracle", "embodied", "oracle", "episodes.json.gz", "", "", None, None),
    ("embodied-model", "embodied", "smollm2", "episodes.json.gz", "", "", 2, 1),
    ("embodied-choice", "embodied", "choice:smollm2", "episodes.json.gz", "", "", 12, None),
]


def planned(argv: list[str], monkeypatch) -> object:
    """The plan a command hands to the sweep's runner (which is stopped there)."""
    import framebench.cli.sweep

    seen = []

    def stop(plan, **_kwargs):
        seen.append(plan)

    monkeypatch.setattr(framebench.cli.sweep, "run_plan", stop)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert (exc.value.code or 0) == 0
    (plan,) = seen
    return plan


def shape(run) -> tuple:
    return (run.out.name, run.kind, run.spec, run.data.name,
            run.answer if run.kind == "text" else "", run.condition, run.options.get("replan_cap"),
            run.options.get("limit"))


def test_the_demo_runs_the_installed_plan(tmp_path, monkeypatch):
    out = tmp_path / "demo"
    plan = planned(["demo", "--out", str(out)], monkeypatch)
    entries = tomllib.loads(PLAN_FILE.read_text())["run"]
    assert [r.out for r in plan.runs] == [out.resolve() / "runs" / e["name"] for e in entries]
    assert [shape(r) for r in plan.runs] == DEMO_RUNS
    assert plan.runs[5].reasoning_from == (plan.runs[4].out,)  # OMIT M1's reasoning from the generated run
    assert plan.score_also == [demo_root() / "omit" / "personas"] and plan.executor == "local"
    assert plan.out == out.resolve() and not out.exists()  # nothing written before the runs


def test_sweep_runs_the_same_plan_as_the_demo(tmp_path, monkeypatch):
    demo = planned(["demo", "--out", str(tmp_path / "o")], monkeypatch)
    sweep = planned(["sweep", "demo:demo-plan.toml", "--out", str(tmp_path / "o")], monkeypatch)
    assert sweep.runs == demo.runs and sweep.score_also == demo.score_also
    monkeypatch.chdir(tmp_path)  # without --out: the plan's out, under the current folder
    assert planned(["sweep", "demo:demo-plan.toml"], monkeypatch).out == tmp_path.resolve() / "framebench-demo"


def test_the_demo_options_are_the_plans_parameters(tmp_path, monkeypatch):
    argv = ["demo", "--out", str(tmp_path), "--model", "hf:org/tiny", "--planner-replans", "3",
            "--choice-replans", "5", "--planner-episodes", "2", "--choice-episodes", "4"]
    plan = planned(argv, monkeypatch)
    specs = [r.spec for r in plan.runs]
    assert specs == [s.replace("smollm2", "hf:org/tiny") for _, _, s, *_ in DEMO_RUNS]
    by_name = {r.out.name: r for r in plan.runs}
    assert by_name["embodied-model"].options["replan_cap"] == 3 and by_name["embodied-model"].options["limit"] == 2
    assert by_name["embodied-choice"].options["replan_cap"] == 5 and by_name["embodied-choice"].options["limit"] == 4
    assert by_name["framingqa-model"].title == "FramingQA text, hf:org/tiny"
    sweep = planned(["sweep", "demo:demo-plan.toml", "--out", str(tmp_path), "--set", "model=hf:org/tiny",
                     "--set", "planner_replans=3", "--set", "choice_replans=5", "--set", "planner_episodes=2",
                     "--set", "choice_episodes=4"], monkeypatch)
    assert sweep.runs == plan.runs

