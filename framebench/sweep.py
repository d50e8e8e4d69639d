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

    [[run]]                       # optional: one named run each, in OUT/runs/NAME
    name = "omit-constrained"
    model = "{model}"             # "{NAME}": the plan's [params] value (--set NAME=VALUE)
    dataset = "demo:omit"
    conditions = ["M0", "M1"]     # all in this one run
    answer = "constrained"
    reasoning_from = ["omit"]     # earlier [[run]] entries whose stores hold the reasoning

Runs go one after the other (through one Ray connection on Ray); each run's units spread over
every worker the executor offers. On the local executor, the text runs of one model share one
loaded model, kept until its last run in the plan. A run folder that is already complete is
served from its store, so re-running a sweep resumes it. ``framebench demo`` is the packaged plan
``demo:demo-plan.toml``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
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
TOP_KEYS = {"out", "executor", "ray_address", "text", "embodied", "run", "params", "score_also", *TOP_FIELDS}
TEXT_KEYS = {"models", "datasets", "conditions", "answers", *TEXT_FIELDS}
EMBODIED_KEYS = {"planners", "episodes", "simulators", "simulator_options", *EMBODIED_FIELDS}
# a [[run]] entry: one run, a text run (model) or an embodied run (planner)
RUN_TEXT_KEYS = {"name", "title", "model", "dataset", "conditions", "answer", "reasoning_from", *TEXT_FIELDS}
RUN_EMBODIED_KEYS = {"name", "title", "planner", "episodes", "simulator", "simulator_options", *EMBODIED_FIELDS}
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
UNSET = object()  # a field filled by a parameter whose value is "": left out, its default applies


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
    reasoning_from: tuple[Path, ...] = ()  # text: run folders whose stores hold the reasoning
    title: str = ""  # a [[run]] entry's own words for it

    def label(self) -> str:
        if self.title:
            return self.title
        return (f"{self.spec} x {self.data.name}" + (f" x {self.condition}" if self.condition else "")
                + (f" [{self.answer}]" if self.answer and self.answer != DEFAULT_ANSWER_MODE else "")
                + (f" on {self.simulator}" if self.simulator and self.simulator != DEFAULT_SIMULATOR else ""))


@dataclass
class SweepPlan:
    out: Path
    executor: str | None  # None: not given (``resolve_executor``)
    ray_address: str | None
    workers: int | None
    runs: list[SweepRun]
    score_also: list[Path] = field(default_factory=list)  # run folders scored beside the runs


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


def plan_file(plan: str | Path) -> tuple[Path, bool]:
    """The plan's file, and whether it is installed with framebench (``demo:FILE``): such a plan's
    ``out`` is relative to the current folder, never inside the installed package."""
    from framebench.paths import DEMO_SCHEME, data_path

    if str(plan).startswith(DEMO_SCHEME):
        return data_path(str(plan)), True
    return Path(plan), False


def read_plan(plan: str | Path, params: Mapping[str, Any] | None = None, out: Path | None = None) -> SweepPlan:
    """Parse and validate a sweep plan whole: every field, model, planner, simulator, condition and
    path is checked before anything runs; every mistake is one line naming the file and field.
    ``params`` override the plan's [params] (``--set``), ``out`` its out (``--out``)."""
    from framebench.executors import EXECUTORS
    from framebench.paths import check_out_folder

    if out is not None:
        out = check_out_folder(Path(out)).resolve()
    path, installed = plan_file(plan)
    raw = _with_params(path, _check_keys(path, _read_toml(path), TOP_KEYS, "plan"), params or {})
    base = path.resolve().parent
    out_base = Path.cwd() if installed else base
    if out is None:
        if not isinstance(raw.get("out"), str) or not raw["out"].strip():
            raise UserError(f"{path}: out: expected the sweep's output folder (a string)")
        out = _field(path, "out", lambda: check_out_folder((out_base / raw["out"]).resolve(), "folder"))
    executor = raw.get("executor")
    if executor is not None and executor not in EXECUTORS:
        raise UserError(f"{path}: executor: expected {' or '.join(EXECUTORS)}, got {shown(executor)}")
    if raw.get("ray_address") is not None and not isinstance(raw["ray_address"], str):
        raise UserError(f"{path}: ray_address: expected HOST:PORT or 'auto' (a string), got {shown(raw['ray_address'])}")
    workers = _settings(path, raw, TOP_FIELDS, "").get("workers")
    runs = [*(_text_runs(path, base, out, raw["text"]) if "text" in raw else []),
            *(_embodied_runs(path, base, out, raw["embodied"]) if "embodied" in raw else []),
            *(_named_runs(path, base, out, raw["run"]) if "run" in raw else [])]
    if not runs:
        raise UserError(f"{path}: the plan has no [text], [embodied] or [[run]] runs")
    names = [r.out for r in runs]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: two runs map to the same folder; give datasets/models distinct names")
    for folder in (*names, out / "report"):  # before any model loads
        _field(path, "out", lambda f=folder: check_out_folder(f, "folder"))
    return SweepPlan(out, executor, raw.get("ray_address"), workers, runs, _scored_too(path, base, raw))


def _scored_too(path: Path, base: Path, raw: dict[str, Any]) -> list[Path]:
    """The plan's score_also: finished run folders (records.parquet) the report adds to its runs."""
    from framebench.records import RECORDS_FILE

    folders = [_existing(path, base, entry, "score_also")
               for entry in _strings(path, raw, "score_also", "plan", required=False)]
    for folder in folders:
        if not (folder / RECORDS_FILE).is_file():
            raise UserError(f"{path}: score_also: {folder} holds no {RECORDS_FILE} (expected a finished run folder)")
    return folders


def _with_params(path: Path, raw: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The plan with every "{NAME}" in its strings filled from its [params], ``overrides`` first.
    A plan without [params] is taken as written."""
    if "params" not in raw and not overrides:
        return raw
    declared = raw.get("params", {})
    if not isinstance(declared, dict):
        raise UserError(f"{path}: params: expected a table of NAME = VALUE")
    for name, value in {**declared, **overrides}.items():
        if not PARAM.fullmatch("{" + name + "}"):
            raise UserError(f"{path}: params: {shown(name)} is not a parameter name (letters, digits, '_')")
        if isinstance(value, float) or not isinstance(value, str | int):
            raise UserError(f"{path}: params.{name}: expected a string, an integer or a boolean, got {shown(value)}")
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise UserError(f"{path}: --set {unknown[0]}: the plan has no such parameter "
                        f"(its [params]: {', '.join(declared) or 'none'})")
    body = {key: value for key, value in raw.items() if key != "params"}
    return _fill(path, body, {**declared, **overrides}, "")


def _fill(path: Path, value: Any, params: Mapping[str, Any], where: str) -> Any:
    """``value`` with its parameters filled: a string that is one "{NAME}" becomes the parameter's
    value (an integer stays an integer; "" leaves the field out), "{NAME}" inside a string is
    replaced by its text."""
    if isinstance(value, dict):
        filled = {key: _fill(path, v, params, f"{where}.{key}" if where else key) for key, v in value.items()}
        return {key: v for key, v in filled.items() if v is not UNSET}
    if isinstance(value, list):
        filled = [_fill(path, v, params, f"{where}[{number}]") for number, v in enumerate(value, start=1)]
        return [v for v in filled if v is not UNSET]
    if not isinstance(value, str):
        return value
    for name in PARAM.findall(value):
        if name not in params:
            raise UserError(f"{path}: {where}: {shown(value)} names no parameter {name!r} "
                            f"(the plan's [params]: {', '.join(params) or 'none'})")
    whole = PARAM.fullmatch(value)
    if whole:
        filled = params[whole.group(1)]
        return UNSET if filled == "" else filled
    return PARAM.sub(lambda m: str(params[m.group(1)]), value)


def _answer_modes(path: Path, text: dict[str, Any], models: list[str]) -> list[str]:
    chosen = _strings(path, text, "answers", "text", required=False) or [DEFAULT_ANSWER_MODE]
    for mode in chosen:
        for model in models:
            _check_answer(path, mode, model, "text.answers")
    return chosen


def _check_answer(path: Path, answer: str, model: str, where: str) -> None:
    """A known answer mode that the model's engine can answer in (before any model loads: the
    runs of a sweep may share a model loaded before the run checks it)."""
    from framebench.pipeline.text import check_engine
    from framebench.registry import answer_modes

    known = answer_modes()
    if answer not in known:
        raise UserError(f"{path}: {where}: unknown answer mode {answer!r} (known: {', '.join(known)})")
    _field(path, where, lambda: check_engine(known[answer], model))


def _text_runs(path: Path, base: Path, out: Path, table: Any) -> list[SweepRun]:
    """The [text] table's runs: each model resolved with the plan's options, each dataset read
    and each chosen condition offered by the datasets that take conditions."""
    from framebench.pipeline.text import model_options
    from framebench.registry import check_model

    text = _check_keys(path, table, TEXT_KEYS, "text")
    options = _settings(path, text, TEXT_FIELDS, "text.")
    chosen = _strings(path, text, "conditions", "text", required=False)
    models = _strings(path, text, "models", "text")
    for model in models:
        _field(path, "text.models", lambda m=model: check_model(m, model_options(m, None, **options)))
    answers = _answer_modes(path, text, models)
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


def _named_runs(path: Path, base: Path, out: Path, table: Any) -> list[SweepRun]:
    """The [[run]] entries, in order: each one run in ``OUT/runs/NAME``, a text run (``model``)
    or an embodied run (``planner``), with its own settings."""
    if not isinstance(table, list) or not table or not all(isinstance(entry, dict) for entry in table):
        raise UserError(f"{path}: run: expected one or more [[run]] tables")
    runs: dict[str, SweepRun] = {}
    for number, entry in enumerate(table, start=1):
        where = f"run[{number}]"
        name = entry.get("name")
        if not isinstance(name, str) or not RUN_NAME.fullmatch(name):
            raise UserError(f"{path}: {where}.name: expected the run's folder name (up to 80 letters, digits, "
                            f"'.', '_', '-'), got {shown(name)}")
        if name in runs:
            raise UserError(f"{path}: {where}.name: {name!r} names an earlier [[run]] too")
        if "model" in entry and "planner" in entry:
            raise UserError(f"{path}: {where}: names a model and a planner (one run each: a text run's model, "
                            "an embodied run's planner)")
        if "model" in entry:
            runs[name] = _named_text_run(path, base, out / "runs" / name, entry, where, runs)
        elif "planner" in entry:
            runs[name] = _named_embodied_run(path, base, out / "runs" / name, entry, where)
        else:
            raise UserError(f"{path}: {where}: expected model (a text run) or planner (an embodied run)")
    return list(runs.values())


def _one_string(path: Path, table: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise UserError(f"{path}: {where}.{key}: expected a non-empty string, got {shown(value)}")
    return value


def _named_text_run(path: Path, base: Path, out: Path, entry: dict[str, Any], where: str,
                    earlier: Mapping[str, SweepRun]) -> SweepRun:
    from framebench.pipeline.text import model_options
    from framebench.registry import answer_modes, check_model

    entry = _check_keys(path, entry, RUN_TEXT_KEYS, where)
    options = _settings(path, entry, TEXT_FIELDS, f"{where}.")
    model = _one_string(path, entry, "model", where)
    _field(path, f"{where}.model", lambda: check_model(model, model_options(model, None, **options)))
    answer = _one_string(path, entry, "answer", where, DEFAULT_ANSWER_MODE)
    _check_answer(path, answer, model, f"{where}.answer")
    dataset = _one_string(path, entry, "dataset", where)
    data = _existing(path, base, dataset, f"{where}.dataset")
    offered = _field(path, f"{where}.dataset", lambda: _conditions_of(data))
    conditions = _strings(path, entry, "conditions", where, required=False)
    for condition in conditions:
        if condition not in offered:
            raise UserError(f"{path}: {where}.conditions: unknown condition {shown(condition)} "
                            f"({dataset} offers {', '.join(offered) or 'no conditions'})")
    sources = _strings(path, entry, "reasoning_from", where, required=False)
    for source in sources:
        if source not in earlier or earlier[source].kind != "text":
            raise UserError(f"{path}: {where}.reasoning_from: {shown(source)} names no earlier text [[run]]")
    if sources and not answer_modes()[answer].reads_reasoning:
        readers = [name for name, mode in answer_modes().items() if mode.reads_reasoning]
        raise UserError(f"{path}: {where}.reasoning_from: applies to answer {' or '.join(readers) or 'no mode'} only")
    return SweepRun("text", model, data, out, ",".join(conditions), options, answer=answer,
                    reasoning_from=tuple(earlier[s].out for s in sources),
                    title=_one_string(path, entry, "title", where) if "title" in entry else "")


def _named_embodied_run(path: Path, base: Path, out: Path, entry: dict[str, Any], where: str) -> SweepRun:
    from framebench.registry import build_engine, check_planner_spec

    entry = _check_keys(path, entry, RUN_EMBODIED_KEYS, where)
    options = _settings(path, entry, EMBODIED_FIELDS, f"{where}.")
    options["simulator_options"] = entry.get("simulator_options", {})
    if not isinstance(options["simulator_options"], dict):
        raise UserError(f"{path}: {where}.simulator_options: expected a table")
    simulator = _one_string(path, entry, "simulator", where, DEFAULT_SIMULATOR)
    engine = _field(path, f"{where}.simulator", lambda: build_engine(simulator, "simulator"))
    _field(path, f"{where}.simulator_options", lambda: engine.check_options(options["simulator_options"]))
    planner = _one_string(path, entry, "planner", where)
    _field(path, f"{where}.planner", lambda: check_planner_spec(planner))
    episodes = _existing(path, base, _one_string(path, entry, "episodes", where), f"{where}.episodes")
    _field(path, f"{where}.episodes", lambda: engine.check_episodes(episodes))
    return SweepRun("embodied", planner, episodes, out, "", options, simulator,
                    title=_one_string(path, entry, "title", where) if "title" in entry else "")


def resolve_executor(plan: SweepPlan, path: Path, executor: str | None, ray_address: str | None,
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
            force: bool = False, backend: Any = None) -> Any:
    """One run of the plan, as ``framebench text`` or ``framebench embodied --simulator NAME``
    runs it (through ``framebench.api``); what the api returns (a text run's ``RunSummary``, an
    embodied run's folder). ``backend``: a text run's model, already loaded."""
    from framebench import api

    opts = run.options
    cluster = dict(executor=executor, ray_address=ray_address, ray_workers=workers)
    if run.kind == "text":
        return api.run_text(run.spec, run.data, run.out, limit=opts.get("limit"),
                            batch_size=opts.get("batch_size", "auto"), concurrency=opts.get("concurrency", 8),
                            base_url=opts.get("base_url"), conditions=run.condition or None,
                            answer=run.answer or DEFAULT_ANSWER_MODE, reasoning_from=run.reasoning_from,
                            backend=backend, progress=progress, force=force, **cluster)
    extra = {k: opts[k] for k in ("replan_cap", "max_new_tokens") if k in opts}
    return api.run_embodied(run.spec, run.data, run.out, simulator=run.simulator or DEFAULT_SIMULATOR,
                            simulator_options=dict(opts.get("simulator_options") or {}), limit=opts.get("limit"),
                            progress=progress, force=force, **extra, **cluster)


class SharedModels:
    """On the local executor the text runs of one model (spec and options) share one loaded
    model: it loads once, and a constrained run reads what the model's generation run already
    computed (``hf:`` keeps each prompt's first decoding step). A model is let go after its last
    run in the plan."""

    def __init__(self, runs: list[SweepRun]):
        self.keys = [_model_key(run) if run.kind == "text" else None for run in runs]
        self.loaded: dict[tuple, Any] = {}

    def backend(self, index: int) -> Any:
        """The loaded model of run ``index`` (None for an embodied run)."""
        from framebench.backends import load_backend

        key = self.keys[index]
        if key is not None and key not in self.loaded:
            self.loaded[key] = load_backend(key[0], **dict(key[1]))
        return self.loaded.get(key) if key is not None else None

    def done(self, index: int) -> None:
        key = self.keys[index]
        if key is not None and key not in self.keys[index + 1:]:
            self.loaded.pop(key, None)


def _model_key(run: SweepRun) -> tuple:
    from framebench.pipeline.text import model_options

    opts = run.options
    options = model_options(run.spec, None, batch_size=opts.get("batch_size", "auto"),
                            concurrency=opts.get("concurrency", 8), base_url=opts.get("base_url"))
    return run.spec, tuple(sorted(options.items()))


def run_sweep(plan: SweepPlan, progress: bool = True, force: bool = False,
              started: Callable[[int, SweepRun], None] | None = None,
              finished: Callable[[SweepRun, Any, float], None] | None = None) -> list[Path]:
    """Execute every run of the plan (``plan.executor`` resolved); their folders, in plan order.
    ``force``: replace a run folder that holds a different run. ``started(number, run)`` before
    each run, ``finished(run, result, seconds)`` after it (``result``: what ``execute`` returns)."""
    import time
    from contextlib import nullcontext

    if plan.executor == "ray":
        from framebench.executors.cluster import ray_session

        session: Any = ray_session(plan.ray_address, num_cpus=plan.workers)
    else:
        session = nullcontext()
    executor = plan.executor or "local"
    models = SharedModels(plan.runs) if executor == "local" else None
    with session:
        for index, run in enumerate(plan.runs):
            if started:
                started(index + 1, run)
            begun = time.perf_counter()
            backend = models.backend(index) if models else None
            result = execute(run, executor, plan.ray_address, plan.workers, progress, force, backend)
            if models:
                models.done(index)
            if finished:
                finished(run, result, time.perf_counter() - begun)
    return [r.out for r in plan.runs]
