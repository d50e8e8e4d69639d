"""--executor ray on a two-worker local Ray instance (127.0.0.1): records equal a local run's, also
after SIGKILLing a worker mid-run (10 trials) and after killing the driver and re-running. The
multi-node cluster without shared storage is tests/core/test_ray_cluster.py."""

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

from framebench.api import run_text
from framebench.embodied.episodes import write_episodes
from framebench.embodied.generator import make_episode
from framebench.embodied.planners import load_planner
from framebench.embodied.runner import run as run_embodied
from framebench.records import read_records

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
DEMO_EPISODES = DEMO / "robotics" / "episodes.json.gz"
N_EPISODES = 12  # the generated episode set of the kill tests
PLUGINS = REPO / "tests" / "plugins"
FAULTS = REPO / "tests" / "plugins_faults"  # the ``crashing`` planner
CRASH_VAR = "FRAMEBENCH_TEST_CRASH_FILE"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One two-CPU local Ray instance (plus two 'habitat' slots) shared by every test here."""
    saved = {name: os.environ.get(name) for name in ("RAY_USAGE_STATS_ENABLED", "PYTHONPATH", CRASH_VAR)}
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # the workers can import the test plugins (as a plugin installed on every node would be)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGINS), str(FAULTS),
                                                             os.environ.get("PYTHONPATH")]))
    os.environ[CRASH_VAR] = str(tmp_path_factory.mktemp("crash") / "crash.json")
    ray.init(num_cpus=2, resources={"habitat": 2}, include_dashboard=False, _node_ip_address="127.0.0.1",
             logging_level="ERROR", configure_logging=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        for name, value in saved.items():  # later tests' subprocesses see no test plugin
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def frame(run_dir: Path) -> pd.DataFrame:
    return read_records(run_dir).sort_values("item_id").reset_index(drop=True)


def assert_same_records(local: Path, remote: Path) -> None:
    a, b = frame(local), frame(remote)
    assert not b.item_id.duplicated().any()
    assert a.equals(b)
    assert (local / "prompts.jsonl").read_bytes() == (remote / "prompts.jsonl").read_bytes()


def run_text_ray(model, data, out, **kwargs):
    return run_text(model, data, out, executor="ray", **kwargs)


def run_embodied_ray(planner, episodes, out, **kwargs) -> dict:
    """The Ray run's executor entry of run.json."""
    kwargs.setdefault("progress", False)
    run_embodied(planner, episodes, out, executor="ray", **kwargs)
    return json.loads((out / "run.json").read_text())["executor"]


def stored(run_dir: Path) -> int:
    """Results in the run's own store (the only store there is)."""
    path = run_dir / "store.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


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


@pytest.mark.cluster
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


@pytest.mark.cluster
def test_plugin_engine_scheduled_by_its_declaration_with_model_args(cluster, tmp_path, monkeypatch):
    """A plugin engine (device "remote") gets a quarter CPU per worker, with no edit to framebench,
    and its --model-arg values travel to the workers."""
    from framebench import registry

    monkeypatch.syspath_prepend(str(PLUGINS))
    registry.refresh()
    try:
        kwargs = dict(model_args={"shout": "true"}, limit=40, progress=False)
        run_text("keyword:court", DEMO / "framingqa", tmp_path / "local", **kwargs)
        run_text_ray("keyword:court", DEMO / "framingqa", tmp_path / "ray", **kwargs)
    finally:
        monkeypatch.undo()  # off sys.path first, so the reload forgets the plugin for later tests
        registry.refresh()
    assert "keyword" not in registry.engines()
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    assert set(frame(tmp_path / "ray")["output"]) <= {"YES", "NO"}  # shout=true reached the workers
    executor = json.loads((tmp_path / "ray" / "run.json").read_text())["executor"]
    assert executor["resources"] == {"num_cpus": 0.25} and executor["workers"] == 8  # 2 CPUs / 0.25


@pytest.mark.cluster
def test_demo_omit_equal_local(cluster, tmp_path):
    run_text("baseline:always-no", DEMO / "omit", tmp_path / "local", conditions="M0,M2", progress=False)
    run_text_ray("baseline:always-no", DEMO / "omit", tmp_path / "ray", conditions="M0,M2", progress=False)
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    assert len(frame(tmp_path / "ray")) == 2 * 32


@pytest.mark.cluster
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


@pytest.mark.cluster
def test_demo_episodes_oracle_equal_local(cluster, tmp_path):
    run_embodied(load_planner("oracle"), DEMO_EPISODES, tmp_path / "local", progress=False)
    executor = run_embodied_ray("oracle", DEMO_EPISODES, tmp_path / "ray")
    assert_same_records(tmp_path / "local", tmp_path / "ray")
    assert executor["units"] == 4 and executor["workers"] == 2  # 4 episodes, 2 workers: too few to pack
    logs = sorted(p.name for p in (tmp_path / "ray" / "episodes").iterdir())
    assert logs == sorted(p.name for p in (tmp_path / "local" / "episodes").iterdir()) and len(logs) == 28
    for name in logs:  # written by the driver from what the workers returned
        assert (tmp_path / "ray" / "episodes" / name).read_bytes() == (tmp_path / "local" / "episodes" / name).read_bytes()


def _kill_when(run_dir: Path, target: int, pick, deadline: float) -> list:
    """Poll the run's store until ``target`` results are stored, then SIGKILL ``pick()``."""
    killed: list = []

    def watch() -> None:
        while time.monotonic() < deadline:
            if stored(run_dir) >= target:
                pid = pick()
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    killed.append(thread)
    return killed


def assert_each_stored_once(run_dir: Path, total: int) -> None:
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results").fetchone() == (total, total)


@pytest.fixture(scope="module")
def crashing_planner():
    """The ``crashing`` planner registered in this process too (the driver resolves its name)."""
    from framebench import registry

    sys.path.insert(0, str(FAULTS))
    registry.refresh()
    try:
        yield
    finally:
        sys.path.remove(str(FAULTS))
        registry.refresh()


@pytest.fixture(scope="module")
def crashing12_local(cluster, crashing_planner, episodes12, tmp_path_factory) -> Path:
    Path(os.environ[CRASH_VAR]).unlink(missing_ok=True)  # disarmed: nothing dies
    out = tmp_path_factory.mktemp("crashing12-local")
    run_embodied(load_planner("crashing"), episodes12, out, progress=False)
    return out


def crash_at(episode_id: str, marker: Path) -> None:
    """The first Ray worker to open ``episode_id`` SIGKILLs itself (never this process)."""
    plan = {"episode_id": episode_id, "marker": str(marker), "spare_pid": os.getpid()}
    Path(os.environ[CRASH_VAR]).write_text(json.dumps(plan))


def episode_ids(path: Path) -> list[str]:
    from framebench.embodied.episodes import read_episodes

    return [e["episode_id"] for e in read_episodes(path)]


@pytest.mark.cluster
def test_sigkill_a_worker_mid_run_ten_trials(cluster, tmp_path, episodes12, crashing12_local):
    """A worker dies opening episode k (k drawn per trial); its unit goes to a fresh worker and
    the run's records equal a run where nothing died."""
    rng = random.Random(14)
    total, ids = N_EPISODES * 7, episode_ids(episodes12)
    for trial in range(10):
        out = tmp_path / f"trial{trial}"
        crash_at(ids[rng.randrange(1, N_EPISODES)], tmp_path / f"died{trial}")
        executor = run_embodied_ray("crashing", episodes12, out)
        assert (tmp_path / f"died{trial}").exists(), f"trial {trial}: no worker reached the episode"
        assert executor["worker_deaths"] == 1 and executor["retried_units"] == 1, (trial, executor)
        assert_same_records(crashing12_local, out)
        assert_each_stored_once(out, total)  # what the dead worker returned is never redone


@pytest.mark.cluster
def test_multi_episode_units_sigkill_a_worker_mid_unit(cluster, tmp_path, episodes12, crashing12_local):
    """Units of 3 episodes: a worker dying at a unit's second or third episode loses only the
    episodes it had not returned; the unit's rest goes to a fresh worker, each episode stored once."""
    total, ids = N_EPISODES * 7, episode_ids(episodes12)
    for trial, index in enumerate((1, 5, 10)):  # units hold episodes 0-2, 3-5, 6-8, 9-11
        out = tmp_path / f"trial{trial}"
        crash_at(ids[index], tmp_path / f"died{trial}")
        executor = run_embodied_ray("crashing", episodes12, out, episodes_per_unit=3)
        assert (tmp_path / f"died{trial}").exists()
        assert executor["units"] == 4 and executor["worker_deaths"] == 1, (trial, executor)
        assert executor["retried_units"] == 1, (trial, executor)
        assert_same_records(crashing12_local, out)
        assert_each_stored_once(out, total)
        assert len(list((out / "episodes").iterdir())) == total


@pytest.mark.cluster
@pytest.mark.subprocess
def test_kill_the_driver_then_rerun_resumes(cluster, tmp_path, episodes12, oracle12_local):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "framebench", "embodied", "--planner", "oracle", "--episodes",
               str(episodes12), "--out", str(out), "--executor", "ray", "--ray-address", cluster]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        watcher = _kill_when(out, 4 * 7, lambda: driver.pid, time.monotonic() + 90)
        watcher[0].join(timeout=90)
    finally:
        driver.kill()
        driver.wait(timeout=30)
    assert len(watcher) == 2 and not (out / "records.parquet").exists()
    before = stored(out)
    assert 28 <= before < N_EPISODES * 7
    with sqlite3.connect(out / "store.sqlite") as db:
        kept = set(db.execute("SELECT key, created FROM results").fetchall())
    run_embodied_ray("oracle", episodes12, out, ray_address=cluster)
    assert_same_records(oracle12_local, out)
    with sqlite3.connect(out / "store.sqlite") as db:
        after = set(db.execute("SELECT key, created FROM results").fetchall())
    assert kept <= after and len(after) == N_EPISODES * 7  # nothing stored was regenerated
    info = json.loads((out / "run.json").read_text())
    assert info["n_framings"] == N_EPISODES * 7


@pytest.mark.cluster
@pytest.mark.subprocess
def test_partnr_batches_as_units_equal_local(cluster, tmp_path, monkeypatch):
    """The in-container runner's batches run as Ray units against a stand-in planner_demo."""
    from framebench.partnr_adapters import habitat_simulator
    from framebench.partnr_adapters.habitat_simulator import run_habitat

    fake = fake_habitat_llm(tmp_path)
    python = tmp_path / "habitat-python"  # the container's interpreter, with habitat_llm on its path
    python.write_text(f"#!/bin/sh\nPYTHONPATH={fake.parent.parent}:$PYTHONPATH exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    monkeypatch.setattr(habitat_simulator.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("FRAMEBENCH_HABITAT_PYTHON", str(python))
    opts = dict(base_url="http://127.0.0.1:1/v1", batch_size=3)
    local = run_habitat("openai:m", DEMO_EPISODES, tmp_path / "local", **opts)
    remote = run_habitat("openai:m", DEMO_EPISODES, tmp_path / "ray", executor="ray", progress=False, **opts)
    assert local.rows == remote.rows == 28 and remote.finished == 28 and not remote.problems
    a = frame(tmp_path / "local").drop(columns="run_id")
    b = frame(tmp_path / "ray").drop(columns="run_id")  # the driver's run id carries its start time
    assert a.equals(b) and not b.item_id.duplicated().any()
    manifest = json.loads((tmp_path / "ray" / "partnr-results" / "framebench-run.json").read_text())
    assert len(manifest["batches"]) == 10  # 28 variants in batches of 3, each a unit


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
    assert err == ["error: --executor ray needs the ray package: pip install 'framebench-eval[ray]'"]
    with pytest.raises(SystemExit) as exc:
        main(["text", "--data", str(DEMO / "omit"), "--out", str(tmp_path / "o"), "--executor", "dask"])
    assert exc.value.code == 2


@pytest.mark.cluster
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


@pytest.mark.cluster
def test_local_instance_stays_on_loopback(cluster):
    """Every node of the local instance, and the address the drivers dial, is 127.0.0.1."""
    assert cluster.split(":")[0] == "127.0.0.1"
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}


def test_token_mode_only_when_a_token_is_here(monkeypatch, tmp_path):
    """--ray-address sends Ray's token when one is available; an explicit RAY_AUTH_MODE wins;
    the messages name what to do and never the token."""
    from framebench.executors import cluster as fc

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    assert not fc.token_available()
    fc.use_token_if_available()
    assert "RAY_AUTH_MODE" not in os.environ
    refused = ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379")
    log = "gcs_client.cc:210: Unauthenticated: RPC error: InvalidAuthToken: Authentication token is missing"
    assert "no token is set here (set RAY_AUTH_TOKEN" in fc._first_line(refused, "10.0.0.1:6379", log)
    assert "is a Ray head running there" in fc._first_line(refused, "10.0.0.1:6379", "")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "s3cr3t-token-value")
    assert fc.token_available()
    line = fc._first_line(refused, "10.0.0.1:6379", log)
    assert "refused this driver's token" in line and "s3cr3t" not in line
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    fc.use_token_if_available()
    assert os.environ["RAY_AUTH_MODE"] == "disabled"  # the user's choice stands
    monkeypatch.delenv("RAY_AUTH_MODE")
    monkeypatch.delenv("RAY_AUTH_TOKEN")
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("x" * 32)
    fc.use_token_if_available()  # Ray's token file counts
    assert os.environ["RAY_AUTH_MODE"] == "token"
    monkeypatch.delenv("RAY_AUTH_MODE")


def test_resources_follow_the_engine_declaration():
    """device -> resource request, with no engine named anywhere in the executors."""
    from framebench.executors.resources import count_workers, engine_device, worker_options

    gpus = {"CPU": 16, "GPU": 4}
    assert engine_device("hf:/m") == "gpu" and engine_device("openai:x") == "remote"
    assert engine_device("oracle", ("planner", "model")) == "cpu"
    assert worker_options("gpu", gpus)["num_gpus"] == 1.0
    assert "num_gpus" not in worker_options("gpu", {"CPU": 2})  # no GPUs: one CPU each
    assert worker_options("remote", gpus)["num_cpus"] == 0.25
    assert count_workers(worker_options("gpu", gpus), gpus, None) == 4
    assert count_workers(worker_options("remote", {"CPU": 2}), {"CPU": 2}, None) == 8
    habitat = worker_options("cpu", {"CPU": 8, "habitat": 2}, resources={"habitat": 1})
    assert count_workers(habitat, {"CPU": 8, "habitat": 2}, None) == 2
    source = "".join(p.read_text() for p in (REPO / "framebench" / "executors").glob("*.py"))
    assert not any(f'"{name}"' in source for name in ("hf", "vllm", "smollm2", "openai", "baseline"))
