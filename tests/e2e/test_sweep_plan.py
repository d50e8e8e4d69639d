"""framebench sweep: plan validation (one line naming file and field) and a local-executor sweep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.pipeline.sweep import read_plan
from framebench.records import read_records

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


def cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code or 0


@pytest.mark.parametrize("body, message", [
    ('out = "s"\n[text]\nmodels = ["baseline:random"]\ndatasets = ["nowhere"]\n',
     "text.datasets: 'nowhere' does not exist"),
    ('out = "s"\nexecutor = "dask"\n[text]\nmodels = ["m"]\ndatasets = ["."]\n', "executor: expected local or ray"),
    ('out = "s"\n[text]\nmodel = ["m"]\n', "text: unknown field 'model'"),
    ('out = "s"\n[embodied]\nplanners = []\nepisodes = ["x"]\n', "embodied.planners: expected a non-empty list"),
    ('out = "s"\n', "the plan has no [text] or [embodied] runs"),
    ('out = \n', "not valid TOML"),
    ('out = "s"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\nsimulators = ["gazebo"]\n',
     "embodied.simulators: unknown simulator spec 'gazebo'"),
    ('out = "s"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\nsimulator_options = 3\n',
     "embodied.simulator_options: expected a table"),
])
def test_bad_plan_is_one_line_exit_2(tmp_path, capsys, body, message):
    plan = tmp_path / "plan.toml"
    plan.write_text(body)
    assert cli(["sweep", str(plan)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(plan) in err[0] and message in err[0]
    assert not (tmp_path / "s").exists()


def test_plan_expands_models_datasets_conditions(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(f'out = "s"\n[text]\nmodels = ["baseline:random", "hf:/m/Llama-3"]\n'
                    f'datasets = ["{DEMO / "framingqa"}", "{DEMO / "omit"}"]\nconditions = ["M0", "M1", "M2"]\n'
                    f'[embodied]\nplanners = ["oracle"]\nepisodes = ["{DEMO / "robotics" / "episodes.json.gz"}"]\n')
    runs = read_plan(plan).runs
    # 2 models x (FramingQA + OMIT x 3 conditions) + 1 planner x 1 episode file
    assert len(runs) == 2 * (1 + 3) + 1
    assert [r.out.name for r in runs[:4]] == ["baseline-random__framingqa", "baseline-random__omit__M0", "baseline-random__omit__M1",
                                               "baseline-random__omit__M2"]
    assert runs[4].out.name == "llama-3__framingqa" and runs[-1].out.name == "oracle__episodes"


def test_local_sweep_runs_and_scores(tmp_path, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(f'out = "s"\nexecutor = "local"\n[text]\nmodels = ["baseline:always-yes"]\n'
                    f'datasets = ["{DEMO / "omit"}"]\nconditions = ["M0", "M1"]\n'
                    f'[embodied]\nplanners = ["oracle"]\nepisodes = ["{DEMO / "robotics" / "episodes.json.gz"}"]\n')
    assert cli(["sweep", str(plan), "--quiet"]) == 0
    for condition in ("M0", "M1"):
        df = read_records(tmp_path / "s" / "text" / f"baseline-always-yes__omit__{condition}")
        assert len(df) == 32 and set(df.condition) == {condition}
    (embodied,) = (tmp_path / "s" / "embodied").iterdir()
    episodes = read_records(embodied)
    assert len(episodes) == 28 and episodes["success"].all()  # the oracle completes every variant
    assert json.loads((tmp_path / "s" / "report" / "report.json").read_text())
    assert "wrote" in capsys.readouterr().out


def test_a_sweep_runs_the_simulators_it_names_with_their_options(tmp_path, monkeypatch):
    """Any registered simulator, not only the symbolic one: each gets the plan's settings and its
    options (which the simulator itself checks)."""
    from framebench import registry
    from framebench.pipeline import sweep

    plan = tmp_path / "plan.toml"
    plan.write_text(f'out = "s"\nexecutor = "local"\n[embodied]\nplanners = ["oracle"]\n'
                    f'episodes = ["{DEMO / "robotics" / "episodes.json.gz"}"]\nsimulators = ["symbolic", "habitat"]\n'
                    f'replan_cap = 3\n[embodied.simulator_options]\npartnr_compat = true\n')
    runs = read_plan(plan).runs
    assert [(r.simulator, r.out.name) for r in runs] == [("symbolic", "oracle__episodes"),
                                                         ("habitat", "oracle__episodes__habitat")]
    seen = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def run(self, planner, episodes, out, settings, **kw):
            seen.append((self.name, planner, out.name, settings.replan_cap, dict(settings.options)))
            return out

    built = registry.build_engine
    monkeypatch.setattr(registry, "build_engine",
                        lambda spec, kind, options=None: Recorder(spec) if kind == "simulator" else built(spec, kind, options))
    for run in runs:
        sweep.execute(run, "local", None, None, progress=False)
    assert seen == [("symbolic", "oracle", "oracle__episodes", 3, {"partnr_compat": True}),
                    ("habitat", "oracle", "oracle__episodes__habitat", 3, {"partnr_compat": True})]


def test_a_simulator_checks_its_own_options(tmp_path):
    """The symbolic simulator refuses an option it does not declare; Habitat takes none."""
    from framebench.errors import UserError
    from framebench.registry import build_engine
    from framebench.simulation import SimulationSettings

    episodes = DEMO / "robotics" / "episodes.json.gz"
    assert set(build_engine("symbolic", "simulator").options) == {"partnr_compat"}
    with pytest.raises(UserError, match="simulator symbolic: unknown option 'gravity'"):
        build_engine("symbolic", "simulator").run("oracle", episodes, tmp_path / "r",
                                                  SimulationSettings(options={"gravity": 1}), progress=False)
    with pytest.raises(UserError, match="--partnr-compat applies to the symbolic simulator"):
        build_engine("habitat", "simulator").run("oracle", episodes, tmp_path / "h",
                                                 SimulationSettings(options={"partnr_compat": True}), progress=False)
