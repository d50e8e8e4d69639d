"""The registries: engines (model backends, planners, simulators), suites, answer modes, report
parts, build commands and command groups.

Each is filled from its own entry-point group (the ``*_GROUP`` names below; the FramingQA domains
and OMIT conditions have two more, read by ``framebench.text_eval``), so a package can add an
engine or a suite without editing framebench::

    [project.entry-points."framebench.engines"]
    mymodel = "my_pkg.engines:MY_MODEL"      # an ``Engine``

    [project.entry-points."framebench.suites"]
    mysuite = "my_pkg.suite:MY_SUITE"        # a ``framebench.suite.Suite``

framebench registers its own engines and suites the same way (see pyproject.toml). The core only
ever reads the registries; it never imports a suite package.

An engine spec is ``NAME`` or ``NAME:ARG`` (``hf:/models/x``, ``baseline:always-yes``,
``smollm2``). Each engine declares its typed options; ``--model-arg key=value`` values are checked
and converted against them, and an option the engine does not declare is a user error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from framebench.bounds import Rule
from framebench.errors import UserError

# The registry imports neither ``framebench.suite`` nor the report parts (they import the core
# types it would need): a suite is any object with the ``Suite`` interface, a part any object
# with the ``framebench.scoring.parts.ReportPart`` interface.
Suite = Any
ReportPart = Any

ENGINE_GROUP = "framebench.engines"
SUITE_GROUP = "framebench.suites"
BUILD_COMMAND_GROUP = "framebench.build_commands"
COMMAND_GROUP = "framebench.commands"
REPORT_PART_GROUP = "framebench.report_parts"
ANSWER_MODE_GROUP = "framebench.answer_modes"
ENGINE_KINDS = ("model", "planner", "simulator")
# What one worker of an engine needs (executors turn it into a resource request; none names an engine):
# "gpu": one GPU per worker where the cluster has GPUs (else one CPU); "cpu": one CPU;
# "remote": the work happens elsewhere (an API), so a worker takes a fraction of a CPU.
DEVICES = ("cpu", "gpu", "remote")
# What a model engine's backends can do (declared, not probed): free generation, scoring a set of
# allowed answers (``--answer constrained``), scoring continuations (the choice planner).
CAPABILITIES = ("generate", "score_answers", "score_continuations")
# The answer mode a text job gets without ``--answer``: the pipeline's own (``framebench.pipeline.
# text.GenerateAnswers``, registered under ``framebench.answer_modes`` like any other).
DEFAULT_ANSWER_MODE = "generate"
CAPABILITY_WORDS = {"generate": "generate text", "score_answers": "score allowed answers",
                    "score_continuations": "score continuations"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Option:
    """One typed engine option (``--model-arg name=value``)."""

    name: str
    type: type = str  # str, int, float or bool
    help: str = ""
    choices: tuple[str, ...] = ()  # extra literal values accepted besides the type (e.g. "auto")
    travels: bool = True  # passed on to workers on other nodes (False: meaningful on the driver only)
    rule: Rule | None = None  # the range it shares with a command-line flag (``framebench.bounds``)

    def convert(self, value: Any, engine: str) -> Any:
        """``value`` (a string from the command line, or already typed) as this option's type."""
        if self.rule is not None:
            where = f"model option {self.name!r} of engine {engine!r}"
            return self.rule.parse(value, where) if isinstance(value, str) else self.rule.check(value, where)
        if not isinstance(value, str) or self.type is str:
            if self.type is not str and not isinstance(value, self.type) and value not in self.choices:
                raise UserError(f"model option {self.name!r} of engine {engine!r}: expected "
                                f"{self.type.__name__}, got {value!r}")
            return value
        if value in self.choices:
            return value
        try:
            if self.type is bool:
                if value.lower() not in _TRUE + _FALSE:
                    raise ValueError(value)
                return value.lower() in _TRUE
            return self.type(value)
        except ValueError:
            allowed = f"{self.type.__name__}{''.join(f' or {c!r}' for c in self.choices)}"
            raise UserError(f"model option {self.name!r} of engine {engine!r}: expected {allowed}, "
                            f"got {value!r}") from None


@dataclass(frozen=True)
class Engine:
    """A named way to build a model backend, a planner or a simulator.

    ``load(arg, **options)`` builds it; ``arg`` is what follows the colon in the spec
    (``arg="required"``: the spec must have one; ``"none"``: it must not; ``"optional"``).
    """

    name: str
    kind: str
    load: Callable[..., Any]
    options: tuple[Option, ...] = ()
    arg: str = "required"
    arg_help: str = ""
    help: str = ""
    plans: bool = True  # a model engine that can drive the LLM planner
    device: str = "cpu"  # one of DEVICES: what one worker of this engine needs
    call_size: int | None = None  # jobs per backend call, each stored when it returns; None: the default
    capabilities: frozenset[str] = frozenset({"generate"})  # a subset of CAPABILITIES
    check_arg: Callable[[str], None] | None = None  # refuses a bad ARG without loading anything
    # how to get the model's own chat tokenizer without loading weights (``framebench estimate``):
    # ``tokenizer(arg)`` returns an object with ``encode(chat) -> token ids`` and ``count(text)``;
    # None: token counts are approximated
    tokenizer: Callable[[str], Any] | None = None
    # a reference that ignores the question (a constant or random answer): the report's finding
    # flags a model it cannot tell apart from one
    trivial: bool = False

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise TypeError(f"engine {self.name!r}: device {self.device!r} is not one of {DEVICES}")
        unknown = set(self.capabilities) - set(CAPABILITIES)
        if unknown:
            raise TypeError(f"engine {self.name!r}: unknown capabilities {sorted(unknown)}")

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def usage(self) -> str:
        shown = {"required": f"{self.name}:{self.arg_help or 'ARG'}", "none": self.name,
                 "optional": f"{self.name}[:{self.arg_help or 'ARG'}]"}
        return shown[self.arg]

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Options converted to their declared types; an undeclared one is a user error."""
        typed = {}
        for name, value in options.items():
            opt = self.option(name)
            if opt is None:
                known = ", ".join(o.name for o in self.options) or "none"
                raise UserError(f"engine {self.name!r} has no option {name!r} (its options: {known})")
            typed[name] = opt.convert(value, self.name)
        return typed

    def check_spec(self, spec: str) -> str:
        """The spec's ARG, checked as far as it can be without loading anything."""
        _, colon, arg = spec.partition(":")
        if self.arg == "required" and not arg:
            raise UserError(f"engine spec {spec!r}: expected {self.usage()}")
        if self.arg == "none" and colon:
            raise UserError(f"engine spec {spec!r}: {self.name!r} takes no argument")
        if self.check_arg is not None and arg:
            self.check_arg(arg)
        return arg

    def build(self, spec: str, options: Mapping[str, Any] | None = None) -> Any:
        arg = self.check_spec(spec)
        return self.load(arg, **self.check_options(options or {}))


def _load_group(group: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        if ep.name in found:  # the first distribution wins, deterministically
            continue
        found[ep.name] = ep.load()
    return found


@cache
def engines() -> dict[str, Engine]:
    """Every registered engine by name."""
    table = _load_group(ENGINE_GROUP)
    for name, engine in table.items():
        if not isinstance(engine, Engine) or engine.name != name or engine.kind not in ENGINE_KINDS:
            raise TypeError(f"entry point {ENGINE_GROUP}:{name} is not an Engine named {name!r}")
    return table


# suites registered from a file, not an entry point (``framebench text --suite FILE:OBJECT``;
# ``framebench.suite_file``): name -> (where it came from, the suite)
_ADDED_SUITES: dict[str, tuple[str, Suite]] = {}


@cache
def suites() -> dict[str, Suite]:
    """Every registered suite by name (the records' ``suite`` column): the entry points', then
    those added from files (``add_suite``)."""
    table = _load_group(SUITE_GROUP)
    for name, suite in table.items():
        if getattr(suite, "name", None) != name:
            raise TypeError(f"entry point {SUITE_GROUP}:{name} is not a Suite named {name!r}")
    for name, (origin, suite) in _ADDED_SUITES.items():
        if name in table:
            raise UserError(f"{origin}: an installed package already registers a suite named {name!r}; "
                            "give yours another name")
        table[name] = suite
    return table


def add_suite(suite: Suite, origin: str) -> None:
    """Register ``suite`` from ``origin`` (a file) beside the entry points' for this process; the
    same origin may register it again (a file loaded twice)."""
    name = suite.name
    previous = _ADDED_SUITES.get(name)
    if previous is not None and previous[0] != origin:
        raise UserError(f"{origin}: suite {name!r} is already registered from {previous[0]}")
    _ADDED_SUITES[name] = (origin, suite)
    suites.cache_clear()
    extra_report_parts.cache_clear()
    try:
        suites()
    except UserError:
        _ADDED_SUITES.pop(name)
        suites.cache_clear()
        raise


def ordered_suites() -> list[Suite]:
    """Registered suites in report order."""
    return sorted(suites().values(), key=lambda s: (s.order, s.name))


@cache
def extra_report_parts() -> dict[str, ReportPart]:
    """The report parts that are not a suite (``framebench.report_parts``: provenance, headline,
    susceptibility, comparisons, ...), by name (their ``report.json`` key)."""
    table = _load_group(REPORT_PART_GROUP)
    for name, part in table.items():
        if getattr(part, "name", None) != name or name in suites():
            raise TypeError(f"entry point {REPORT_PART_GROUP}:{name} is not a report part named {name!r} "
                            "(or a suite has that name)")
    return table


def report_parts() -> list[ReportPart]:
    """Every report part, the suites' metrics included, in report order (``order``, then name)."""
    parts = [*(s.metrics for s in suites().values()), *extra_report_parts().values()]
    return sorted(parts, key=lambda p: (p.order, p.name))


def refresh() -> None:
    """Forget the loaded registries and the suites added from files (after installing a plugin
    at run time; used by tests)."""
    _ADDED_SUITES.clear()
    engines.cache_clear()
    suites.cache_clear()
    extra_report_parts.cache_clear()
    build_commands.cache_clear()
    command_groups.cache_clear()
    answer_modes.cache_clear()


@cache
def build_commands() -> dict[str, Callable[..., Any]]:
    """``framebench build <name>`` commands (typer functions) that suite packages register under
    ``framebench.build_commands``."""
    return _load_group(BUILD_COMMAND_GROUP)


@cache
def answer_modes() -> dict[str, Any]:
    """Every registered answer mode (``framebench.answer_modes``) by name, the default
    (``generate``) first, then by name: how a text job is answered (``--answer``; the records'
    ``answer_mode`` vocabulary). framebench's own ``generate`` registers there as any third party's
    mode does; the contract a mode implements is ``framebench.answering.AnswerMode``."""
    table = _load_group(ANSWER_MODE_GROUP)
    for name, mode in table.items():
        if getattr(mode, "name", None) != name:
            raise TypeError(f"entry point {ANSWER_MODE_GROUP}:{name} is not an answer mode named {name!r}")
    return dict(sorted(table.items(), key=lambda kv: (kv[0] != DEFAULT_ANSWER_MODE, kv[0])))


def answer_mode_names() -> list[str]:
    """The registered answer modes' names, without importing any (for ``--help``)."""
    return sorted({ep.name for ep in entry_points(group=ANSWER_MODE_GROUP)})


def answer_mode(name: str) -> Any:
    """The answer mode registered as ``name``; an unknown name is a user error listing the known."""
    modes = answer_modes()
    if name not in modes:
        raise UserError(f"no answer mode {name!r} is registered under {ANSWER_MODE_GROUP} "
                        f"(--answer must be one of {', '.join(modes) or 'none'}; reinstall framebench: "
                        "pip install -e .)")
    return modes[name]


def answer_mode_with(capability: str) -> Any:
    """The first registered answer mode that answers through the engine capability ``capability``
    (e.g. records imported from another tool's scored answers)."""
    found = [m for m in answer_modes().values() if m.capability == capability]
    if not found:
        raise UserError(f"no answer mode that uses {CAPABILITY_WORDS.get(capability, capability)!r} is "
                        f"registered under {ANSWER_MODE_GROUP}")
    return found[0]


@cache
def command_groups() -> dict[str, Any]:
    """Top-level command groups (``typer.Typer`` apps) registered under ``framebench.commands``."""
    return _load_group(COMMAND_GROUP)


def engines_of(kind: str) -> dict[str, Engine]:
    return {n: e for n, e in engines().items() if e.kind == kind}


def engine_for(spec: str, kind: str) -> Engine:
    """The engine of ``kind`` a spec names; an unknown name is a user error listing the known."""
    name = spec.partition(":")[0]
    engine = engines_of(kind).get(name)
    if engine is None:
        known = ", ".join(e.usage() for e in engines_of(kind).values())
        raise UserError(f"unknown {kind} spec {spec!r}: use {known}")
    return engine


def check_model(spec: str, options: Mapping[str, Any] | None = None) -> Engine:
    """The model engine a spec names, its ARG and ``options`` checked, nothing loaded."""
    engine = engine_for(spec, "model")
    engine.check_spec(spec)
    engine.check_options(options or {})
    return engine


def planner_specs() -> str:
    """Every planner spec, e.g. "oracle, script:FILE, hf:<path or hub id>, ... or choice:MODEL":
    the planner engines that run no model, the model engines that can plan, then the planner
    engines built on a model."""
    planners = engines_of("planner").values()
    usages = [e.usage() for e in planners if not e.options]  # oracle, script: no model
    usages += [e.usage() for e in engines_of("model").values() if e.plans]
    usages += [e.usage() for e in planners if e.options]  # choice:MODEL, on a model engine
    return ", ".join(usages[:-1]) + " or " + usages[-1] if len(usages) > 1 else "".join(usages)


def check_planner_spec(spec: str) -> Engine:
    """The planner engine, or the model engine that plans, a spec names (its ARG checked);
    anything else is one line listing every planner spec."""
    kind, colon, arg = spec.partition(":")
    engine = engines_of("planner").get(kind) or engines_of("model").get(kind)
    if engine is not None and not engine.plans:
        raise UserError(f"--planner {spec!r}: {kind} models only answer Yes/No and cannot plan; "
                        f"use {planner_specs()}")
    if engine is None or (engine.arg == "required" and not arg) or (engine.arg == "none" and colon):
        raise UserError(f"unknown planner spec {spec!r}: use {planner_specs()}")
    engine.check_spec(spec)
    return engine


def require_capability(spec: str, capability: str, needed_by: str) -> Engine:
    """The model engine ``spec`` names, refused in one line (before any model loads) when it does
    not declare ``capability``: the line names the engine, what it lacks and who needs it."""
    engine = engine_for(spec, "model")
    if capability not in engine.capabilities:
        able = [e.usage() for e in engines_of("model").values() if capability in e.capabilities]
        raise UserError(f"{needed_by}: engine {engine.name!r} cannot {CAPABILITY_WORDS[capability]} "
                        f"(use {', '.join(able) or 'an engine that declares it'})")
    return engine


def trivial_model(label: str) -> bool:
    """Whether a model label (an engine spec, perhaps tagged with its answer mode) names an engine
    declared ``trivial``."""
    name = str(label).split(" ", 1)[0].partition(":")[0]
    engine = engines().get(name)
    return bool(engine and engine.trivial)


def build_engine(spec: str, kind: str, options: Mapping[str, Any] | None = None) -> Any:
    return engine_for(spec, kind).build(spec, options)


def suite(name: str) -> Suite:
    table = suites()
    if name not in table:
        raise UserError(f"unknown suite {name!r} (registered: {', '.join(table) or 'none'})")
    return table[name]


def parse_model_args(pairs: Iterable[str] | None) -> dict[str, str]:
    """``["key=value", ...]`` from repeated ``--model-arg`` flags as a dict (values still text)."""
    parsed: dict[str, str] = {}
    for pair in pairs or ():
        key, eq, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise UserError(f"--model-arg: expected key=value, got {pair!r}")
        parsed[key] = value
    return parsed

