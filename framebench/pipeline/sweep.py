"""``framebench sweep PLAN.toml``: every model x dataset x condition and planner x episode file as
one run folder, executed here (or on Ray), then one ``framebench score`` report over all runs.

The plan's format, every field with its type and default, is in docs/sweeps.md; in short (paths
relative to the plan file)::

    out = "runs/sweep"            # one run folder per combination below it, report in out/report
    executor = "local"            # local (default) | ray; ray_address alone means ray
    ray_address = "auto"          # optional; with executor ray and no address: a local Ray instance
    workers = 4                   # optional, ray: default as many as the cluster's resources allow

    [text]
    models = ["baseline:random", "hf:/models/Llama-3.1-8B-Instruct"]
    datasets = ["datasets/demo/framingqa", "datasets/demo/omit"]
    conditions = ["M0", "M2"]     # datasets with conditions (OMIT): one run per condition
    limit = 200                   # optional, per run
    batch_size = "auto"           # optional

    [embodied]
    planners = ["oracle"]
    episodes = ["datasets/demo/robotics/episodes.json.gz"]
    simulators = ["symbolic"]     # optional, any registered simulator engine; default: symbolic
    replan_cap = 25               # optional
    [embodied.simulator_options]  # optional: the simulators' own options (each checks its own)
    partnr_compat = true

Runs go one after the other (through one Ray connection on Ray); each run's units spread over
every worker the executor offers. A run folder that is already complete is served from its
store, so re-running a sweep resumes it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.errors import UserError
from framebench.registry import DEFAULT_ANSWER_MODE
from framebench.simulation import DEFAULT_SIMULATOR

TOP_KEYS = {"out", "executor", "ray_address", "workers", "text", "embodied"}
TEXT_KEYS = {"models", "datasets", "conditions", "answers", "limit", "batch_size", "concurrency", "base_url"}
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
    answer: str = ""  # text: the answer mode

    def label(self) -> str:
        return (f"{self.spec} x {self.data.name}" + (f" x {self.condition}" if self.condition else "")
                + (f" [{self.answer}]" if self.answer and self.answer != DEFAULT_ANSWER_MODE else "")
                + (f" on {self.simulator}" if self.simulator and self.simulator != DEFAULT_SIMULATOR else ""))


@dataclass
class Plan:
    out: Path
    executor: str | None  # None: not given (``resolve_executor``)
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


def _options(path: Path, table: dict[str, Any], where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The run options of ``keys`` the table sets, each checked against its type."""
    options = {}
    for key in keys:
        if key not in table:
            continue
        value = table[key]
        if key == "base_url":
            ok, expected = isinstance(value, str) and bool(value), "a URL (a string)"
        elif key == "batch_size":
            ok = value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value > 0)
            expected = "a positive integer or \"auto\""
        else:
            ok, expected = isinstance(value, int) and not isinstance(value, bool) and value > 0, "a positive integer"
        if not ok:
            raise UserError(f"{path}: {where}.{key}: expected {expected}, got {value!r}")
        options[key] = value
    return options


def _answer_modes(path: Path, text: dict[str, Any]) -> list[str]:
    from framebench.registry import answer_modes

    chosen = _strings(path, text, "answers", "text", required=False) or [DEFAULT_ANSWER_MODE]
    known = answer_modes()
    for mode in chosen:
        if mode not in known:
            raise UserError(f"{path}: text.answers: unknown answer mode {mode!r} (known: {', '.join(known)})")
    return chosen


def _text_runs(path: Path, base: Path, out: Path, text: dict[str, Any]) -> list[SweepRun]:
    """models x datasets x conditions (where the dataset's suite has them) x answer modes."""
    options = _options(path, text, "text", ("limit", "batch_size", "concurrency", "base_url"))
    chosen = _strings(path, text, "conditions", "text", required=False)
    answers = _answer_modes(path, text)
    runs = []
    for model in _strings(path, text, "models", "text"):
        for entry in _strings(path, text, "datasets", "text"):
            data = _existing(path, base, entry, "text.datasets")
            offered = _conditions_of(data)  # default: the first (the baseline)
            unknown = [c for c in chosen if offered and c not in offered]
            if unknown:
                raise UserError(f"{path}: text.conditions: {entry!r} offers no condition {unknown[0]!r} "
                                f"(it offers {', '.join(offered)})")
            for condition in ((chosen or offered[:1]) if offered else [""]):
                for answer in answers:
                    mode = answer if answer != DEFAULT_ANSWER_MODE else ""
                    name = "__".join(filter(None, (_slug(model), _slug(entry), condition, mode)))
                    runs.append(SweepRun("text", model, data, out / "text" / name, condition, options,
                                         answer=answer))
    return runs


def _existing(path: Path, base: Path, entry: str, where: str) -> Path:
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
    executor = raw.get("executor")
    if executor is not None and executor not in ("local", "ray"):
        raise UserError(f"{path}: executor: expected local or ray, got {executor!r}")
    address = raw.get("ray_address")
    if address is not None and (not isinstance(address, str) or not address):
        raise UserError(f"{path}: ray_address: expected HOST:PORT or 'auto' (a string)")
    workers = raw.get("workers")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise UserError(f"{path}: workers: expected a positive integer")
    runs: list[SweepRun] = []
    if "text" in raw:
        runs += _text_runs(path, base, out, _check_keys(path, raw["text"], TEXT_KEYS, "text"))
    if "embodied" in raw:
        emb = _check_keys(path, raw["embodied"], EMBODIED_KEYS, "embodied")
        options = _options(path, emb, "embodied", ("replan_cap", "max_new_tokens", "limit"))
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
    return Plan(out, executor, address, workers, runs)


def resolve_executor(plan: Plan, path: Path, executor: str | None, ray_address: str | None,
                     workers: int | None) -> None:
    """Apply the command line's --executor, --ray-address and --ray-workers over the plan's. The
    executor is local unless the plan or the command line asks for Ray (executor "ray", or a Ray
    address); an address with executor local is a contradiction."""
    plan.executor = executor or plan.executor
    plan.ray_address = ray_address or plan.ray_address
    plan.workers = workers or plan.workers
    if plan.executor is None:
        plan.executor = "ray" if plan.ray_address else "local"
    if plan.executor == "local" and (plan.ray_address or plan.workers):
        what = f"a Ray address ({plan.ray_address!r})" if plan.ray_address else f"workers = {plan.workers}"
        raise UserError(f"{path}: {what} with executor local: it applies to executor ray (drop it, or use "
                        "executor ray)")


def execute(run: SweepRun, executor: str, ray_address: str | None, workers: int | None, progress: bool,
            force: bool = False) -> None:
    """One run of the plan, through the text pipeline or its simulator engine (what
    ``framebench text`` and ``framebench embodied --simulator NAME`` run)."""
    from framebench.pipeline.text import run_text
    from framebench.registry import build_engine

    opts = run.options
    cluster = dict(executor=executor, ray_address=ray_address, ray_workers=workers)
    if run.kind == "text":
        run_text(run.spec, run.data, run.out, limit=opts.get("limit"), batch_size=opts.get("batch_size", "auto"),
                 concurrency=opts.get("concurrency", 8), base_url=opts.get("base_url"),
                 conditions=run.condition or None, answer=run.answer or DEFAULT_ANSWER_MODE, progress=progress,
                 force=force, **cluster)
        return
    from framebench.simulation import SimulationSettings

    sim = build_engine(run.simulator or DEFAULT_SIMULATOR, "simulator")
    defaults = SimulationSettings()
    settings = SimulationSettings(replan_cap=opts.get("replan_cap", defaults.replan_cap),
                                  max_new_tokens=opts.get("max_new_tokens", defaults.max_new_tokens),
                                  limit=opts.get("limit"), options=dict(opts.get("simulator_options") or {}))
    sim.run(run.spec, run.data, run.out, settings, progress=progress, force=force, **cluster)


def run_sweep(plan: Plan, progress: bool = True, echo=print, force: bool = False) -> list[Path]:
    """Execute every run of the plan (``plan.executor`` resolved); their folders, in plan order.
    ``force``: replace a run folder that holds a different run."""
    from contextlib import nullcontext

    if plan.executor == "ray":
        from framebench.executors.cluster import ray_session

        session: Any = ray_session(plan.ray_address, num_cpus=plan.workers)
    else:
        session = nullcontext()
    executor = plan.executor or "local"
    with session:
        for number, run in enumerate(plan.runs, start=1):
            echo(f"run {number}/{len(plan.runs)}: {run.label()} -> {run.out}")
            execute(run, executor, plan.ray_address, plan.workers, progress, force)
    return [r.out for r in plan.runs]
