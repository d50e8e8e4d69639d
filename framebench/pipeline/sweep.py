"""``framebench sweep PLAN.toml``: every model x dataset x condition and planner x episode file as
one run folder, executed on Ray (or locally), then one ``framebench score`` report over all runs.

Plan (paths relative to the plan file)::

    out = "runs/sweep"            # one run folder per combination below it, report in out/report
    executor = "ray"              # ray (default) | local
    ray_address = "auto"          # optional; default: start a local Ray instance for the sweep
    workers = 4                   # optional; default: as many as the cluster's resources allow

    [text]
    models = ["baseline:random", "hf:/models/Llama-3.1-8B-Instruct"]
    datasets = ["demo:framingqa", "demo:omit"]
    conditions = ["M0", "M2"]     # OMIT datasets: one run per condition (FramingQA ignores it)
    limit = 200                   # optional, per run
    batch_size = "auto"           # optional

    [embodied]
    planners = ["oracle"]
    episodes = ["demo:robotics/episodes.json.gz"]
    simulators = ["symbolic"]     # optional, any registered simulator engine; default: symbolic
    replan_cap = 25               # optional
    [embodied.simulator_options]  # optional: the simulators' own options (each checks its own)
    partnr_compat = true

Runs go one after the other through one Ray connection; each run's units spread over every worker
the cluster offers. A run folder that is already complete is served from its store, so re-running
a sweep resumes it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.simulation import DEFAULT_SIMULATOR

TOP_KEYS = {"out", "executor", "ray_address", "workers", "text", "embodied"}
TEXT_KEYS = {"models", "datasets", "conditions", "limit", "batch_size", "concurrency", "base_url"}
EMBODIED_KEYS = {"planners", "episodes", "simulators", "simulator_options", "replan_cap", "max_new_tokens", "limit"}


@dataclass
class SweepRun:
    kind: str  # text | embodied
    spec: str  # model or planner
    data: Path  # dataset folder or episode file
    out: Path
    condition: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    simulator: str = ""  # embodied: the simulator engine that runs it

    def label(self) -> str:
        return (f"{self.spec} x {self.data.name}" + (f" x {self.condition}" if self.condition else "")
                + (f" on {self.simulator}" if self.simulator and self.simulator != DEFAULT_SIMULATOR else ""))


@dataclass
class Plan:
    out: Path
    executor: str
    ray_address: str | None
    workers: int | None
    runs: list[SweepRun]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text.rstrip("/").rsplit("/", 1)[-1]).strip("-").lower()[:40] or "x"


def _strings(path: Path, table: dict[str, Any], key: str, where: str, required: bool = True) -> list[str]:
    value = table.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UserError(f"{path}: {where}.{key}: expected a non-empty list of strings")
    if len(set(value)) != len(value):
        raise UserError(f"{path}: {where}.{key}: lists an entry twice")
    return value


def _check_keys(path: Path, table: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise UserError(f"{path}: {where}: expected a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise UserError(f"{path}: {where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
    return table


def _existing(path: Path, base: Path, entry: str, where: str) -> Path:
    from framebench.paths import DEMO_SCHEME, data_path

    if entry.startswith(DEMO_SCHEME):
        try:
            return data_path(entry)
        except UserError as exc:
            raise UserError(f"{path}: {where}: {exc}") from None
    target = (base / entry).resolve()
    if not target.exists():
        raise UserError(f"{path}: {where}: {entry!r} does not exist (paths are relative to the plan file)")
    return target


def _conditions_of(dataset: Path) -> list[str]:
    """The conditions the dataset's suite offers (``Suite.conditions_listing``; OMIT: M0, M1, ...),
    empty for a suite without conditions."""
    from framebench.items import ITEMS_FILE, read_items
    from framebench.registry import suite

    items = read_items(dataset / ITEMS_FILE if dataset.is_dir() else dataset)
    return [name for name, _ in suite(items[0]["suite"]).conditions_listing()] if items else []


def _simulator_engine(path: Path, name: str) -> None:
    """A plan's simulator names a registered simulator engine (else one line naming the field)."""
    from framebench.registry import engine_for

    try:
        engine_for(name, "simulator")
    except UserError as exc:
        raise UserError(f"{path}: embodied.simulators: {exc}") from None


def read_plan(path: Path) -> Plan:
    """Parse and validate a sweep plan; every mistake is one line naming the file and field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such plan file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    _check_keys(path, raw, TOP_KEYS, "plan")
    base = path.resolve().parent
    if not isinstance(raw.get("out"), str):
        raise UserError(f"{path}: out: expected the sweep's output folder (a string)")
    out = (base / raw["out"]).resolve()
    executor = raw.get("executor", "ray")
    if executor not in ("local", "ray"):
        raise UserError(f"{path}: executor: expected local or ray, got {executor!r}")
    workers = raw.get("workers")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise UserError(f"{path}: workers: expected a positive integer")
    runs: list[SweepRun] = []
    if "text" in raw:
        text = _check_keys(path, raw["text"], TEXT_KEYS, "text")
        options = {k: text[k] for k in ("limit", "batch_size", "concurrency", "base_url") if k in text}
        chosen = _strings(path, text, "conditions", "text", required=False)
        for model in _strings(path, text, "models", "text"):
            for entry in _strings(path, text, "datasets", "text"):
                data = _existing(path, base, entry, "text.datasets")
                offered = _conditions_of(data)  # default: the first (the baseline)
                for condition in ((chosen or offered[:1]) if offered else [""]):
                    name = "__".join(filter(None, (_slug(model), _slug(entry), condition)))
                    runs.append(SweepRun("text", model, data, out / "text" / name, condition, options))
    if "embodied" in raw:
        emb = _check_keys(path, raw["embodied"], EMBODIED_KEYS, "embodied")
        options = {k: emb[k] for k in ("replan_cap", "max_new_tokens", "limit") if k in emb}
        sim_options = emb.get("simulator_options", {})
        if not isinstance(sim_options, dict):
            raise UserError(f"{path}: embodied.simulator_options: expected a table")
        options["simulator_options"] = sim_options
        simulators = _strings(path, emb, "simulators", "embodied", required=False) or [DEFAULT_SIMULATOR]
        for simulator in simulators:
            _simulator_engine(path, simulator)
        for planner in _strings(path, emb, "planners", "embodied"):
            for entry in _strings(path, emb, "episodes", "embodied"):
                episodes = _existing(path, base, entry, "embodied.episodes")
                for simulator in simulators:
                    name = "__".join([_slug(planner), _slug(entry.removesuffix('.gz').removesuffix('.json')),
                                      *([_slug(simulator)] if simulator != DEFAULT_SIMULATOR else [])])
                    runs.append(SweepRun("embodied", planner, episodes, out / "embodied" / name, "", options,
                                         simulator))
    if not runs:
        raise UserError(f"{path}: the plan has no [text] or [embodied] runs")
    names = [r.out for r in runs]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: two runs map to the same folder; give datasets/models distinct names")
    return Plan(out, executor, raw.get("ray_address"), workers, runs)


def execute(run: SweepRun, executor: str, ray_address: str | None, workers: int | None, progress: bool) -> None:
    """One run of the plan, through the text pipeline or its simulator engine (what
    ``framebench text`` and ``framebench embodied --simulator NAME`` run)."""
    from framebench.pipeline.text import run_text
    from framebench.registry import build_engine

    opts = run.options
    cluster = dict(executor=executor, ray_address=ray_address, ray_workers=workers)
    if run.kind == "text":
        run_text(run.spec, run.data, run.out, limit=opts.get("limit"), batch_size=opts.get("batch_size", "auto"),
                 concurrency=opts.get("concurrency", 8), base_url=opts.get("base_url"),
                 conditions=run.condition or None, progress=progress, **cluster)
        return
    from framebench.simulation import SimulationSettings

    sim = build_engine(run.simulator or DEFAULT_SIMULATOR, "simulator")
    defaults = SimulationSettings()
    settings = SimulationSettings(replan_cap=opts.get("replan_cap", defaults.replan_cap),
                                  max_new_tokens=opts.get("max_new_tokens", defaults.max_new_tokens),
                                  limit=opts.get("limit"), options=dict(opts.get("simulator_options") or {}))
    sim.run(run.spec, run.data, run.out, settings, progress=progress, **cluster)


def run_sweep(plan: Plan, report: Any, progress: bool = True, echo=print) -> list[Path]:
    """Execute every run of the plan, then score them all into ``plan.out / "report"`` with
    ``report(run_dirs, out) -> files written`` (the caller's: ``framebench.api`` sits above)."""
    from contextlib import nullcontext


    if plan.executor == "ray":
        from framebench.executors.cluster import ray_session

        session: Any = ray_session(plan.ray_address, num_cpus=plan.workers)
    else:
        session = nullcontext()
    with session:
        for number, run in enumerate(plan.runs, start=1):
            echo(f"run {number}/{len(plan.runs)}: {run.label()} -> {run.out}")
            execute(run, plan.executor, plan.ray_address, plan.workers, progress)
    return report([r.out for r in plan.runs], plan.out / "report")
