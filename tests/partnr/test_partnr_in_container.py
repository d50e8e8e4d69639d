"""The in-container runner: hydra overrides, batching/resume, the OpenAI-compatible LLM class,
Python 3.9 compatibility. habitat_llm is absent here; a stand-in ``planner_demo`` (written by the
test, writing stats files the way PARTNR does) exercises the batch loop end to end."""

from __future__ import annotations

import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from framebench.partnr_adapters import in_container

REPO = Path(__file__).resolve().parents[2]
LLM_NODE = "evaluation.agents.agent_0.planner.plan_config"


def test_habitat_llm_is_absent_here_and_import_is_guarded():
    # the module imported without habitat_llm; the LLM class then derives from object
    if in_container.have_habitat():
        pytest.skip("habitat_llm is installed: the guard is not exercised")
    assert in_container.OpenAICompatibleLLM.__mro__[1] is object


def test_override_list_for_the_single_agent_llm_baseline():
    args = in_container.build_overrides("/data/framed.json.gz", "/out/results", [5, 6, 7], model="meta-llama/Llama-3.1-8B",
                                  base_url="http://127.0.0.1:8000/v1", partial_obs=False, replanning_threshold=25,
                                  hydra_dir="/out/hydra/batch_1")
    assert args[:2] == ["--config-name", "baselines/single_agent_zero_shot_react_summary.yaml"]
    assert "habitat.dataset.data_path=/data/framed.json.gz" in args
    assert "paths.results_dir=/out/results" in args
    assert "+episode_indices=[5,6,7]" in args
    assert "world_model.partial_obs=False" in args
    assert "hydra.run.dir=/out/hydra/batch_1" in args
    assert f"llm@{LLM_NODE}.llm=openai_chat" in args
    assert f"{LLM_NODE}.llm.llm._target_=partnr_adapters.in_container.OpenAICompatibleLLM" in args
    assert f"{LLM_NODE}.llm.generation_params.model=meta-llama/Llama-3.1-8B" in args
    assert f"++{LLM_NODE}.llm.base_url='http://127.0.0.1:8000/v1'" in args
    assert f"{LLM_NODE}.constrained_generation=False" in args
    assert f"{LLM_NODE}.replanning_threshold=25" in args
    assert not any("agent_1" in a for a in args)


def test_overrides_per_baseline_family():
    two = in_container.build_overrides("d.json.gz", "r", [0], baseline="decentralized_zero_shot_react_summary",
                                 model="m", base_url="u")
    assert sum(a.endswith(".llm.llm._target_=" + in_container.LLM_TARGET) for a in two) == 2
    central = in_container.build_overrides("d.json.gz", "r", [0], baseline="centralized_zero_shot_react_summary",
                                     model="m", base_url="u")
    assert "llm@evaluation.planner.plan_config.llm=openai_chat" in central
    heuristic = in_container.build_overrides("d.json.gz", "r", [0], baseline="heuristic_full_obs")
    assert not any("llm" in a for a in heuristic)
    assert not any(a.startswith("world_model") for a in heuristic)  # baseline's own observability
    with pytest.raises(in_container.ContainerRunError, match="plans with an LLM"):
        in_container.build_overrides("d", "r", [0], model="", base_url="")
    with pytest.raises(in_container.ContainerRunError, match="unknown baseline"):
        in_container.build_overrides("d", "r", [0], baseline="nope")


def test_hydra_quoting():
    assert in_container._hydra_quote("a/b-c_1.json.gz") == "a/b-c_1.json.gz"
    assert in_container._hydra_quote("/path with space/x") == "'/path with space/x'"
    assert in_container._hydra_quote("it's") == "'it\\'s'"


def test_batches_and_pending(tmp_path):
    assert in_container.batches([0, 1, 2, 3, 4, 5, 6], 3) == [[0, 1, 2], [3, 4, 5], [6]]
    ids = ["a__neutral", "b__neutral", "c__neutral"]
    (tmp_path / "a__neutral.json").write_text(json.dumps({"success": True, "stats": "{}"}))
    (tmp_path / "b__neutral.json").write_text(json.dumps({"success": False, "info": "tb"}))
    assert in_container.pending_indices(ids, str(tmp_path)) == [2]
    assert in_container.pending_indices(ids, str(tmp_path), retry_crashed=True) == [1, 2]
    assert in_container.parse_planner("openai:gpt-4.1-mini") == "gpt-4.1-mini"
    assert in_container.parse_planner("heuristic") == ""
    with pytest.raises(in_container.ContainerRunError):
        in_container.parse_planner("hf:/models/x")


# ------------------------------------------------------------------ LLM class against a local server


def llm_conf(base_url, **extra):
    conf = {"system_message": "You are an expert at task planning.", "base_url": base_url,
            "generation_params": {"model": "tiny", "max_tokens": 250, "temperature": 0, "stop": "Assigned!"}}
    conf.update(extra)
    return conf


def test_llm_class_request_and_stop_handling(httpserver, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    reply = {"choices": [{"message": {"role": "assistant",
                                       "content": "Thought: go.\nNavigate[table_14]\nAssigned!\nExtra"}}]}
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(reply)
    llm = in_container.OpenAICompatibleLLM(llm_conf(httpserver.url_for("/v1")))
    text = llm.generate("Task: move the cup.\nThought: ", stop="Assigned!")
    assert text == "Thought: go.\nNavigate[table_14]\n"
    request, _ = httpserver.log[0]
    body = request.get_json()
    assert body["model"] == "tiny" and body["stop"] == ["Assigned!"] and body["max_tokens"] == 250
    assert body["temperature"] == 0.0
    assert body["messages"] == [{"role": "system", "content": "You are an expert at task planning."},
                                {"role": "user", "content": "Task: move the cup.\nThought: "}]
    assert request.headers["Authorization"] == "Bearer sk-test-123"


def test_llm_class_multimodal_prompt_keeps_text_and_max_length(httpserver, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    httpserver.expect_request("/chat/completions").respond_with_json({"choices": [{"message": {"content": "Done[]"}}]})
    llm = in_container.OpenAICompatibleLLM(llm_conf(httpserver.url_for("/")))
    assert llm.generate([("text", "part one"), ("image", "data:..."), ("text", "part two")], max_length=7) == "Done[]"
    request, _ = httpserver.log[0]
    assert request.get_json()["messages"][-1]["content"] == "part one\npart two"
    assert request.get_json()["max_tokens"] == 7
    assert "Authorization" not in request.headers


def test_llm_class_errors_are_clear(httpserver, monkeypatch):
    monkeypatch.setattr(in_container.time, "sleep", lambda s: None)
    httpserver.expect_request("/v1/chat/completions").respond_with_data("nope", status=400)
    llm = in_container.OpenAICompatibleLLM(llm_conf(httpserver.url_for("/v1"), max_retries=1))
    with pytest.raises(RuntimeError, match="HTTP 400"):
        llm.generate("x")
    assert len(httpserver.log) == 1  # 4xx is not retried
    httpserver.clear()
    httpserver.expect_request("/v1/chat/completions").respond_with_data("busy", status=503)
    with pytest.raises(RuntimeError, match="HTTP 503"):
        llm.generate("x")
    assert len(httpserver.log) == 2  # retried once
    httpserver.clear()
    httpserver.expect_request("/v1/chat/completions").respond_with_json({"choices": []})
    with pytest.raises(RuntimeError, match="no choices"):
        llm.generate("x")
    monkeypatch.delenv(in_container.BASE_URL_ENV, raising=False)
    with pytest.raises(ValueError, match="base_url"):
        in_container.OpenAICompatibleLLM({"generation_params": {"model": "m"}})


def test_llm_base_url_from_environment(monkeypatch):
    monkeypatch.setenv(in_container.BASE_URL_ENV, "http://127.0.0.1:9/v1/")
    llm = in_container.OpenAICompatibleLLM({"generation_params": {"model": "m"}})
    assert llm.base_url == "http://127.0.0.1:9/v1"


# ------------------------------------------------------------------ Python 3.9


def python39() -> str | None:
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9")))
    candidates += [p for p in [shutil.which("python3.9")] if p]
    for path in candidates:
        try:
            ok = subprocess.run([path, "-c", "import sys; assert sys.version_info[:2] == (3, 9)"],
                                capture_output=True, timeout=30).returncode == 0
        except OSError:
            ok = False
        if ok:
            return path
    return None


@pytest.mark.subprocess
def test_in_container_runner_and_scene_export_run_on_python39():
    py = python39()
    if py is None:
        pytest.skip("no working python3.9 interpreter on this machine")
    code = ("import sys; sys.path.insert(0, '.');"
            "import partnr_adapters.in_container as d, partnr_adapters.scene_export as s;"
            "print(len(d.build_overrides('x.json.gz', 'r', [0], model='m', base_url='u')));"
            "print(s.infer_constraint_type({'evaluation_constraints': []}))")
    for module in ("partnr_adapters/in_container.py", "partnr_adapters/scene_export.py"):
        result = subprocess.run([py, "-m", "py_compile", module], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    result = subprocess.run([py, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["12", "none"]


# ------------------------------------------------------------------ the batch loop, end to end

FAKE_PLANNER_DEMO = '''
import json, os, sys, gzip
args = sys.argv[1:]
log = os.environ["FAKE_LOG"]
with open(log, "a") as fh:
    fh.write(json.dumps(args) + "\\n")
kv = dict(a.split("=", 1) for a in args if "=" in a and not a.startswith("--"))
data_path = kv["habitat.dataset.data_path"]
results = kv["paths.results_dir"]
indices = json.loads(kv["+episode_indices"])
eps = json.loads(gzip.decompress(open(data_path, "rb").read()))["episodes"]
stats = os.path.join(results, os.path.basename(data_path), "stats")
os.makedirs(stats, exist_ok=True)
for i in indices:
    eid = eps[i]["episode_id"]
    if eid == os.environ.get("FAKE_DIE_ON"):
        sys.exit(3)
    body = {"success": True, "stats": json.dumps({"task_percent_complete": 1.0, "task_state_success": 1.0,
            "sim_step_count": 10, "replanning_count_0": 2})}
    with open(os.path.join(stats, eid + ".json"), "w") as fh:
        json.dump(body, fh)
'''


@pytest.fixture
def fake_habitat(tmp_path):
    pkg = tmp_path / "fake" / "habitat_llm"
    (pkg / "examples").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "examples" / "__init__.py").write_text("")
    (pkg / "examples" / "planner_demo.py").write_text(FAKE_PLANNER_DEMO)
    return tmp_path / "fake"


def run_in_container(fake, tmp_path, *extra, env_extra=None):
    env = dict(os.environ, PYTHONPATH=f"{fake}{os.pathsep}{REPO}", FAKE_LOG=str(tmp_path / "calls.jsonl"),
               **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "partnr_adapters.in_container", "run", *extra], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.subprocess
def test_run_batches_resumes_and_records_failures(fake_habitat, tmp_path):
    ids = [f"{n}__neutral" for n in range(7)]
    framed = tmp_path / "framed.json.gz"
    framed.write_bytes(gzip.compress(json.dumps({"episodes": [{"episode_id": i} for i in ids]}).encode()))
    common = ["--episodes", str(framed), "--results", str(tmp_path / "res"), "--planner", "openai:m",
              "--base-url", "http://127.0.0.1:1/v1", "--batch-size", "3"]
    first = run_in_container(fake_habitat, tmp_path, *common, env_extra={"FAKE_DIE_ON": "4__neutral"})
    assert first.returncode == 0, first.stderr
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [c[c.index("--config-name") + 1] for c in calls] == ["baselines/single_agent_zero_shot_react_summary.yaml"] * 3
    assert [next(a for a in c if a.startswith("+episode_indices")) for c in calls] == [
        "+episode_indices=[0,1,2]", "+episode_indices=[3,4,5]", "+episode_indices=[6]"]
    stats = tmp_path / "res" / "framed.json.gz" / "stats"
    assert sorted(p.stem for p in stats.glob("*.json")) == ["0__neutral", "1__neutral", "2__neutral",
                                                             "3__neutral", "6__neutral"]
    manifest = json.loads((tmp_path / "res" / "framebench-run.json").read_text())
    assert [b["returncode"] for b in manifest["batches"]] == [0, 3, 0]
    assert manifest["planner"] == "openai:m"

    (tmp_path / "calls.jsonl").unlink()
    second = run_in_container(fake_habitat, tmp_path, *common)  # resume: only the two without stats
    assert second.returncode == 0, second.stderr
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [next(a for a in c if a.startswith("+episode_indices")) for c in calls] == ["+episode_indices=[4,5]"]
    manifest2 = json.loads((tmp_path / "res" / "framebench-run.json").read_text())
    assert manifest2["run_id"] == manifest["run_id"] and len(manifest2["batches"]) == 4

    other = run_in_container(fake_habitat, tmp_path, *[("openai:other" if a == "openai:m" else a) for a in common])
    assert other.returncode == 2 and "holds a run of openai:m" in other.stderr


@pytest.mark.subprocess
def test_run_without_habitat_is_one_line_exit_2(tmp_path):
    if in_container.have_habitat():
        pytest.skip("habitat_llm is installed here")
    result = subprocess.run([sys.executable, "-m", "partnr_adapters.in_container", "run", "--episodes", "x", "--results",
                             "r", "--planner", "heuristic"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "docker/README.md" in result.stderr


def test_real_habitat_smoke():
    pytest.importorskip("habitat_sim", reason="habitat_sim is not installed (conda-only, Python 3.9): "
                        "run this inside the framebench Habitat image")
    from habitat_llm.llm.base_llm import BaseLLM

    assert issubclass(in_container.OpenAICompatibleLLM, BaseLLM)
