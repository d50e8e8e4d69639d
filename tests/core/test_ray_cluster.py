"""--executor ray on a real multi-node cluster with no shared storage, on loopback.

Inside a network namespace that has only ``lo`` (``unshare --net --mount``; no packet can leave), a
token-authenticated head (no CPUs, so it runs no work) and two worker nodes (one CPU each) are
started with ``ray start``; the second worker node runs in its own mount namespace with a tmpfs
over the folder that holds the run folders and the data, so it can see neither. The driver is the
``framebench`` command, run inside the network namespace. Records equal a local run's; a SIGKILLed
worker, a killed driver and a stopped raylet cost nothing already returned. One cluster serves the
module (a few minutes on 2 cores). Skipped where ``unshare`` is not permitted (not root, or a
container without the capability).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from framebench.records import read_records

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
RAY_CLI = [sys.executable, "-m", "ray.scripts.scripts"]


def _unshare_works() -> str:
    if not shutil.which("unshare") or not shutil.which("nsenter") or not shutil.which("ip"):
        return "needs unshare, nsenter and ip (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "--net", "--mount", "sh", "-c", "ip link set lo up && mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"unshare --net --mount is not permitted here: {probe.stderr.strip()[:200]}"
    return ""


SKIP = _unshare_works()
pytestmark = [pytest.mark.skipif(bool(SKIP), reason=SKIP or "unshare permitted"), pytest.mark.cluster,
              pytest.mark.subprocess]


def _free_port() -> int:
    with socket.socket() as s:  # any port: the namespace has its own, nothing else listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _namespace_pids(target: str, kind: str = "net") -> list[int]:
    """Processes whose ``kind`` namespace is ``target`` (as ``readlink /proc/PID/ns/KIND`` names it)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / kind) == target:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Cluster:
    """A head and two worker nodes inside one network namespace (``holder`` keeps it alive)."""

    def __init__(self, base: Path):
        self.base, self.hidden = base, base / "hidden"  # hidden: runs and data, unseen by node 2
        self.hidden.mkdir()
        self.home = base / "home"  # no ~/.ray/auth_token here: the token comes from the environment
        self.home.mkdir()
        self.token = secrets.token_hex(16)
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp = Path(tempfile.mkdtemp(prefix="fbray", dir="/tmp"))  # short: Ray's socket paths
        self.holder = subprocess.Popen(["unshare", "--net", "--mount", "--fork", "sh", "-c",
                                        "ip link set lo up && exec sleep 100000"])
        self.nodes: list[subprocess.Popen] = []
        for _ in range(100):  # the holder has entered its namespaces
            self.netns = os.readlink(f"/proc/{self.holder.pid}/ns/net")
            self.mntns = os.readlink(f"/proc/{self.holder.pid}/ns/mnt")
            if self.netns != os.readlink("/proc/self/ns/net"):
                break
            time.sleep(0.05)

    def env(self, token: bool = True, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(HOME=str(self.home), RAY_USAGE_STATS_ENABLED="0", **extra)
        if token:
            env["RAY_AUTH_TOKEN"] = self.token
        return env

    def enter(self) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-n", "-m", "--wd=" + str(REPO)]

    def start(self) -> None:
        time.sleep(0.3)  # the holder has brought lo up
        flags = ["--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        head = [*RAY_CLI, "start", "--head", "--port", str(self.port), "--num-cpus", "0",
                "--include-dashboard", "false", "--temp-dir", str(self.temp), *flags]
        subprocess.run([*self.enter(), *head], env=self.env(RAY_AUTH_MODE="token"), check=True,
                       capture_output=True, timeout=120)
        join = [*RAY_CLI, "start", "--address", self.address, "--num-cpus", "1", "--block", *flags]
        hide = f"mount -t tmpfs tmpfs {self.hidden} && exec \"$@\""
        for n, command in enumerate(([*join], ["unshare", "--mount", "sh", "-c", hide, "sh", *join]), start=1):
            for _ in range(3):  # one node at a time; a node that exits while joining is started again
                with open(self.base / f"node{n}.log", "w") as log:
                    node = subprocess.Popen([*self.enter(), *command], env=self.env(RAY_AUTH_MODE="token"),
                                            stdout=log, stderr=subprocess.STDOUT)
                if self.wait_for_cpus(n, node):
                    self.nodes.append(node)
                    break
            else:
                raise RuntimeError(f"worker node {n} never joined: {(self.base / f'node{n}.log').read_text()[-2000:]}")

    def wait_for_cpus(self, n: int, node: subprocess.Popen, timeout: float = 180) -> bool:
        """Whether the cluster shows ``n`` CPUs before ``node`` exits (or the time is up)."""
        probe = (f"import ray; ray.init(address='{self.address}', logging_level='ERROR'); "
                 "print(int(ray.cluster_resources().get('CPU', 0)))")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and node.poll() is None:
            out = subprocess.run([*self.enter(), sys.executable, "-c", probe], capture_output=True, text=True,
                                 env=self.env(RAY_AUTH_MODE="token"), timeout=120).stdout.strip()
            if out.splitlines() and out.splitlines()[-1] == str(n):
                return True
            time.sleep(1)
        if node.poll() is None:
            node.kill()
        return False

    def python(self, code: str) -> subprocess.CompletedProcess:
        """Python code in the namespace (as a driver)."""
        return subprocess.run([*self.enter(), sys.executable, "-c", code], env=self.env(), capture_output=True,
                              text=True, timeout=900)

    def framebench(self, *args: str, token: bool = True, background: bool = False):
        command = [*self.enter(), sys.executable, "-m", "framebench", *args, "--executor", "ray",
                   "--ray-address", self.address]
        if background:
            return subprocess.Popen(command, env=self.env(token), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        return subprocess.run(command, env=self.env(token), capture_output=True, text=True, timeout=600)

    def workers(self) -> list[int]:
        """Ray worker processes running framebench units on the worker nodes."""
        return sorted(p for p in _namespace_pids(self.netns) if _cmdline(p).startswith("ray::ActorWorker"))

    def hidden_raylet(self) -> int:
        """The raylet of the node that cannot see the run folders (its own mount namespace)."""
        for pid in _namespace_pids(self.netns):
            try:
                other = os.readlink(f"/proc/{pid}/ns/mnt") != self.mntns
            except OSError:
                continue
            if other and "/raylet" in _cmdline(pid).split(" ", 1)[0]:
                return pid
        raise RuntimeError("no raylet in the hidden node's mount namespace")

    def stop(self) -> None:
        for _ in range(3):  # everything in the namespace, then the holder; nothing outside it
            pids = [p for p in _namespace_pids(self.netns) if p != self.holder.pid]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if not pids:
                break
            time.sleep(0.5)
        self.holder.kill()
        self.holder.wait(timeout=30)
        for node in self.nodes:
            node.wait(timeout=30)
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        made.start()
        shutil.copytree(DEMO / "framingqa", made.hidden / "framingqa")
        shutil.copytree(DEMO / "omit", made.hidden / "omit")
        shutil.copy(DEMO / "robotics" / "episodes.json.gz", made.hidden / "episodes.json.gz")
        yield made
    finally:
        made.stop()


def frame(run_dir: Path) -> pd.DataFrame:
    return read_records(run_dir).sort_values("item_id").reset_index(drop=True)


def assert_same(local: Path, remote: Path) -> None:
    a, b = frame(local), frame(remote)
    assert not b.item_id.duplicated().any()
    assert a.equals(b)
    assert (local / "prompts.jsonl").read_bytes() == (remote / "prompts.jsonl").read_bytes()


def executor_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["executor"]


def local_cli(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "framebench", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]


def stored(run_dir: Path) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'store.sqlite'}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def store_rows(run_dir: Path) -> set[tuple[str, float]]:
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        return set(db.execute("SELECT key, created FROM results").fetchall())


def test_framingqa_baseline_and_tiny_model_equal_local(cluster, tmp_path, tiny_llama_dir):
    data = cluster.hidden / "framingqa"
    for name, model, extra in (("baseline", "baseline:random", []),
                               ("tiny", f"hf:{tiny_llama_dir}", ["--limit", "60", "--batch-size", "8"])):
        local_cli("text", "--model", model, "--data", str(data), "--out", str(tmp_path / name), "--quiet", *extra)
        out = cluster.hidden / f"fqa-{name}"
        proc = cluster.framebench("text", "--model", model, "--data", str(data), "--out", str(out), "--quiet", *extra)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert_same(tmp_path / name, out)
        executor = executor_of(out)
        assert executor["name"] == "ray" and executor["workers"] == 2, executor
        if name == "baseline":  # 6 units over 2 one-CPU nodes: both made results, node 2 blind
            assert executor["nodes"] == 2 and executor["units"] == 6, executor
        assert cluster.token not in (out / "run.json").read_text() + proc.stdout + proc.stderr


def test_omit_m1_reasoning_on_the_workers_equal_local(cluster, tmp_path, tiny_llama_dir):
    data = cluster.hidden / "omit"
    for answer in ("generate", "constrained"):
        args = ["--model", f"hf:{tiny_llama_dir}", "--data", str(data), "--conditions", "M0,M1", "--limit", "8",
                "--answer", answer, "--quiet"]
        local_cli("text", *args, "--out", str(tmp_path / answer))
        out = cluster.hidden / f"omit-{answer}"
        proc = cluster.framebench("text", *args, "--out", str(out))
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert_same(tmp_path / answer, out)
        m1 = frame(out)[lambda d: d["condition"] == "M1"]
        assert len(m1) == 8 and m1["output"].str.len().gt(0).all()  # the reasoning came back from the workers


def test_demo_episodes_oracle_equal_local(cluster, tmp_path):
    episodes = cluster.hidden / "episodes.json.gz"
    local_cli("embodied", "--planner", "oracle", "--episodes", str(episodes), "--out", str(tmp_path / "local"))
    out = cluster.hidden / "oracle"
    proc = cluster.framebench("embodied", "--planner", "oracle", "--episodes", str(episodes), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_same(tmp_path / "local", out)
    logs = sorted(p.name for p in (out / "episodes").iterdir())
    assert len(logs) == 28 and all((out / "episodes" / n).read_bytes() == (tmp_path / "local" / "episodes" / n)
                                   .read_bytes() for n in logs)
    assert executor_of(out)["nodes"] == 2


def test_without_the_token_one_line_exit_2(cluster):
    out = cluster.hidden / "refused"
    proc = cluster.framebench("text", "--model", "baseline:random", "--data", str(cluster.hidden / "omit"),
                              "--out", str(out), "--quiet", token=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot start or reach --ray-address"), proc.stderr
    assert "token" in lines[0] and not out.exists()


@pytest.fixture(scope="module")
def episodes12(cluster) -> Path:
    from framebench.embodied.episodes import write_episodes
    from framebench.embodied.generator import make_episode

    path = cluster.hidden / "episodes12.json.gz"
    write_episodes([make_episode(0, i) for i in range(12)], path)
    return path


@pytest.fixture(scope="module")
def oracle12(episodes12, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("oracle12")
    local_cli("embodied", "--planner", "oracle", "--episodes", str(episodes12), "--out", str(out))
    return out


def _when_stored(run_dir: Path, target: int, action, timeout: float = 120) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if stored(run_dir) >= target:
                action()
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_sigkill_a_worker_mid_run_ten_trials(cluster, episodes12, oracle12):
    """Ten runs by one driver process (one connection); in each, a random worker is SIGKILLed
    after 1-5 episodes were stored."""
    rng = random.Random(21)
    outs = [cluster.hidden / f"sigkill{trial}" for trial in range(10)]
    targets = [rng.randrange(1, 6) * 7 for _ in outs]
    killed: list[int] = []

    def watch() -> None:
        deadline = time.monotonic() + 600
        for out, target in zip(outs, targets, strict=True):
            while stored(out) < target and time.monotonic() < deadline:
                time.sleep(0.005)
            pids = cluster.workers()
            if pids:
                os.kill(rng.choice(pids), signal.SIGKILL)
                killed.append(target)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    proc = cluster.python(
        "import ray\nfrom framebench import api\nfrom framebench.executors.cluster import connect\n"
        f"connect(ray, {cluster.address!r})\n"
        f"for out in {[str(o) for o in outs]!r}:\n"
        f"    api.run_embodied('oracle', {str(episodes12)!r}, out, executor='ray', ray_address={cluster.address!r})\n")
    watcher.join(timeout=30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(killed) == 10
    for trial, out in enumerate(outs):
        assert executor_of(out)["worker_deaths"] == 1, (trial, executor_of(out))
        assert_same(oracle12, out)
        with sqlite3.connect(out / "store.sqlite") as db:  # each variant made and stored once
            assert db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results").fetchone() == (84, 84)


def test_kill_the_driver_then_rerun_resumes(cluster, episodes12, oracle12):
    out = cluster.hidden / "driver-killed"
    args = ("embodied", "--planner", "oracle", "--episodes", str(episodes12), "--out", str(out))
    driver = cluster.framebench(*args, background=True)
    try:
        _when_stored(out, 4 * 7, lambda: os.kill(driver.pid, signal.SIGKILL)).join(timeout=120)
    finally:
        driver.kill()
        driver.wait(timeout=30)
    assert not (out / "records.parquet").exists()
    kept = store_rows(out)
    assert 28 <= len(kept) < 84
    proc = cluster.framebench(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_same(oracle12, out)
    after = store_rows(out)
    assert kept <= after and len(after) == 84  # nothing stored was made again
    assert json.loads((out / "run.json").read_text())["n_framings"] == 84


def test_stop_a_worker_nodes_raylet_mid_run(cluster, episodes12, oracle12):
    """Last in the module: the hidden node is gone afterwards; the run finishes on the other."""
    out = cluster.hidden / "raylet-stopped"
    raylet = cluster.hidden_raylet()
    watcher = _when_stored(out, 7, lambda: os.kill(raylet, signal.SIGKILL))
    proc = cluster.framebench("embodied", "--planner", "oracle", "--episodes", str(episodes12), "--out", str(out))
    watcher.join(timeout=10)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not Path(f"/proc/{raylet}").exists() or "zombie" in Path(f"/proc/{raylet}/status").read_text()
    # a death is counted only when the node held a unit at that moment: on an idle machine the
    # oracle's short units can all be back already, so completion and equal records are what count
    assert_same(oracle12, out)
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results").fetchone() == (84, 84)
