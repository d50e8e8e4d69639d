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
    episodes = ["demo:robotics/episodes.json.gz"]
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from framebench.bounds import (
    BASE_URL,
    BATCH_SIZE,
    CONCURRENCY,
    LIMIT,
    MAX_NEW_TOKENS,
    REPLAN_CAP,
    WORKERS,
    Rule,
    shown,
)
from framebench.errors import UserError
from framebench.registry import DEFAULT_ANSWER_MODE
from framebench.simulation import DEFAULT_SIMULATOR

T = TypeVar("T")

# each plan field's rule is the rule of the command-line option it stands for (framebench.bounds)
TOP_FIELDS: dict[str, Rule] = {"workers": WORKERS}
TEXT_FIELDS: dict[str, Rule] = {"limit": LIMIT, "batch_size": BATCH_SIZE, "concurrency": CONCURRENCY,
                                "base_url": BASE_URL}
EMBODIED_FIELDS: dict[str, Rule] = {"replan_cap": REPLAN_CAP, "max_new_tokens": MAX_NEW_TOKENS, "limit": LIMIT}
TOP_KEYS = {"out", "executor", "ray_address", "text", "embodied", *TOP_FIELDS}
TEXT_KEYS = {"models", "datasets", "conditions", "answers", *TEXT_FIELDS}
EMBODIED_KEYS = {"planners", "episodes", "simulators", "simulator_options", *EMBODIED_FIELDS}


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
    from framebench.paths import DEMO_SCHEME

    name = text.removeprefix(DEMO_SCHEME).rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()[:40] or "x"


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
        raise UserError(f"{path}: {where}: unknown field {shown(unknown[0])} (known: {', '.join(sorted(allowed))})")
    return table


def _settings(path: Path, table: dict[str, Any], fields: dict[str, Rule], where: str) -> dict[str, Any]:
    """The table's settings, each checked by the rule of the option it stands for."""
    return {key: rule.check(table[key], f"{path}: {where}{key} (as {rule.flag})")
            for key, rule in fields.items() if key in table}


def _existing(path: Path, base: Path, entry: str, where: str) -> Path:
    from framebench.paths import DEMO_SCHEME, data_path

    if entry.startswith(DEMO_SCHEME):
        try:
            return data_path(entry)
        except UserError as exc:
            raise UserError(f"{path}: {where}: {exc}") from None
    target = (base / entry).resolve()
    if not target.exists():
        raise UserError(f"{path}: {where}: {shown(entry)} does not exist (paths are relative to the plan file)")
    return target


def _field(path: Path, where: str, check: Callable[[], T]) -> T:
    """``check()``, its one-line refusal prefixed with the plan file and the field."""
    try:
        return check()
    except UserError as exc:
        raise UserError(f"{path}: {where}: {exc}") from None


def _conditions_of(dataset: Path) -> list[str]:
    """The conditions the dataset's suite offers (``SuiteItems.conditions_listing``; OMIT: M0, M1, ...),
    empty for a suite without conditions."""
    from framebench.items import ITEMS_FILE, read_items
    from framebench.registry import suite

    items = read_items(dataset / ITEMS_FILE if dataset.is_dir() else dataset)
    return [name for name, _ in suite(items[0]["suite"]).items.conditions_listing()] if items else []


def _read_toml(path: Path) -> dict[str, Any]:
    from framebench.jsonl import read_text_strict

    try:
        return tomllib.loads(read_text_strict(path))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None


def read_plan(path: Path) -> Plan:
    """Parse and validate a sweep plan whole: every field, model, planner, simulator, condition and
    path is checked before anything runs; every mistake is one line naming the file and field."""
    from framebench.executors import EXECUTORS
    from framebench.paths import check_out_folder

    raw = _check_keys(path, _read_toml(path), TOP_KEYS, "plan")
    base = path.resolve().parent
    if not isinstance(raw.get("out"), str) or not raw["out"].strip():
        raise UserError(f"{path}: out: expected the sweep's output folder (a string)")
    out = _field(path, "out", lambda: check_out_folder((base / raw["out"]).resolve(), "folder"))
    executor = raw.get("executor")
    if executor is not None and executor not in EXECUTORS:
        raise UserError(f"{path}: executor: expected {' or '.join(EXECUTORS)}, got {shown(executor)}")
    if raw.get("ray_address") is not None and not isinstance(raw["ray_address"], str):
        raise UserError(f"{path}: ray_address: expected HOST:PORT or 'auto' (a string), got {shown(raw['ray_address'])}")
    workers = _settings(path, raw, TOP_FIELDS, "").get("workers")
    runs = [*(_text_runs(path, base, out, raw["text"]) if "text" in raw else []),
            *(_embodied_runs(path, base, out, raw["embodied"]) if "embodied" in raw else [])]
    if not runs:
        raise UserError(f"{path}: the plan has no [text] or [embodied] runs")
    names = [r.out for r in runs]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: two runs map to the same folder; give datasets/models distinct names")
    return Plan(out, executor, raw.get("ray_address"), workers, runs)


def _answer_modes(path: Path, text: dict[str, Any]) -> list[str]:
    from framebench.registry import answer_modes

    chosen = _strings(path, text, "answers", "text", required=False) or [DEFAULT_ANSWER_MODE]
    known = answer_modes()
    for mode in chosen:
        if mode not in known:
            raise UserError(f"{path}: text.answers: unknown answer mode {mode!r} (known: {', '.join(known)})")
    return chosen


def _text_runs(path: Path, base: Path, out: Path, table: Any) -> list[SweepRun]:
    """The [text] table's runs: each model resolved with the plan's options, each dataset read
    and each chosen condition offered by the datasets that take conditions."""
    from framebench.pipeline.text import model_options
    from framebench.registry import check_model

    text = _check_keys(path, table, TEXT_KEYS, "text")
    options = _settings(path, text, TEXT_FIELDS, "text.")
    chosen = _strings(path, text, "conditions", "text", required=False)
    answers = _answer_modes(path, text)
    models = _strings(path, text, "models", "text")
    for model in models:
        _field(path, "text.models", lambda m=model: check_model(m, model_options(m, None, **options)))
    runs: list[SweepRun] = []
    for entry in _strings(path, text, "datasets", "text"):
        data = _existing(path, base, entry, "text.datasets")
        offered = _field(path, "text.datasets", lambda d=data: _conditions_of(d))  # default: the first
        for condition in chosen if offered else ():
            if condition not in offered:
                raise UserError(f"{path}: text.conditions: unknown condition {shown(condition)} "
                                f"({entry} offers {', '.join(offered)})")
        for model in models:
            for condition in ((chosen or offered[:1]) if offered else [""]):
                for answer in answers:
                    mode = answer if answer != DEFAULT_ANSWER_MODE else ""
                    name = "__".join(filter(None, (_slug(model), _slug(entry), condition, mode)))
                    runs.append(SweepRun("text", model, data, out / "text" / name, condition, options,
                                         answer=answer))
    return sorted(runs, key=lambda r: models.index(r.spec))  # model by model, as before


def _embodied_runs(path: Path, base: Path, out: Path, table: Any) -> list[SweepRun]:
    """The [embodied] table's runs: each planner resolved, each simulator with its options and
    each episode file checked by the simulators that run it."""
    from framebench.registry import build_engine, check_planner_spec

    emb = _check_keys(path, table, EMBODIED_KEYS, "embodied")
    options = _settings(path, emb, EMBODIED_FIELDS, "embodied.")
    sim_options = emb.get("simulator_options", {})
    if not isinstance(sim_options, dict):
        raise UserError(f"{path}: embodied.simulator_options: expected a table")
    options["simulator_options"] = sim_options
    simulators = _strings(path, emb, "simulators", "embodied", required=False) or [DEFAULT_SIMULATOR]
    engines = {name: _field(path, "embodied.simulators", lambda n=name: build_engine(n, "simulator"))
               for name in simulators}
    for engine in engines.values():
        _field(path, "embodied.simulator_options", lambda e=engine: e.check_options(sim_options))
    planners = _strings(path, emb, "planners", "embodied")
    for planner in planners:
        _field(path, "embodied.planners", lambda p=planner: check_planner_spec(p))
    runs = []
    for entry in _strings(path, emb, "episodes", "embodied"):
        episodes = _existing(path, base, entry, "embodied.episodes")
        for engine in engines.values():
            _field(path, "embodied.episodes", lambda e=engine, f=episodes: e.check_episodes(f))
        for planner in planners:
            for simulator in simulators:
                name = "__".join([_slug(planner), _slug(entry.removesuffix('.gz').removesuffix('.json')),
                                  *([_slug(simulator)] if simulator != DEFAULT_SIMULATOR else [])])
                runs.append(SweepRun("embodied", planner, episodes, out / "embodied" / name, "", options, simulator))
    return sorted(runs, key=lambda r: planners.index(r.spec))


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
    """One run of the plan, as ``framebench text`` or ``framebench embodied --simulator NAME``
    runs it (through ``framebench.api``)."""
    from framebench import api

    opts = run.options
    cluster = dict(executor=executor, ray_address=ray_address, ray_workers=workers)
    if run.kind == "text":
        api.run_text(run.spec, run.data, run.out, limit=opts.get("limit"), batch_size=opts.get("batch_size", "auto"),
                     concurrency=opts.get("concurrency", 8), base_url=opts.get("base_url"),
                     conditions=run.condition or None, answer=run.answer or DEFAULT_ANSWER_MODE,
                     progress=progress, force=force, **cluster)
        return
    extra = {k: opts[k] for k in ("replan_cap", "max_new_tokens") if k in opts}
    api.run_embodied(run.spec, run.data, run.out, simulator=run.simulator or DEFAULT_SIMULATOR,
                     simulator_options=dict(opts.get("simulator_options") or {}), limit=opts.get("limit"),
                     progress=progress, force=force, **extra, **cluster)


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
