"""--executor ray on a two-worker local Ray instance (127.0.0.1): merged records equal a local run's,
also after SIGKILLing a worker mid-run (10 trials) and after killing the driver and re-running."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from partnr_helpers import fake_habitat_llm

from embodied.episodes import write_episodes
from embodied.generator import make_episode
from embodied.planners import load_planner
from embodied.ray_executor import run_embodied_ray
from embodied.runner import run as run_embodied
from framebench.executors.shards import SHARDS_DIR
from framebench.records import read_records
from text_eval.ray_executor import run_text_ray
from text_eval.runner import run_text

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "datasets" / "demo"
DEMO_EPISODES = DEMO / "robotics" / "episodes.json.gz"
N_EPISODES = 12  # the generated episode set of the kill tests


@pytest.fixture(scope="module")
def cluster():
    """One two-CPU local Ray instance (plus two 'habitat' slots) shared by every test here."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, resources={"habitat": 2}, include_dashboard=False, _node_ip_address="127.0.0.1",
             logging_level="ERROR", configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def frame(run_dir: Path) -> pd.DataFrame:
    return read_records(run_dir).sort_values("item_id").reset_index(drop=True)


def assert_same_records(local: Path, remote: Path) -> None:
    a, b = frame(local), frame(remote)
    assert not b.item_id.duplicated().any()
    assert a.equals(b)
    assert (local / "prompts.jsonl").read_text() == (remote / "prompts.jsonl").read_text()
    assert not (remote / SHARDS_DIR).exists()  # merged into the run's store, then removed


@pytest.fixture(scope="module")
def episodes12(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("eps") / "episodes.json.gz"
    write_episodes([make_episode(0, i) for i in range(N_EPISODES)], path)
    return path


@pytest.fixture(scope="module")
def oracle12_local(episodes12, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("oracle12-local")
    run_embodied(load_planner("oracle"), episodes12, out, progress=False)
    return out


def test_demo_framingqa_baseline_and_tiny_model_equal_local(cluster, tmp_path, tiny_llama_dir):
    for model, limit in (("baseline:random", None), (f"hf:{tiny_llama_dir}", 48)):
        kwargs = dict(limit=limit, batch_size=8, progress=False)
        run_text(model, DEMO / "framingqa", tmp_path / "local", **kwargs)
        summary = run_text_ray(model, DEMO / "framingqa", tmp_path / "ray", **kwargs)
        assert_same_records(tmp_path / "local", tmp_path / "ray")
        assert summary.n_generated == summary.n_records  # all produced by the workers
        info = json.loads((tmp_path / "ray" / "run.json").read_text())
        assert info["executor"]["name"] == "ray" and info["executor"]["workers"] == 2
        for name in ("local", "ray"):
            for child in sorted((tmp_path / name).rglob("*"), reverse=True):
                child.rmdir() if child.is_dir() else child.unlink()


def test_demo_omit_equal_local(cluster, tmp_path):
    run_text("baseline:always-no", DEMO / "omit", tmp_path / "local", conditions="M0,M2", progress=False)
    run_text_ray("baseline:always-no", DEMO / "omit", tmp_path / "ray", conditions="M0,M2", progress=False)
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    assert len(frame(tmp_path / "ray")) == 2 * 32


def test_constrained_answers_with_reasoning_equal_local(cluster, tmp_path, tiny_llama_dir):
    """--answer constrained on the workers (OMIT M1 reasons first, then scores after ANSWER:)."""
    from text_helpers import make_varied_model

    varied = make_varied_model(tiny_llama_dir, tmp_path / "varied")
    kwargs = dict(conditions="M0,M1", limit=6, answer="constrained", progress=False)
    run_text(f"hf:{varied}", DEMO / "omit", tmp_path / "local", **kwargs)
    run_text_ray(f"hf:{varied}", DEMO / "omit", tmp_path / "ray", **kwargs)
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    ray_frame = frame(tmp_path / "ray")
    assert set(ray_frame["answer_mode"]) == {"constrained"} and (ray_frame["parse"] == "ok").all()
    assert ray_frame[ray_frame["condition"] == "M1"]["output"].str.len().gt(0).all()


def test_demo_episodes_oracle_equal_local(cluster, tmp_path):
    run_embodied(load_planner("oracle"), DEMO_EPISODES, tmp_path / "local", progress=False)
    executor = run_embodied_ray("oracle", DEMO_EPISODES, tmp_path / "ray", replan_cap=25, progress=False)
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    assert executor["units"] == 4 and executor["items"] == 28 and executor["generated"] == 28
    assert executor["episodes_per_unit"] == 1  # 4 episodes, 2 workers: too few to pack
    logs = sorted(p.name for p in (tmp_path / "ray" / "episodes").iterdir())
    assert logs == sorted(p.name for p in (tmp_path / "local" / "episodes").iterdir()) and len(logs) == 28


def _stored(run_dir: Path) -> dict[int, int]:
    """pid -> results stored in that worker's shard (shards are named <pid>-<random>.sqlite)."""
    counts: dict[int, int] = {}
    for path in (run_dir / SHARDS_DIR).glob("*.sqlite"):
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
                n = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        except sqlite3.Error:
            continue
        pid = int(path.name.split("-")[0])
        counts[pid] = counts.get(pid, 0) + n
    return counts


def _kill_when(run_dir: Path, target: int, pick, deadline: float) -> list[int]:
    """Poll the shards until ``target`` results are stored, then SIGKILL ``pick(counts)``."""
    killed: list[int] = []

    def watch() -> None:
        while time.monotonic() < deadline:
            counts = _stored(run_dir) if (run_dir / SHARDS_DIR).is_dir() else {}
            if sum(counts.values()) >= target:
                pid = pick(counts)
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    killed.append(thread)  # type: ignore[arg-type]
    return killed


def test_sigkill_a_worker_mid_run_ten_trials(cluster, tmp_path, episodes12, oracle12_local):
    rng = random.Random(14)
    total = N_EPISODES * 7
    for trial in range(10):
        out = tmp_path / f"trial{trial}"
        target = rng.randrange(1, 6) * 7  # after 1..5 episodes stored: the queue still holds work
        watcher = _kill_when(out, target, lambda counts: rng.choice(sorted(counts)), time.monotonic() + 60)
        executor = run_embodied_ray("oracle", episodes12, out, replan_cap=25, progress=False)
        watcher[0].join(timeout=5)
        assert len(watcher) == 2, f"trial {trial}: no worker was killed"
        assert executor["worker_deaths"] == 1 and executor["retried_units"] == 1, (trial, executor)
        # finished units are never redone; the unit in flight (one episode here, committed as a
        # whole) is redone unless the worker died after committing it: total - 7 .. total variants
        assert total - 7 <= executor["generated"] <= total, (trial, executor)
        assert_same_records(oracle12_local, out)


def test_multi_episode_units_sigkill_a_worker_mid_unit(cluster, tmp_path, episodes12, oracle12_local):
    """Units of 3 episodes ([0:3], [3:6], [6:9], [9:12]): a worker killed mid-unit loses only the
    episodes of its unit it had not committed; the unit is retried whole, each episode stored once."""
    rng = random.Random(3)
    total = N_EPISODES * 7
    for trial in range(3):
        out = tmp_path / f"trial{trial}"
        target = rng.choice((1, 2, 4)) * 7  # mid-unit for the worker holding it
        watcher = _kill_when(out, target, lambda counts: max(counts, key=counts.get), time.monotonic() + 60)
        executor = run_embodied_ray("oracle", episodes12, out, replan_cap=25, progress=False, episodes_per_unit=3)
        watcher[0].join(timeout=5)
        assert len(watcher) == 2, f"trial {trial}: no worker was killed"
        assert executor["units"] == 4 and executor["episodes_per_unit"] == 3 and executor["items"] == total
        assert executor["worker_deaths"] == 1 and executor["retried_units"] == 1, (trial, executor)
        # episodes the killed worker committed are served on the retry, never run twice; at most
        # its unit (3 episodes) is lost from the count
        assert total - 3 * 7 <= executor["generated"] <= total, (trial, executor)
        assert_same_records(oracle12_local, out)
        with sqlite3.connect(out / "store.sqlite") as db:
            assert db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results").fetchone() == (total, total)
        assert len(list((out / "episodes").iterdir())) == total


def test_kill_the_driver_then_rerun_resumes(cluster, tmp_path, episodes12, oracle12_local):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "framebench", "embodied", "--planner", "oracle", "--episodes",
               str(episodes12), "--out", str(out), "--executor", "ray", "--ray-address", cluster]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        watcher = _kill_when(out, 4 * 7, lambda counts: driver.pid, time.monotonic() + 90)
        watcher[0].join(timeout=90)
    finally:
        driver.kill()
        driver.wait(timeout=30)
    assert len(watcher) == 2 and not (out / "records.parquet").exists()
    stored = sum(_stored(out).values())
    assert 28 <= stored < N_EPISODES * 7
    executor = run_embodied_ray("oracle", episodes12, out, replan_cap=25, progress=False, ray_address=cluster)
    assert executor["generated"] <= N_EPISODES * 7 - stored  # served what the killed run stored
    assert_same_records(oracle12_local, out)


def test_partnr_batches_as_units_equal_local(cluster, tmp_path, monkeypatch):
    """The container driver's batches run as Ray units against a stand-in planner_demo."""
    from partnr_adapters import habitat_simulator
    from partnr_adapters.habitat_simulator import run_habitat
    from partnr_adapters.ray_executor import run_habitat_ray

    fake = fake_habitat_llm(tmp_path)
    python = tmp_path / "habitat-python"  # the container's interpreter, with habitat_llm on its path
    python.write_text(f"#!/bin/sh\nPYTHONPATH={fake.parent.parent}:$PYTHONPATH exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", str(python))
    opts = dict(base_url="http://127.0.0.1:1/v1", batch_size=3)
    local = run_habitat("openai:m", DEMO_EPISODES, tmp_path / "local", **opts)
    remote = run_habitat_ray("openai:m", DEMO_EPISODES, tmp_path / "ray", progress=False, **opts)
    assert local.rows == remote.rows == 28 and remote.finished == 28 and not remote.problems
    a = frame(tmp_path / "local").drop(columns="run_id")
    b = frame(tmp_path / "ray").drop(columns="run_id")  # the driver's run id carries its start time
    assert a.equals(b) and not b.item_id.duplicated().any()
    units = sorted(p.name for p in (tmp_path / "ray" / "partnr-shards").iterdir())
    assert units == [f"unit-{i}" for i in range(10)]  # 28 variants in batches of 3


def test_executor_ray_without_ray_is_one_line(monkeypatch, tmp_path, capsys):
    import builtins

    from framebench.cli import main

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("no ray")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(SystemExit) as exc:
        main(["text", "--data", str(DEMO / "omit"), "--out", str(tmp_path / "o"), "--model", "baseline:random",
              "--executor", "ray"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --executor ray needs the ray package: pip install 'framebench[ray]'"]
    with pytest.raises(SystemExit) as exc:
        main(["text", "--data", str(DEMO / "omit"), "--out", str(tmp_path / "o"), "--executor", "dask"])
    assert exc.value.code == 2


def test_sweep_on_ray_runs_every_combination_and_scores(cluster, tmp_path):
    from framebench.cli import main

    plan = tmp_path / "plan.toml"
    plan.write_text(
        'out = "sweep"\nexecutor = "ray"\n'
        f'[text]\nmodels = ["baseline:random", "baseline:always-yes"]\n'
        f'datasets = ["{DEMO / "omit"}"]\nconditions = ["M0", "M1"]\nlimit = 20\n'
        f'[embodied]\nplanners = ["oracle"]\nepisodes = ["{DEMO_EPISODES}"]\n'
    )
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(plan), "--quiet"])
    assert exc.value.code in (0, None)
    runs = sorted(p.name for p in (tmp_path / "sweep" / "text").iterdir())
    assert runs == ["baseline-always-yes__omit__M0", "baseline-always-yes__omit__M1",
                    "baseline-random__omit__M0", "baseline-random__omit__M1"]
    run_text("baseline:random", DEMO / "omit", tmp_path / "local", conditions="M1", limit=20, progress=False)
    assert_same_records(tmp_path / "local", tmp_path / "sweep" / "text" / "baseline-random__omit__M1")
    report = json.loads((tmp_path / "sweep" / "report" / "report.json").read_text())
    assert report  # one report over all 5 runs
    total = sum(len(read_records(p)) for p in (tmp_path / "sweep").glob("*/*") if p.is_dir())
    assert total == 2 * (20 + 20) + 28


def test_local_instance_stays_on_loopback(cluster):
    """Every node of the local instance, and the address the drivers dial, is 127.0.0.1."""
    assert cluster.split(":")[0] == "127.0.0.1"
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
