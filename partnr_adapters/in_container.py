"""In-container runner: run PARTNR's planner evaluation on a framed episode file.

Runs inside the Habitat image (Python 3.9, standard library plus ``habitat_llm``); keep this file
Python 3.9-compatible and free of framebench imports. Nothing here imports habitat at module level,
so the override builder and the LLM class can be tested anywhere.

    python -m partnr_adapters.in_container run --episodes framed.json.gz --results /out/results \
        --planner openai:MODEL --base-url http://127.0.0.1:8000/v1 [--baseline NAME] [--batch-size 5]
    python -m partnr_adapters.in_container export-scenes --episodes episodes.json.gz --out scenes.json.gz

``run`` launches ``habitat_llm.examples.planner_demo`` once per small batch of episode indices (PARTNR
grows memory over many episodes; upstream issue #33 batches by 5), skips episodes that already have a
stats file (resumable), and writes ``framebench-run.json`` (the manifest ingestion reads).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence

try:  # habitat_llm exists only inside the container
    from habitat_llm.llm.base_llm import BaseLLM as _LLMBase
except ImportError:  # pragma: no cover - depends on the environment
    _LLMBase = object  # type: ignore[assignment,misc]

LLM_TARGET = "partnr_adapters.in_container.OpenAICompatibleLLM"
MANIFEST_FILE = "framebench-run.json"
DEFAULT_BASELINE = "single_agent_zero_shot_react_summary"
DEFAULT_BATCH_SIZE = 5
BASE_URL_ENV = "FRAMEBENCH_LLM_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"

# planner config node of every LLM-driven agent, for the baselines whose only LLM is the planner's
# (the *_tools baselines also call an LLM inside perception tools, which these overrides do not reach)
_DECENTRALIZED_2 = ("evaluation.agents.agent_0.planner", "evaluation.agents.agent_1.planner")
_SINGLE = ("evaluation.agents.agent_0.planner",)
_CENTRAL = ("evaluation.planner",)
BASELINE_PLANNERS = {
    "single_agent_zero_shot_react_summary": _SINGLE,
    "decentralized_zero_shot_react_summary": _DECENTRALIZED_2,
    "centralized_zero_shot_react_summary": _CENTRAL,
    "heuristic_full_obs": (),  # scripted oracle planner: no LLM
}


class ContainerRunError(Exception):
    """A usage or environment problem, printed as one line (exit 2)."""


# --------------------------------------------------------------------------- the LLM class


def _conf_get(conf: Any, key: str, default: Any = None) -> Any:
    """Read a key from an omegaconf DictConfig, a dict, or None."""
    if conf is None:
        return default
    try:
        value = conf.get(key, default)
    except AttributeError:
        value = getattr(conf, key, default)
    return default if value is None else value


def _prompt_text(prompt: Any) -> str:
    """habitat_llm prompts are a string or a list of (kind, value) pairs; keep the text parts."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(value) for kind, value in prompt if kind == "text")


class OpenAICompatibleLLM(_LLMBase):  # type: ignore[misc,valid-type]
    """A habitat_llm LLM that calls any OpenAI-compatible ``/chat/completions`` endpoint.

    Select it with ``llm@<planner>.plan_config.llm=openai_chat`` (for its keys and empty chat tags)
    plus ``<planner>.plan_config.llm.llm._target_=partnr_adapters.in_container.OpenAICompatibleLLM``.
    Reads ``base_url`` from the config or ``FRAMEBENCH_LLM_BASE_URL``, the model from
    ``generation_params.model``, and the API key (optional: local servers need none) from
    ``OPENAI_API_KEY``; the key is sent as a header and never logged.
    """

    def __init__(self, conf: Any) -> None:
        self.llm_conf = conf
        self.generation_params = _conf_get(conf, "generation_params", {})
        base_url = _conf_get(conf, "base_url", "") or os.environ.get(BASE_URL_ENV, "")
        if not base_url:
            raise ValueError(f"OpenAICompatibleLLM: no base_url in the llm config and {BASE_URL_ENV} is not set")
        self.base_url = str(base_url).rstrip("/")
        self.model = str(_conf_get(self.generation_params, "model", ""))
        if not self.model:
            raise ValueError("OpenAICompatibleLLM: generation_params.model is empty")
        self.system_message = str(_conf_get(conf, "system_message", ""))
        self.timeout = float(_conf_get(conf, "request_timeout", 120))
        self.max_retries = int(_conf_get(conf, "max_retries", 3))
        self.response = ""

    def request_body(self, prompt: Any, stop: Optional[str], max_length: Optional[int]) -> Dict[str, Any]:
        params = self.generation_params
        messages = []
        if self.system_message:
            messages.append({"role": "system", "content": self.system_message})
        messages.append({"role": "user", "content": _prompt_text(prompt)})
        stop = stop if stop is not None else (_conf_get(params, "stop", "") or None)
        body: Dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": int(max_length if max_length is not None else _conf_get(params, "max_tokens", 250)),
            "temperature": float(_conf_get(params, "temperature", 0.0)),
        }
        if stop:
            body["stop"] = [stop]
        return body

    def _post(self, body: Dict[str, Any]) -> Dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(API_KEY_ENV, "")
        if key:
            headers["Authorization"] = "Bearer " + key
        data = json.dumps(body).encode("utf-8")
        delay = 1.0
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(self.base_url + "/chat/completions", data=data, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                    return json.loads(reply.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                retryable = exc.code == 429 or exc.code >= 500
                if not retryable or attempt == self.max_retries:
                    raise RuntimeError(f"LLM endpoint {self.base_url} answered HTTP {exc.code}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == self.max_retries:
                    raise RuntimeError(f"LLM endpoint {self.base_url} unreachable: {exc}") from None
            except ValueError:
                raise RuntimeError(f"LLM endpoint {self.base_url} returned a non-JSON body") from None
            time.sleep(delay)
            delay *= 2
        raise RuntimeError("unreachable")  # pragma: no cover

    def generate(self, prompt: Any, stop: Optional[str] = None, max_length: Optional[int] = None,
                 generation_args: Any = None, **_: Any) -> str:
        """One chat completion; the text is cut at ``stop`` (servers may ignore the stop field)."""
        reply = self._post(self.request_body(prompt, stop, max_length))
        try:
            text = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise RuntimeError("LLM endpoint reply has no choices[0].message.content") from None
        if not isinstance(text, str):
            text = ""
        self.response = text
        stop = stop if stop is not None else (_conf_get(self.generation_params, "stop", "") or None)
        if stop:
            text = text.split(stop)[0]
        return text


# --------------------------------------------------------------------------- hydra overrides


def planner_nodes(baseline: str) -> Sequence[str]:
    if baseline not in BASELINE_PLANNERS:
        raise ContainerRunError(f"unknown baseline {baseline!r}; known: {', '.join(sorted(BASELINE_PLANNERS))}")
    return BASELINE_PLANNERS[baseline]


def llm_overrides(node: str, model: str, base_url: str, replanning_threshold: Optional[int] = None,
                  max_tokens: Optional[int] = None) -> List[str]:
    """Hydra overrides that make the planner at ``node`` use OpenAICompatibleLLM."""
    plan = node + ".plan_config"
    out = [
        "llm@" + plan + ".llm=openai_chat",
        plan + ".llm.llm._target_=" + LLM_TARGET,
        plan + ".llm.generation_params.model=" + _hydra_quote(model),
        "++" + plan + ".llm.base_url=" + _hydra_quote(base_url),
        # grammar-constrained decoding needs local logits; an HTTP endpoint cannot do it
        plan + ".constrained_generation=False",
    ]
    if replanning_threshold is not None:
        out.append(plan + ".replanning_threshold=" + str(int(replanning_threshold)))
    if max_tokens is not None:
        out.append(plan + ".llm.generation_params.max_tokens=" + str(int(max_tokens)))
    return out


def _hydra_quote(value: str) -> str:
    """Quote a value for the hydra override grammar when it holds special characters."""
    if value and all(ch.isalnum() or ch in "-_./" for ch in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def build_overrides(dataset_path: str, results_dir: str, episode_indices: Sequence[int],
                    baseline: str = DEFAULT_BASELINE, model: str = "", base_url: str = "",
                    partial_obs: Optional[bool] = None, replanning_threshold: Optional[int] = None,
                    max_tokens: Optional[int] = None, hydra_dir: Optional[str] = None,
                    extra: Sequence[str] = ()) -> List[str]:
    """The full ``planner_demo`` argument list for one batch (``--config-name`` first)."""
    nodes = planner_nodes(baseline)
    if nodes and not (model and base_url):
        raise ContainerRunError(f"baseline {baseline} plans with an LLM: pass --planner openai:MODEL and --base-url")
    if not episode_indices:
        raise ContainerRunError("empty batch of episode indices")
    args = [
        "--config-name", "baselines/" + baseline + ".yaml",
        "habitat.dataset.data_path=" + _hydra_quote(dataset_path),
        "paths.results_dir=" + _hydra_quote(results_dir),
        "+episode_indices=[" + ",".join(str(int(i)) for i in episode_indices) + "]",
        "num_proc=1",
        "evaluation.save_video=False",
    ]
    if hydra_dir:
        args.append("hydra.run.dir=" + _hydra_quote(hydra_dir))
    if partial_obs is not None:
        args.append("world_model.partial_obs=" + ("True" if partial_obs else "False"))
    for node in nodes:
        args += llm_overrides(node, model, base_url, replanning_threshold, max_tokens)
    args += list(extra)
    return args


# --------------------------------------------------------------------------- episodes and batches


def read_episode_ids(path: str) -> List[str]:
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = json.loads(raw.decode("utf-8"))
    return [str(ep["episode_id"]) for ep in data["episodes"]]


def stats_dir(results_dir: str, dataset_path: str) -> str:
    """Where planner_demo writes ``<episode_id>.json``: ``<results_dir>/<dataset file name>/stats``."""
    return os.path.join(results_dir, os.path.basename(dataset_path), "stats")


def pending_indices(episode_ids: Sequence[str], stats_folder: str, retry_crashed: bool = False) -> List[int]:
    """Indices of episodes without a stats file (or with a crash record when ``retry_crashed``)."""
    pending = []
    for index, episode_id in enumerate(episode_ids):
        path = os.path.join(stats_folder, episode_id + ".json")
        if not os.path.isfile(path):
            pending.append(index)
        elif retry_crashed:
            try:
                with open(path, encoding="utf-8") as fh:
                    crashed = not json.load(fh).get("success", False)
            except (OSError, ValueError, AttributeError):
                crashed = True
            if crashed:
                pending.append(index)
    return pending


def batches(indices: Sequence[int], size: int) -> List[List[int]]:
    if size < 1:
        raise ContainerRunError("--batch-size must be at least 1")
    return [list(indices[i:i + size]) for i in range(0, len(indices), size)]


def parse_planner(spec: str) -> str:
    """``openai:MODEL`` -> MODEL; ``heuristic`` (PARTNR's scripted planner) -> ''."""
    if spec in ("heuristic", "oracle"):
        return ""
    kind, _, model = spec.partition(":")
    if kind != "openai" or not model:
        raise ContainerRunError(f"--planner {spec!r}: use openai:MODEL (any OpenAI-compatible endpoint) or heuristic")
    return model


def have_habitat() -> bool:
    import importlib.util

    return importlib.util.find_spec("habitat_llm") is not None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _write_json_atomic(data: Any, path: str) -> None:
    tmp = path + ".tmp" + str(os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
    os.replace(tmp, path)


def run(args: argparse.Namespace) -> int:
    if not have_habitat():
        raise ContainerRunError("habitat_llm is not importable: run inside the framebench Habitat image (docker/README.md)")
    dataset_path = os.path.abspath(args.episodes)
    results_dir = os.path.abspath(args.results)
    model = parse_planner(args.planner)
    baseline = args.baseline if model else "heuristic_full_obs"
    base_url = args.base_url or os.environ.get(BASE_URL_ENV, "")
    episode_ids = read_episode_ids(dataset_path)
    todo = pending_indices(episode_ids, stats_dir(results_dir, dataset_path), args.retry_crashed)
    if args.indices:
        chosen = set(int(i) for i in args.indices.split(","))
        todo = [i for i in todo if i in chosen]
    if args.limit is not None:
        todo = todo[: args.limit]
    os.makedirs(results_dir, exist_ok=True)
    manifest_path = os.path.join(results_dir, MANIFEST_FILE)
    manifest = {
        "started": _now(),
        "batches": [],
    }
    if os.path.isfile(manifest_path):  # resuming: keep identity and history
        with open(manifest_path, encoding="utf-8") as fh:
            previous = json.load(fh)
        if previous.get("planner") not in (None, args.planner):
            raise ContainerRunError("%s holds a run of %s; use another --results folder for %s"
                              % (results_dir, previous["planner"], args.planner))
        manifest.update(previous)
    manifest.update({
        "planner": args.planner,
        "fingerprint": args.planner + ("@" + base_url if base_url else ""),
        "decoding": {"temperature": 0.0, "max_tokens": args.max_tokens},
        "partnr": {"baseline": baseline, "partial_obs": args.partial_obs, "dataset": dataset_path,
                   "replanning_threshold": args.replanning_threshold},
    })
    if "run_id" not in manifest:  # deterministic over what determines the results (framebench.run_folder)
        with open(dataset_path, "rb") as fh:
            data_hash = hashlib.sha256(fh.read()).hexdigest()
        determinants = [manifest["fingerprint"], data_hash, manifest["decoding"],
                        {k: v for k, v in manifest["partnr"].items() if k != "dataset"}]
        manifest["run_id"] = "partnr-" + hashlib.sha256(
            json.dumps(determinants, sort_keys=True).encode()).hexdigest()[:12]
    print("%d of %d episodes to run in batches of %d" % (len(todo), len(episode_ids), args.batch_size), flush=True)
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    for number, batch in enumerate(batches(todo, args.batch_size)):
        argv = [sys.executable, "-m", "habitat_llm.examples.planner_demo"] + build_overrides(
            dataset_path, results_dir, batch, baseline=baseline, model=model, base_url=base_url,
            partial_obs=args.partial_obs, replanning_threshold=args.replanning_threshold,
            max_tokens=args.max_tokens, hydra_dir=os.path.join(results_dir, "hydra", "batch_%d" % number),
            extra=args.override,
        )
        print("batch %d: episodes %s" % (number, ",".join(episode_ids[i] for i in batch)), flush=True)
        code = subprocess.call(argv, cwd=args.partnr_root, env=env)
        manifest["batches"].append({"indices": batch, "returncode": code, "finished": _now()})
        _write_json_atomic(manifest, manifest_path)
        if code != 0:
            print("batch %d exited with %d; its episodes without stats are reported at ingestion" % (number, code),
                  flush=True)
    _write_json_atomic(manifest, manifest_path)
    return 0


def export_scenes(args: argparse.Namespace) -> int:
    if not have_habitat():
        raise ContainerRunError("habitat_llm is not importable: run inside the framebench Habitat image (docker/README.md)")
    from partnr_adapters.scene_export import export_dataset

    count = export_dataset(os.path.abspath(args.episodes), os.path.abspath(args.out), args.partnr_root)
    print("exported %d episodes to %s" % (count, args.out))
    return 0


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError("expected true or false")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m partnr_adapters.in_container", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run PARTNR's planner evaluation on a framed episode file")
    r.add_argument("--episodes", required=True, help="framed episode file (.json.gz)")
    r.add_argument("--results", required=True, help="PARTNR results folder (paths.results_dir)")
    r.add_argument("--planner", required=True, help="openai:MODEL or heuristic")
    r.add_argument("--base-url", default="", help="OpenAI-compatible base URL (or $" + BASE_URL_ENV + ")")
    r.add_argument("--baseline", default=DEFAULT_BASELINE, choices=sorted(BASELINE_PLANNERS))
    r.add_argument("--partial-obs", type=_bool, default=None, help="world_model.partial_obs (default: baseline's)")
    r.add_argument("--replanning-threshold", type=int, default=None)
    r.add_argument("--max-tokens", type=int, default=None)
    r.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    r.add_argument("--limit", type=int, default=None, help="run at most N pending episodes")
    r.add_argument("--indices", default="", help="run only these episode indices, e.g. 0,1,2 (one Ray unit)")
    r.add_argument("--retry-crashed", action="store_true", help="rerun episodes whose stats record a crash")
    r.add_argument("--partnr-root", default=os.environ.get("PARTNR_ROOT", "."), help="partnr-planner checkout (data/ inside)")
    r.add_argument("--override", action="append", default=[], help="extra hydra override (repeatable)")
    e = sub.add_parser("export-scenes", help="dump each episode's ground-truth world graph as a symbolic scene")
    e.add_argument("--episodes", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--partnr-root", default=os.environ.get("PARTNR_ROOT", "."))
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return run(args) if args.command == "run" else export_scenes(args)
    except ContainerRunError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
