"""run_habitat: where the in-container runner runs, the one-line error without Docker/habitat, docker command."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

import pytest
from partnr_helpers import fake_habitat_llm

from framebench.errors import UserError
from framebench.partnr_adapters import habitat_simulator
from framebench.partnr_adapters.habitat_simulator import (
    docker_command,
    framed_episode_file,
    run_habitat,
    runner_args,
)
from framebench.records import read_records

PURPOSES = {"action": "putting the cup on the table",
            "correct": {"purpose": "tidying", "goal": "tidy the kitchen", "stance": "appropriate"},
            "incorrect": {"purpose": "cooking", "goal": "cook dinner", "stance": "inappropriate"}}


def episodes_file(tmp_path, with_purposes=True):
    info = {"purposes": PURPOSES, "constraint_type": "none"} if with_purposes else {}
    data = {"episodes": [{"episode_id": "3", "instruction": "Put the cup on the table.", "info": info}]}
    path = tmp_path / "eps.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def no_habitat_no_docker(monkeypatch):
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(habitat_simulator.shutil, "which", lambda name: None)
    monkeypatch.delenv("FRAMEBENCH_HABITAT_PYTHON", raising=False)


def test_without_docker_or_habitat_one_clear_line(monkeypatch, tmp_path):
    no_habitat_no_docker(monkeypatch)
    with pytest.raises(UserError) as exc:
        run_habitat("openai:m", episodes_file(tmp_path), tmp_path / "run")
    message = str(exc.value)
    assert "\n" not in message
    assert "Docker" in message and "habitat_llm" in message and "docker/README.md" in message
    assert not (tmp_path / "run").exists()  # nothing written


def test_cli_embodied_simulator_habitat_without_docker_exits_2(monkeypatch, tmp_path, capsys):
    no_habitat_no_docker(monkeypatch)
    from framebench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["embodied", "--simulator", "habitat", "--planner", "openai:m", "--episodes",
              str(episodes_file(tmp_path)), "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "docker/README.md" in err[0]


def test_docker_without_data_dir_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(habitat_simulator.shutil, "which", lambda name: "/usr/bin/docker")
    monkeypatch.delenv("FRAMEBENCH_HABITAT_PYTHON", raising=False)
    monkeypatch.delenv("FRAMEBENCH_PARTNR_DATA", raising=False)
    with pytest.raises(UserError, match="PARTNR data folder"):
        run_habitat("openai:m", episodes_file(tmp_path), tmp_path / "run", base_url="http://127.0.0.1:1/v1")


def test_non_endpoint_planner_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", sys.executable)
    with pytest.raises(UserError, match="OpenAI-compatible endpoint"):
        run_habitat("hf:/models/x", episodes_file(tmp_path), tmp_path / "run")


def test_framing_from_info_purposes_or_refusal(tmp_path):
    framed = framed_episode_file(episodes_file(tmp_path), tmp_path)
    data = json.loads(gzip.decompress(framed.read_bytes()))
    assert len(data["episodes"]) == 7
    assert framed_episode_file(framed, tmp_path / "x") == framed  # already framed: used as is
    with pytest.raises(UserError, match="episode 3: no info.purposes"):
        framed_episode_file(episodes_file(tmp_path, with_purposes=False), tmp_path)


def test_docker_command_mounts_gpu_graphics_and_hides_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    args = runner_args("openai:m", "/work/run/f.json.gz", "/work/run/partnr-results",
                       {"base_url": "http://127.0.0.1:8000/v1", "batch_size": 5, "partial_obs": False})
    cmd = docker_command("img:1", tmp_path, tmp_path, args)
    assert cmd[:3] == ["docker", "run", "--rm"] and "--gpus" in cmd
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics" in cmd
    assert f"{tmp_path.resolve()}:/opt/partnr-planner/data:ro" in cmd
    assert cmd[cmd.index("img:1") + 1:cmd.index("img:1") + 4] == ["python", "-m", "partnr_adapters.in_container"]
    assert ["--batch-size", "5"] == args[args.index("--batch-size"):args.index("--batch-size") + 2]
    assert ["--partial-obs", "false"] == args[args.index("--partial-obs"):args.index("--partial-obs") + 2]
    assert not any("sk-secret" in part for part in cmd)




@pytest.mark.subprocess
def test_run_habitat_with_a_habitat_interpreter_end_to_end(monkeypatch, tmp_path, capfd):
    """FRAMEBENCH_HABITAT_PYTHON path: the in-container runner runs against a stand-in planner_demo, then ingest."""
    fake = fake_habitat_llm(tmp_path)
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(fake.parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    report = run_habitat("openai:m", episodes_file(tmp_path), tmp_path / "run",
                         base_url="http://127.0.0.1:1/v1", batch_size=4)
    assert report.rows == 7 and report.finished == 7 and not report.problems
    df = read_records(tmp_path / "run")
    assert df.set_index("item_id").loc["3__neutral"].success
    assert df.success.sum() == 1 and set(df.model) == {"openai:m"}
    assert Path(tmp_path / "run" / "partnr-results" / "framebench-run.json").is_file()
    assert "7 episode framings: 7 finished, 0 crashed or missing" in capfd.readouterr().out


@pytest.mark.subprocess
def test_run_habitat_stores_each_variant_once_and_resumes_from_the_store(monkeypatch, tmp_path, capfd):
    """Driver batches go through the run's result store: a re-run runs no batch, and a folder
    whose stats files predate the store (written before batches were stored) is adopted."""
    from framebench.store import ResultStore

    fake = fake_habitat_llm(tmp_path)
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(fake.parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = tmp_path / "run"
    first = run_habitat("openai:m", episodes_file(tmp_path), out, base_url="http://127.0.0.1:1/v1", batch_size=3)
    with ResultStore(out) as store:
        stored = list(store.items())
    assert len(stored) == 7 and len({k for k, _, _ in stored}) == 7  # each variant once
    assert sorted(v["index"] for _, _, v in stored) == list(range(7))
    assert all(v["finished"] for _, _, v in stored)  # as the stats files say: 7 finished, 0 crashed
    ran = []
    monkeypatch.setattr(habitat_simulator.subprocess, "call", lambda *a, **k: ran.append(a) or 1)
    again = run_habitat("openai:m", episodes_file(tmp_path), out, base_url="http://127.0.0.1:1/v1", batch_size=3)
    assert ran == [] and again.rows == first.rows == 7
    (out / "store.sqlite").unlink()
    for extra in out.glob("store.sqlite-*"):
        extra.unlink()
    adopted = run_habitat("openai:m", episodes_file(tmp_path), out, base_url="http://127.0.0.1:1/v1", batch_size=3)
    assert ran == [] and adopted.rows == 7
    with ResultStore(out) as store:
        assert len(store) == 7
    stats = next((out / "partnr-results").rglob("stats"))
    next(stats.glob("*.json")).unlink()  # a variant without its stats file runs again
    with pytest.raises(UserError, match="exited with status 1"):
        run_habitat("openai:m", episodes_file(tmp_path), out, base_url="http://127.0.0.1:1/v1", batch_size=3)
    assert len(ran) == 1


def test_a_folder_holding_another_habitat_run_is_refused_before_anything_runs(monkeypatch, tmp_path):
    """The reuse check every front end has: a run folder whose run.json names another framed file
    is refused (before any launcher is looked for); --force replaces it, as for the other simulators."""
    from framebench.pipeline import Execution
    from framebench.registry import build_engine
    from framebench.simulation import SimulationSettings

    no_habitat_no_docker(monkeypatch)
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"dataset_hash": "another file's hash"}))
    engine = build_engine("habitat", "simulator")
    with pytest.raises(UserError, match="holds another run .*--force"):
        engine.run("openai:m", episodes_file(tmp_path), out, SimulationSettings(), Execution())
    with pytest.raises(UserError, match="Docker"):  # forced: on to the launcher, which is missing here
        engine.run("openai:m", episodes_file(tmp_path), out, SimulationSettings(), Execution(force=True))
    assert not (out / "run.json").exists()


@pytest.mark.subprocess
def test_limit_counts_episodes_through_the_cli(monkeypatch, tmp_path, capfd):
    """``framebench embodied --simulator habitat --limit 1`` runs the first episode in all seven
    framings (7 records), as the symbolic simulator does, not the first framing alone."""
    from framebench.cli import main

    fake = fake_habitat_llm(tmp_path)
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(fake.parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    info = {"purposes": PURPOSES, "constraint_type": "none"}
    data = {"episodes": [{"episode_id": e, "instruction": "Put the cup on the table.", "info": info}
                         for e in ("3", "4")]}
    episodes = tmp_path / "two.json.gz"
    episodes.write_bytes(gzip.compress(json.dumps(data).encode()))
    with pytest.raises(SystemExit) as exc:
        main(["embodied", "--simulator", "habitat", "--planner", "openai:m", "-M", "base_url=http://127.0.0.1:1/v1",
              "--episodes", str(episodes), "--limit", "1", "--out", str(tmp_path / "run")])
    assert exc.value.code in (0, None), capfd.readouterr().err
    df = read_records(tmp_path / "run")
    assert len(df) == 7 and {i.split("__")[0] for i in df.item_id} == {"3"}
    assert df.item_id.str.endswith("__neutral").sum() == 1
