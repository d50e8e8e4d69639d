"""The habitat simulator (``framebench embodied --simulator habitat``): run PARTNR in its container
(or in place) and ingest.

Where the driver runs, in order of preference:

1. here, when ``habitat_llm`` is importable in this interpreter;
2. the interpreter named by ``FRAMEBENCH_HABITAT_PYTHON`` (e.g. the container's Python 3.9 when
   framebench itself runs next to it);
3. the Habitat image through ``docker run`` (``FRAMEBENCH_HABITAT_IMAGE``, default
   ``framebench-habitat:latest``) with the PARTNR data folder mounted (``data_dir`` option or
   ``FRAMEBENCH_PARTNR_DATA``).

Without any of them it stops with one line naming what is missing and ``docker/README.md``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from framebench.errors import UserError

DEFAULT_IMAGE = "framebench-habitat:latest"
CONTAINER_PARTNR = "/opt/partnr-planner"
CONTAINER_WORK = "/work/run"
RESULTS_SUBDIR = "partnr-results"
FRAMED_FILE = "framed_episodes.json.gz"
DOCS = "docker/README.md"


def framed_episode_file(episodes: Path, out: Path, purposes: Path | None = None) -> Path:
    """The framed file to run: ``episodes`` itself when already framed, else framed into ``out``.

    Unframed episodes take their purposes from ``purposes`` (a purposes file) or from each
    episode's ``info.purposes``.
    """
    from partnr_adapters.frame import (
        SUFFIX_SEP,
        frame_episodes,
        load_episode_file,
        load_purposes,
        write_episode_file,
    )

    data = load_episode_file(episodes)
    ids = [str(ep["episode_id"]) for ep in data["episodes"]]
    if ids and all(SUFFIX_SEP in i for i in ids):
        return episodes
    if purposes is not None:
        table = load_purposes(purposes)
    else:
        table = {}
        for ep in data["episodes"]:
            info = ep.get("info") if isinstance(ep.get("info"), dict) else {}
            if "purposes" not in info:
                raise UserError(
                    f"{episodes}: episode {ep['episode_id']}: no info.purposes; frame the file first with "
                    "`framebench partnr frame --purposes P.json` or pass a purposes file"
                )
            table[str(ep["episode_id"])] = info["purposes"]
    target = out / FRAMED_FILE
    write_episode_file(frame_episodes(data, table, source=str(episodes)), target)
    return target


def driver_args(planner: str, episodes: str, results: str, opts: dict[str, Any]) -> list[str]:
    """Arguments of ``python -m partnr_adapters.driver run`` for these options."""
    args = ["run", "--episodes", episodes, "--results", results, "--planner", planner]
    for key in ("base_url", "baseline", "batch_size", "replanning_threshold", "max_tokens", "limit", "indices"):
        if opts.get(key) is not None:
            args += ["--" + key.replace("_", "-"), str(opts[key])]
    if opts.get("partial_obs") is not None:
        args += ["--partial-obs", "true" if opts["partial_obs"] else "false"]
    if opts.get("retry_crashed"):
        args.append("--retry-crashed")
    for override in opts.get("overrides") or []:
        args += ["--override", override]
    return args


def docker_command(image: str, data_dir: Path, work: Path, args: list[str], gpus: str = "all") -> list[str]:
    """``docker run`` for the driver: GPU with the graphics capability (EGL), data and run folder mounted.

    The API key is passed by name only (``-e OPENAI_API_KEY``), so its value never appears in the
    command line; host networking lets the container reach an LLM server on the host's 127.0.0.1.
    """
    return [
        "docker", "run", "--rm", "--gpus", gpus, "--network", "host",
        "-e", "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics",
        "-e", "OPENAI_API_KEY", "-e", "FRAMEBENCH_LLM_BASE_URL",
        "-v", f"{data_dir.resolve()}:{CONTAINER_PARTNR}/data:ro",
        "-v", f"{work.resolve()}:{CONTAINER_WORK}",
        "-w", CONTAINER_PARTNR,
        image, "python", "-m", "partnr_adapters.driver", *args,
    ]


def launcher_here(opts: dict[str, Any]) -> str:
    if importlib.util.find_spec("habitat_llm") is not None:
        return "local"
    if os.environ.get("FRAMEBENCH_HABITAT_PYTHON"):
        return "python"
    if shutil.which("docker"):
        return "docker"
    raise UserError(
        "the habitat simulator needs Docker (no `docker` on PATH) or habitat_llm (not importable here; "
        f"or set FRAMEBENCH_HABITAT_PYTHON); see {DOCS}"
    )


def driver_command(launcher: str, planner: str, framed: Path, out: Path, results_subdir: str,
                   opts: dict[str, Any]) -> tuple[list[str], dict[str, str], Path]:
    """The driver's command line and environment for ``launcher`` (results go to ``out/results_subdir``),
    and the framed file it reads (copied into ``out`` for Docker)."""
    env = dict(os.environ)
    if launcher == "docker":
        data_dir = opts.get("data_dir") or os.environ.get("FRAMEBENCH_PARTNR_DATA")
        if not data_dir or not Path(data_dir).is_dir():
            raise UserError(f"the habitat simulator needs the PARTNR data folder (data_dir / FRAMEBENCH_PARTNR_DATA); see {DOCS}")
        # the container sees out/ as CONTAINER_WORK; a framed file outside out/ is copied in
        if framed.resolve().parent != out.resolve():
            shutil.copyfile(framed, out / FRAMED_FILE)
            framed = out / FRAMED_FILE
        args = driver_args(planner, f"{CONTAINER_WORK}/{framed.name}", f"{CONTAINER_WORK}/{results_subdir}", opts)
        command = docker_command(opts.get("image") or os.environ.get("FRAMEBENCH_HABITAT_IMAGE", DEFAULT_IMAGE),
                                 Path(data_dir), out, args, gpus=opts.get("gpus", "all"))
    else:
        python = sys.executable if launcher == "local" else os.environ["FRAMEBENCH_HABITAT_PYTHON"]
        args = driver_args(planner, str(framed.resolve()), str((out / results_subdir).resolve()), opts)
        args += ["--partnr-root", str(opts.get("partnr_root") or os.environ.get("PARTNR_ROOT", "."))]
        command = [python, "-m", "partnr_adapters.driver", *args]
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return command, env, framed


def check_planner(planner: str) -> None:
    if not planner.startswith("openai:") and planner not in ("heuristic", "oracle"):
        raise UserError(
            f"--planner {planner!r}: the habitat simulator plans through an OpenAI-compatible endpoint "
            "(openai:MODEL with --base-url, e.g. a local vLLM server) or PARTNR's heuristic planner"
        )


def run_habitat(planner: str, episodes: Path, out: Path, **opts: Any):
    """Run ``planner`` on every framed episode in Habitat, then ingest into ``out``.

    Options: base_url, baseline, batch_size, partial_obs, replanning_threshold, max_tokens, limit,
    retry_crashed, overrides (hydra), purposes (file), data_dir, image, gpus, partnr_root.
    Returns the ingestion report (crashed/missing episodes are listed, never dropped).
    """
    from partnr_adapters.ingest import ingest

    episodes, out = Path(episodes), Path(out)
    launcher = launcher_here(opts)  # fail fast, before writing anything
    check_planner(planner)
    out.mkdir(parents=True, exist_ok=True)
    framed = framed_episode_file(episodes, out, opts.get("purposes"))
    results = out / RESULTS_SUBDIR
    command, env, framed = driver_command(launcher, planner, framed, out, RESULTS_SUBDIR, opts)
    code = subprocess.call(command, env=env)
    if code != 0:
        raise UserError(f"the PARTNR driver exited with status {code} ({launcher}); see its output above and {DOCS}")
    report = ingest(results, framed, out, model=planner)
    for line in report.lines():  # crashed / missing episodes are reported, never silently dropped
        print(line)
    return report
