"""framebench sweep: plan validation (one line naming file and field) and a local-executor sweep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framebench.cli import main
from framebench.pipeline.sweep import read_plan
from framebench.records import read_records

DEMO = Path(__file__).resolve().parent.parent / "datasets" / "demo"


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
