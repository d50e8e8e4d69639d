"""framebench sweep: plan validation (one line naming file and field) and a local-executor sweep."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pytest
from test_readme import readme_files

from framebench.cli import main
from framebench.records import read_records
from framebench.sweep import (
    EMBODIED_KEYS,
    RUN_EMBODIED_KEYS,
    RUN_TEXT_KEYS,
    TEXT_KEYS,
    TOP_KEYS,
    read_plan,
    resolve_executor,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
EPISODES = DEMO / "robotics" / "episodes.json.gz"


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
    ('out = "s"\n', "the plan has no [text], [embodied] or [[run]] runs"),
    ('out = \n', "not valid TOML"),
    ('out = "s"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\nsimulators = ["gazebo"]\n',
     "embodied.simulators: unknown simulator spec 'gazebo'"),
    ('out = "s"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\nsimulator_options = 3\n',
     "embodied.simulator_options: expected a table"),
    (f'out = "s"\n[text]\nmodels = ["baseline:random"]\ndatasets = ["{DEMO / "omit"}"]\nconditions = ["M9"]\n',
     "text.conditions: unknown condition 'M9' (" + str(DEMO / "omit") + " offers M0, M1"),
    (f'out = "s"\n[text]\nmodels = ["baseline:random"]\ndatasets = ["{DEMO / "omit"}"]\nanswers = ["guess"]\n',
     "text.answers: unknown answer mode 'guess' (known: generate, constrained"),
    (f'out = "s"\n[text]\nmodels = ["baseline:random"]\ndatasets = ["{DEMO / "omit"}"]\nlimit = "10"\n',
     "text.limit (as --limit)"),
    (f'out = "s"\n[text]\nmodels = ["baseline:random"]\ndatasets = ["{DEMO / "omit"}"]\nbatch_size = 0\n',
     "text.batch_size (as --batch-size)"),
    ('out = "s"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\nreplan_cap = true\n',
     "embodied.replan_cap (as --replan-cap)"),
    (f'out = "s"\nexecutor = "local"\nray_address = "auto"\n[embodied]\nplanners = ["oracle"]\nepisodes = ["{EPISODES}"]\n',
     "a Ray address ('auto') with executor local: it applies to executor ray"),
    (f'out = "s"\nworkers = 2\n[embodied]\nplanners = ["oracle"]\nepisodes = ["{EPISODES}"]\n',
     "workers = 2 with executor local: it applies to executor ray"),
    ('out = "s"\n[params]\nm = "x"\n[embodied]\nplanners = ["{n}"]\nepisodes = ["."]\n',
     "embodied.planners[1]: '{n}' names no parameter 'n' (the plan's [params]: m)"),
    ('out = "s"\nparams = 3\n[embodied]\nplanners = ["oracle"]\nepisodes = ["."]\n',
     "params: expected a table of NAME = VALUE"),
    ('out = "s"\n[params]\nm = 1.5\n[embodied]\nplanners = ["{m}"]\nepisodes = ["."]\n',
     "params.m: expected a string, an integer or a boolean, got 1.5"),
    ('out = "s"\n[[run]]\nname = "a"\ndataset = "."\n', "run[1]: expected model (a text run) or planner"),
    ('out = "s"\n[[run]]\nname = "../a"\nplanner = "oracle"\n', "run[1].name: expected the run's folder name"),
    (f'out = "s"\n[[run]]\nname = "a"\nplanner = "oracle"\nepisodes = "{EPISODES}"\nmodel = "m"\n',
     "run[1]: names a model and a planner"),
    (f'out = "s"\n[[run]]\nname = "a"\nplanner = "oracle"\nepisodes = "{EPISODES}"\nanswer = "generate"\n',
     "run[1]: unknown field 'answer'"),
    (f'out = "s"\n[[run]]\nname = "a"\nplanner = "oracle"\nepisodes = "{EPISODES}"\n'
     f'[[run]]\nname = "a"\nplanner = "oracle"\nepisodes = "{EPISODES}"\n', "run[2].name: 'a' names an earlier [[run]] too"),
    (f'out = "s"\n[[run]]\nname = "a"\nmodel = "baseline:random"\ndataset = "{DEMO / "framingqa"}"\n'
     'conditions = ["M0"]\n', "run[1].conditions: unknown condition 'M0' (" + str(DEMO / "framingqa") + " offers no conditions)"),
    (f'out = "s"\n[[run]]\nname = "a"\nmodel = "baseline:random"\ndataset = "{DEMO / "omit"}"\n'
     'answer = "constrained"\nreasoning_from = ["b"]\n', "run[1].reasoning_from: 'b' names no earlier text [[run]]"),
    (f'out = "s"\n[[run]]\nname = "a"\nplanner = "oracle"\nepisodes = "{EPISODES}"\nreplan_cap = 0\n',
     "run[1].replan_cap (as --replan-cap)"),
    (f'out = "s"\nscore_also = ["{DEMO / "omit"}"]\n[embodied]\nplanners = ["oracle"]\nepisodes = ["{EPISODES}"]\n',
     "score_also: " + str(DEMO / "omit") + " holds no records.parquet"),
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
    plan.write_text(f'out = "s"\n[text]\nmodels = ["baseline:random", "hf:org/Llama-3"]\n'
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
    options, which every simulator of the plan checks before anything runs."""
    from framebench import registry, sweep
    from framebench.errors import UserError

    plan = tmp_path / "plan.toml"
    body = (f'out = "s"\nexecutor = "local"\n[embodied]\nplanners = ["oracle"]\n'
            f'episodes = ["{DEMO / "robotics" / "episodes.json.gz"}"]\nsimulators = ["symbolic", "habitat"]\n'
            f'replan_cap = 3\n')
    plan.write_text(body + '[embodied.simulator_options]\npartnr_compat = true\n')
    with pytest.raises(UserError, match="embodied.simulator_options: --partnr-compat applies to the symbolic"):
        read_plan(plan)  # Habitat takes no options: refused before the symbolic run starts
    plan.write_text(body)
    runs = read_plan(plan).runs
    assert [(r.simulator, r.out.name) for r in runs] == [("symbolic", "oracle__episodes"),
                                                         ("habitat", "oracle__episodes__habitat")]
    seen = []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def run(self, planner, episodes, out, settings, execution):
            seen.append((self.name, planner, out.name, settings.replan_cap, dict(settings.options)))
            return out

    built = registry.build_engine
    monkeypatch.setattr(registry, "build_engine",
                        lambda spec, kind, options=None: Recorder(spec) if kind == "simulator" else built(spec, kind, options))
    for run in runs:
        sweep.execute(run, "local", None, None, progress=False)
    assert seen == [("symbolic", "oracle", "oracle__episodes", 3, {}),
                    ("habitat", "oracle", "oracle__episodes__habitat", 3, {})]


def test_a_simulator_checks_its_own_options(tmp_path):
    """The symbolic simulator refuses an option it does not declare; Habitat takes none."""
    from framebench.errors import UserError
    from framebench.pipeline import Execution
    from framebench.registry import build_engine
    from framebench.simulation import SimulationSettings

    episodes = DEMO / "robotics" / "episodes.json.gz"
    assert set(build_engine("symbolic", "simulator").options) == {"partnr_compat"}
    with pytest.raises(UserError, match="simulator symbolic: unknown option 'gravity'"):
        build_engine("symbolic", "simulator").run("oracle", episodes, tmp_path / "r",
                                                  SimulationSettings(options={"gravity": 1}), Execution(progress=False))
    with pytest.raises(UserError, match="--partnr-compat applies to the symbolic simulator"):
        build_engine("habitat", "simulator").run("oracle", episodes, tmp_path / "h",
                                                 SimulationSettings(options={"partnr_compat": True}),
                                                 Execution(progress=False))


def readme_plan(tmp_path: Path) -> Path:
    """The README's sweep plan, written in an empty folder (it names the demo data ``demo:NAME``)."""
    plan = tmp_path / "sweep.toml"
    plan.write_text(readme_files()["sweep.toml"], encoding="utf-8")
    return plan


def count_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def test_the_readme_plan_runs_locally_without_ray_and_ends_with_runs_summary_and_report(tmp_path, capsys,
                                                                                      monkeypatch):
    """The plan asks for no executor: it runs here even where ray cannot be imported; each run holds
    the records its data implies; the output ends with the runs table, the summary and the report."""
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    plan = readme_plan(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli(["sweep", plan.name, "--quiet"]) == 0
    out = capsys.readouterr().out
    sweep_dir = tmp_path / "runs" / "sweep"
    fq, omit = count_lines(DEMO / "framingqa" / "items.jsonl"), count_lines(DEMO / "omit" / "items.jsonl")
    with gzip.open(DEMO / "robotics" / "episodes.json.gz", "rt") as fh:
        episodes = len(json.load(fh)["episodes"])
    expected = {"text/baseline-random__framingqa": ("framingqa", "generate", "-", fq),
                "text/baseline-random__framingqa__constrained": ("framingqa", "constrained", "-", fq),
                "text/baseline-random__omit__M0": ("omit", "generate", "M0", omit),
                "text/baseline-random__omit__M0__constrained": ("omit", "constrained", "M0", omit),
                "text/baseline-random__omit__M1": ("omit", "generate", "M1", omit),
                "text/baseline-random__omit__M1__constrained": ("omit", "constrained", "M1", omit),
                "embodied/oracle__episodes": ("embodied", "-", "-", 7 * episodes)}
    for run, (suite, answer, condition, n) in expected.items():
        df = read_records(sweep_dir / run)
        assert len(df) == n and set(df.suite) == {suite}, run
        assert json.loads((sweep_dir / run / "run.json").read_text())["executor"]["name"] == "local"
        row = next(line for line in out.splitlines() if f" {run} " in line)
        assert [c.strip() for c in row.strip("│ ").split("│")][2:] == [suite, answer, condition, f"{n:,}"], row
    runs_table = out.index("framebench sweep: runs")
    assert runs_table < out.index("framebench sweep summary: FramingQA") < out.index("framebench sweep summary: OMIT")
    report = sweep_dir / "report" / "report.html"
    assert re.fullmatch(rf"Sweep finished: 7 run\(s\) in [0-9.]+ s\. Report: {re.escape(str(report))}",
                        out.rstrip().splitlines()[-1])
    assert runs_table < out.index(f"wrote {report}") < out.index("What the numbers say")
    assert report.stat().st_size > 0 and json.loads((sweep_dir / "report" / "report.json").read_text())["framingqa"]


def test_the_plan_reference_documents_every_field():
    """docs/sweeps.md has a row for every field the plan reader accepts, and the README names it."""
    doc = (REPO / "docs" / "sweeps.md").read_text()
    rows = {line.split("|")[1].strip().strip("`[]").removeprefix("embodied.") for line in doc.splitlines()
            if line.startswith("| `")}
    assert TOP_KEYS | TEXT_KEYS | EMBODIED_KEYS | RUN_TEXT_KEYS | RUN_EMBODIED_KEYS <= rows
    assert "docs/sweeps.md" in (REPO / "README.md").read_text()


@pytest.mark.parametrize("plan_lines, cli_args, expected", [
    ([], (None, None, None), ("local", None)),
    (['ray_address = "auto"'], (None, None, None), ("ray", "auto")),
    ([], (None, "HEAD:6379", None), ("ray", "HEAD:6379")),
    (['executor = "ray"'], (None, None, None), ("ray", None)),
    (['executor = "ray"'], ("local", None, None), ("local", None)),
])
def test_the_executor_is_local_unless_ray_is_asked_for(tmp_path, plan_lines, cli_args, expected):
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text("\n".join(['out = "s"', *plan_lines, "[embodied]", 'planners = ["oracle"]',
                                    f'episodes = ["{DEMO / "robotics" / "episodes.json.gz"}"]']) + "\n")
    plan = read_plan(plan_file)
    resolve_executor(plan, plan_file, *cli_args)
    assert (plan.executor, plan.ray_address) == expected


NAMED_PLAN = f"""out = "s"
[params]
model = "baseline:always-yes"
episodes = 1
unset = ""

[[run]]
name = "omit-generated"
model = "{{model}}"
dataset = "demo:omit"
conditions = ["M0", "M1"]

[[run]]
name = "omit-constrained"
title = "OMIT, {{model}}, constrained"
model = "{{model}}"
dataset = "{DEMO / 'omit'}"
conditions = ["M0", "M1"]
answer = "constrained"
reasoning_from = ["omit-generated"]

[[run]]
name = "oracle"
planner = "oracle"
episodes = "demo:robotics/episodes.json.gz"
limit = "{{episodes}}"
replan_cap = "{{unset}}"
"""


def test_named_runs_take_their_own_settings_and_the_plans_parameters(tmp_path, capsys):
    """[[run]] entries: one folder each in OUT/runs/NAME, both conditions in one run, the reasoning
    source an earlier run's folder, "{NAME}" filled from [params] and --set (an integer stays one),
    "" leaving the field at its default; each run's rule shows its title."""
    plan = tmp_path / "plan.toml"
    plan.write_text(NAMED_PLAN)
    runs = read_plan(plan, params={"episodes": 2}).runs
    assert [r.out for r in runs] == [tmp_path / "s" / "runs" / n for n in ("omit-generated", "omit-constrained", "oracle")]
    assert runs[1].reasoning_from == (runs[0].out,) and runs[1].condition == "M0,M1"
    assert runs[2].options == {"limit": 2, "simulator_options": {}}  # replan_cap: "" leaves it out
    assert cli(["sweep", str(plan), "--quiet", "--set", "episodes=2", "--set", "model=baseline:always-no"]) == 0
    out = capsys.readouterr().out
    n_omit = count_lines(DEMO / "omit" / "items.jsonl")
    for name, mode in (("omit-generated", "generate"), ("omit-constrained", "constrained")):
        df = read_records(tmp_path / "s" / "runs" / name)
        assert len(df) == 2 * n_omit and set(df.condition) == {"M0", "M1"} and set(df.answer_mode) == {mode}
        assert set(df.model) == {"baseline:always-no"}
    assert len(read_records(tmp_path / "s" / "runs" / "oracle")) == 2 * 7  # --set episodes=2: 2 episodes x 7
    assert "run 2/3: OMIT, baseline:always-no, constrained" in out
    assert "14 episode framings, 14 completed" in out


def test_set_names_a_declared_parameter(tmp_path, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(NAMED_PLAN)
    for setting, message in (("modle=x", "--set modle: the plan has no such parameter (its [params]: model, episodes, unset)"),
                             ("model", "--set model: expected NAME=VALUE")):
        assert cli(["sweep", str(plan), "--set", setting]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "s").exists()


def test_the_text_runs_of_one_model_share_one_loaded_model(tmp_path, monkeypatch):
    """Local executor: a model loads once for all its text runs and is let go after its last one;
    each text run gets that loaded model, an embodied run none."""
    import framebench.backends
    from framebench import sweep

    plan = tmp_path / "plan.toml"
    plan.write_text(f'out = "s"\n[text]\nmodels = ["baseline:always-yes", "baseline:always-no"]\n'
                    f'datasets = ["{DEMO / "omit"}"]\nanswers = ["generate", "constrained"]\n'
                    f'[embodied]\nplanners = ["oracle"]\nepisodes = ["{EPISODES}"]\nlimit = 1\n')
    loaded, given = [], []
    real_load, real_execute = framebench.backends.load_backend, sweep.execute

    def load(spec, **options):
        loaded.append(spec)
        return real_load(spec, **options)

    def execute(run, *args, **kwargs):
        given.append((run.spec, run.answer, args[5] if len(args) > 5 else kwargs.get("backend")))
        return real_execute(run, *args, **kwargs)

    monkeypatch.setattr(framebench.backends, "load_backend", load)
    monkeypatch.setattr(sweep, "execute", execute)
    parsed = read_plan(plan)
    resolve_executor(parsed, plan, None, None, None)
    shared = sweep.SharedModels(parsed.runs)
    assert [k and k[0] for k in shared.keys] == ["baseline:always-yes"] * 2 + ["baseline:always-no"] * 2 + [None]
    sweep.run_sweep(parsed, progress=False)
    assert loaded == ["baseline:always-yes", "baseline:always-no"]  # once each, never by a run itself
    (yes_gen, yes_con, no_gen, no_con, oracle) = given
    assert yes_gen[2] is yes_con[2] and no_gen[2] is no_con[2] and yes_gen[2] is not no_gen[2]
    assert yes_gen[2].spec == "baseline:always-yes" and oracle[2] is None
    for index in range(len(parsed.runs)):
        shared.done(index)
    assert shared.loaded == {}
