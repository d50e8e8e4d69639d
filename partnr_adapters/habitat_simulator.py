"""The habitat simulator (``framebench embodied --simulator habitat``): run PARTNR in its container
(or in place) and ingest.

Where PARTNR's in-container runner (``framebench.partnr_adapters.in_container``) runs, in order of
preference:

1. here, when ``habitat_llm`` is importable in this interpreter;
2. the interpreter named by ``FRAMEBENCH_HABITAT_PYTHON`` (e.g. the container's Python 3.9 when
   framebench itself runs next to it);
3. the Habitat image through ``docker run`` (``FRAMEBENCH_HABITAT_IMAGE``, default
   ``framebench-habitat:latest``) with the PARTNR data folder mounted (``data_dir`` option or
   ``FRAMEBENCH_PARTNR_DATA``).

Without any of them it stops with one line naming what is missing and ``docker/README.md``.

The runner's batches are units of the run pipeline (``framebench.pipeline``): run here one after
the other, or with ``--executor ray`` on hosts offering the ``habitat`` resource. Each batch runs in
a scratch folder on its host and returns its outputs through the executor; this process writes
them into ``RUN_DIR/partnr-results/`` as they arrive, merges the batches' manifests and ingests.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.errors import UserError
from framebench.executors.base import WorkerMeta

if TYPE_CHECKING:
    from framebench.pipeline.driver import Selected

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
    from framebench.partnr_adapters.framed_episodes import (
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


def variants_of_first_episodes(framed_ids: list[str], limit: int | None) -> int:
    """How many of the framed file's variants (each episode's framings, episode by episode) belong
    to its first ``limit`` episodes: ``--limit`` counts episodes, as for every other runner."""
    from framebench.partnr_adapters.framed_episodes import parse_framed_id

    if limit is None:
        return len(framed_ids)
    episodes: set[str] = set()
    for n, framed in enumerate(framed_ids):
        episodes.add(parse_framed_id(framed)[0])
        if len(episodes) > limit:
            return n
    return len(framed_ids)


def runner_args(planner: str, episodes: str, results: str, opts: dict[str, Any]) -> list[str]:
    """Arguments of ``python -m partnr_adapters.in_container run`` for these options."""
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
    """``docker run`` for the in-container runner: GPU with the graphics capability (EGL), data and run folder mounted.

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
        image, "python", "-m", "partnr_adapters.in_container", *args,
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


def runner_command(launcher: str, planner: str, framed: Path, out: Path, results_subdir: str,
                   opts: dict[str, Any]) -> tuple[list[str], dict[str, str], Path]:
    """The in-container runner's command line and environment for ``launcher`` (results go to ``out/results_subdir``),
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
        args = runner_args(planner, f"{CONTAINER_WORK}/{framed.name}", f"{CONTAINER_WORK}/{results_subdir}", opts)
        command = docker_command(opts.get("image") or os.environ.get("FRAMEBENCH_HABITAT_IMAGE", DEFAULT_IMAGE),
                                 Path(data_dir), out, args, gpus=opts.get("gpus", "all"))
    else:
        python = sys.executable if launcher == "local" else os.environ["FRAMEBENCH_HABITAT_PYTHON"]
        args = runner_args(planner, str(framed.resolve()), str((out / results_subdir).resolve()), opts)
        args += ["--partnr-root", str(opts.get("partnr_root") or os.environ.get("PARTNR_ROOT", "."))]
        command = [python, "-m", "partnr_adapters.in_container", *args]
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return command, env, framed


def check_planner(planner: str) -> None:
    if not planner.startswith("openai:") and planner not in ("heuristic", "oracle"):
        raise UserError(
            f"--planner {planner!r}: the habitat simulator plans through an OpenAI-compatible endpoint "
            "(openai:MODEL with --base-url, e.g. a local vLLM server) or PARTNR's heuristic planner"
        )


PASSED_ENV = ("FRAMEBENCH_HABITAT_PYTHON", "FRAMEBENCH_HABITAT_IMAGE", "FRAMEBENCH_PARTNR_DATA", "PARTNR_ROOT",
              "FRAMEBENCH_LLM_BASE_URL")  # settings for Ray workers, never secrets: API keys come from each host's env
SCRATCH_RESULTS = "results"


class HabitatWorker:
    """Runs the in-container runner's batches (pipeline units) on one host, each in a scratch folder of its own: the
    framed episode file arrives as bytes, the batch's PARTNR outputs leave as the unit's chunk."""

    def __init__(self, planner: str, framed_name: str, framed: bytes, opts: dict[str, Any]):
        self.planner, self.framed_name, self.framed, self.opts = planner, framed_name, framed, opts

    def meta(self) -> WorkerMeta:
        # the planner runs in the container: its spec keys its results, with the options that change them
        return WorkerMeta(self.planner, self.planner, settings=keyed_settings(self.opts))

    def run(self, unit: Any):
        import json
        import tempfile

        from framebench.executors import Chunk
        from framebench.partnr_adapters.ingest import MANIFEST_FILE

        indices = [index for index, _, _ in unit.payload]
        opts = dict(self.opts, indices=",".join(map(str, indices)), batch_size=len(indices))
        opts.pop("limit", None)
        scratch = Path(tempfile.mkdtemp(prefix="framebench-partnr-"))
        try:
            framed = scratch / self.framed_name
            framed.write_bytes(self.framed)
            launcher = launcher_here(opts)
            command, env, _ = runner_command(launcher, self.planner, framed, scratch, SCRATCH_RESULTS, opts)
            code = subprocess.call(command, env=env)
            if code != 0:
                raise UserError(f"PARTNR's in-container runner exited with status {code} ({launcher}) on batch "
                                f"{unit.index}; see its output above and {DOCS}")
            chunk = Chunk(unit.index, done=len(indices))
            results = scratch / SCRATCH_RESULTS
            for path in sorted(p for p in results.rglob("*") if p.is_file()):
                relative = path.relative_to(results).as_posix()
                if relative == MANIFEST_FILE:
                    chunk.info["manifest"] = json.loads(path.read_text(encoding="utf-8"))
                elif not relative.startswith("hydra/"):
                    chunk.files[relative] = path.read_bytes()
            chunk.entries = self.entries(unit.payload, chunk.files)
            yield chunk
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


    def entries(self, payload: list[tuple[int, str, str]], files: dict[str, bytes]) -> list[tuple[str, str, Any]]:
        """A store entry per variant of the batch that left a stats file (one without is not
        finished: a re-run runs it again)."""
        found = []
        for index, episode_id, key in payload:
            content = files.get(stats_file(self.framed_name, episode_id))
            if content is not None:
                found.append((key, episode_id, {"index": index, "finished": stats_finished(content)}))
        return found


def stats_file(framed_name: str, episode_id: str) -> str:
    """A variant's stats file, relative to the results folder (``in_container.stats_dir``)."""
    return f"{framed_name}/stats/{episode_id}.json"


def stats_finished(content: bytes) -> bool:
    """Whether a stats file records a finished episode (PARTNR's ``success``: it did not crash;
    unreadable: a crash), as ``in_container.pending_indices`` reads it."""
    import json

    try:
        return bool(json.loads(content).get("success", False))
    except (ValueError, AttributeError):
        return False


def merge_manifest(manifest: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """One batch's manifest joined into the run's (the first run id and start time kept)."""
    batches = manifest.get("batches", []) + part.get("batches", [])
    return {**part, **{k: v for k, v in manifest.items() if k in ("run_id", "started")}, "batches": batches}


def run_habitat(planner: str, episodes: Path, out: Path, *, executor: str = "local",
                ray_address: str | None = None, workers: int | None = None, progress: bool = True,
                force: bool = False, **opts: Any):
    """Run ``planner`` on every framed episode in Habitat, then ingest into ``out``.

    The runner's batches (``batch_size`` framings) are pipeline units: here, one after the other,
    or on Ray hosts offering the ``habitat`` resource (``executor="ray"``), which need no view of
    ``out``. Each finished variant is stored in the run's result store (``HabitatRun``), so a
    re-run runs only the variants the store lacks. Options: base_url, baseline, batch_size,
    partial_obs, replanning_threshold, max_tokens, limit, retry_crashed, overrides (hydra),
    purposes (file), data_dir, image, gpus, partnr_root. Returns the ingestion report
    (crashed/missing episodes are listed, never dropped).
    """
    from framebench.pipeline.driver import Execution, drive

    front = HabitatRun(planner, Path(episodes), Path(out), executor, workers, opts)
    drive(front, Execution(executor, ray_address, workers, progress, force, {"habitat": workers or 1}))
    return front.report


# The options that change a variant's result (part of its store key); the others say where and how
# fast it runs (base_url, batch_size, data_dir, image, gpus, partnr_root, ...).
KEYED_OPTIONS = ("baseline", "partial_obs", "replanning_threshold", "max_tokens", "overrides")


def keyed_settings(opts: Mapping[str, Any]) -> dict[str, Any]:
    """What besides the planner keys a variant's result."""
    return {"simulator": "habitat", **{k: opts.get(k) for k in KEYED_OPTIONS}}


class HabitatRun:
    """The Habitat simulator's front end of the driver: framings of a framed episode file, units
    of runner batches, PARTNR's outputs ingested as records."""

    producer = simulator = "habitat"

    def __init__(self, planner: str, episodes: Path, out: Path, executor: str, workers: int | None,
                 opts: dict[str, Any]):
        self.planner, self.episodes, self.out, self.opts = planner, episodes, out, opts
        self.executor, self.workers = executor, workers

    def select(self) -> Selected:
        """Check the planner and options and read the episodes; nothing is written yet."""
        from framebench.partnr_adapters.framed_episodes import load_episode_file
        from framebench.pipeline.driver import Selected
        from framebench.run_folder import RunIdentity
        from framebench.store import sha256, stable_json

        check_planner(self.planner)
        self.size = int(self.opts.get("batch_size") or 5)
        if self.size < 1:
            raise UserError("--batch-size must be at least 1")
        episodes = load_episode_file(self.episodes)
        selection = {"limit": self.opts.get("limit"), **{k: self.opts.get(k) for k in KEYED_OPTIONS}}
        # the episodes' content, not the file's bytes: a gzip header carries the time it was written
        return Selected(RunIdentity(self.planner, sha256(stable_json(episodes)), selection))

    def recipe(self) -> Any:
        """Frame the episodes into the run folder (after the reuse check) and say how to build workers."""
        from framebench.executors import Recipe
        from partnr_adapters.in_container import read_episode_ids

        if self.executor == "local":
            launcher_here(self.opts)  # fail fast, before writing anything
        self.out.mkdir(parents=True, exist_ok=True)
        self.framed = framed_episode_file(self.episodes, self.out, self.opts.get("purposes"))
        self.results = self.out / RESULTS_SUBDIR
        self.ids = read_episode_ids(str(self.framed))
        self.total = variants_of_first_episodes(self.ids, self.opts.get("limit"))
        self.results.mkdir(parents=True, exist_ok=True)
        env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
        return Recipe(HabitatWorker, (self.planner, self.framed.name, self.framed.read_bytes(), self.opts),
                      device="cpu", resources={"habitat": 1} if self.executor == "ray" else {}, env=env,
                      label=f"{self.planner} on habitat hosts")

    def keys(self, meta: WorkerMeta) -> list[str]:
        """Each variant's store key: planner, variant id, its framed episode, the keyed options."""
        from framebench.partnr_adapters.framed_episodes import load_episode_file
        from framebench.store import result_key

        framed = load_episode_file(self.framed)["episodes"]
        self.variant_keys = [result_key(meta.fingerprint, str(ep["episode_id"]), ep, meta.settings)
                             for ep in framed[:self.total]]
        return self.variant_keys

    def plan(self, meta: WorkerMeta, stored: Mapping[str, Any], lookup: Any, workers: int) -> Any:
        """Adopt the stats files of a folder written before the store held them, plan the rest as
        runner batches."""
        import json

        from framebench.executors import Unit
        from framebench.partnr_adapters.ingest import MANIFEST_FILE
        from framebench.pipeline.driver import UnitPlan

        keys, ids = self.variant_keys, self.ids
        on_disk = {i: self.results / stats_file(self.framed.name, ids[i]) for i in range(self.total)}
        adopted = [(keys[i], ids[i], {"index": i, "finished": stats_finished(on_disk[i].read_bytes())})
                   for i in range(self.total) if keys[i] not in stored and on_disk[i].is_file()]
        stored = {**stored, **{k: v for k, _, v in adopted}}
        retry = bool(self.opts.get("retry_crashed"))
        # stored and its stats file there (a driver killed between the two runs it again), not a
        # crash to retry (the stats file on disk is the latest attempt's)
        todo = [i for i in range(self.total) if keys[i] not in stored or not on_disk[i].is_file()
                or (retry and not stats_finished(on_disk[i].read_bytes()))]
        batches = [todo[i:i + self.size] for i in range(0, len(todo), self.size)]
        units = [Unit(n, len(b), [(i, ids[i], keys[i]) for i in b]) for n, b in enumerate(batches)]
        manifest_path = self.results / MANIFEST_FILE
        self.manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
        return UnitPlan(units, f"{self.planner} on habitat hosts", len(todo), unit="framings", files=self.results,
                    progress=self.executor != "local", adopted=adopted)

    def take(self, chunk: Any) -> tuple[int, dict[str, Any]]:
        from framebench.partnr_adapters.ingest import MANIFEST_FILE
        from framebench.pipeline import write_side_file

        if "manifest" in chunk.info:
            self.manifest = merge_manifest(self.manifest, chunk.info["manifest"])
            write_side_file(self.results, MANIFEST_FILE, self.manifest)
        return chunk.done, {}

    def rows(self, meta: WorkerMeta, run_id: str, results: Mapping[str, Any]) -> Any:
        """PARTNR's outputs ingested (crashed and missing episodes are reported, never dropped)."""
        from framebench.partnr_adapters.ingest import ingested
        from framebench.pipeline.driver import Rows

        made = ingested(self.results, self.framed, model=self.planner, run_id=run_id, variants=self.total)
        for line in made.report.lines():
            print(line)
        self.report = made.report
        return Rows(made.rows, made.prompts, made.run.decoding, dict(made.run.extra), made.files)

    def close(self) -> None:
        """Nothing to release."""
