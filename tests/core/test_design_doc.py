"""docs/design.md names code that exists, so the map cannot drift from the territory: every path it
shows is a file or folder of the repository, every dotted name resolves (``framebench.x.y``, a suite
module such as ``text_eval.omit.conditions.Condition``, a core module such as ``pipeline.finalize``,
a class member such as ``Suite.jobs``), and every identifier it shows is spelled in the code."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "design.md"
SUITES = ("text_eval", "embodied", "partnr_adapters")  # mapped under framebench by package-dir
SOURCE_DIRS = ("framebench", *SUITES)
FILE_SUFFIXES = {"py", "md", "toml", "json", "jsonl", "parquet", "sqlite", "html", "gz", "tsv", "txt"}
CODE = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"[\w.*-]+(?:/[\w.*-]*)+")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@cache
def sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for d in SOURCE_DIRS for p in sorted((REPO / d).rglob("*.py"))}


@cache
def code_text() -> str:
    return "\n".join(sources().values()) + (REPO / "pyproject.toml").read_text(encoding="utf-8")


@cache
def core_modules() -> frozenset[str]:
    core = REPO / "framebench"
    return frozenset(p.stem for p in core.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file())


@cache
def top_folders() -> frozenset[str]:
    return frozenset(p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith("."))


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(("framebench", *parts) if parts[0] in SUITES else parts)


@cache
def class_homes() -> dict[str, tuple[str, ...]]:
    """Class name -> the modules that define a class of that name."""
    homes: dict[str, list[str]] = {}
    for path, text in sources().items():
        for name in re.findall(r"^\s*class (\w+)", text, re.MULTILINE):
            homes.setdefault(name, []).append(module_name(path))
    return {name: tuple(mods) for name, mods in homes.items()}


def has_member(obj: Any, name: str) -> bool:
    if hasattr(obj, name):
        return True
    return isinstance(obj, type) and any(name in vars(k).get("__annotations__", {}) or
                                         name in getattr(k, "__dataclass_fields__", {}) for k in obj.__mro__)


def resolves(dotted: str) -> bool:
    """``dotted`` is an importable module, or a module followed by attributes that exist."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not has_member(obj, attr):
                return False
            obj = getattr(obj, attr, None)
        return True
    return False


def dotted_problem(name: str) -> str | None:
    """Why a dotted name the doc shows names nothing in the code (None: it does)."""
    first = name.split(".")[0]
    if first == "framebench":
        if resolves(name) or f'"{name}"' in code_text():  # a module path, or an entry-point group / key
            return None
        return "resolves to no module or attribute, and the code spells no such string"
    if first in SUITES or first in core_modules():
        return None if resolves(f"framebench.{name}") else f"framebench.{name} resolves to nothing"
    if first in class_homes():
        rest = name.split(".", 1)[1]
        return None if any(resolves(f"{mod}.{first}.{rest}") for mod in class_homes()[first]) else \
            f"no class {first} in {', '.join(class_homes()[first])} has {rest}"
    return None if resolves(name) else "names neither a framebench module nor a class of the code"


def path_problem(path: str) -> str | None:
    """Why a path the doc shows is not in the repository (None: it is, or it is not a repository path)."""
    first = path.split("/")[0]
    if first in top_folders():
        candidates = [path]
    elif first in core_modules():
        candidates = [f"framebench/{path}"]
    else:
        return None  # a value (a slot such as correct/root/plain/Q1) or a placeholder (RUN_DIR/...)
    if any(any(REPO.glob(c.rstrip("/"))) for c in candidates):
        return None
    return "no such file or folder in the repository"


def problems(doc: str) -> list[str]:
    found = []
    words = set(IDENTIFIER.findall(code_text()))
    for shown in sorted(set(CODE.findall(doc))):
        token = shown.split("(")[0].strip()
        why = None
        if PATH.fullmatch(token):
            why = path_problem(token)
        elif token.endswith(".py") and IDENTIFIER.fullmatch(token[:-3]):
            why = None if any(REPO.glob(f"*/**/{token}")) else "no such file in the repository"
        elif DOTTED.fullmatch(token) and token.rsplit(".", 1)[1] not in FILE_SUFFIXES:
            why = dotted_problem(token)
        elif IDENTIFIER.fullmatch(token) and ("_" in token.strip("_") or re.search(r"[a-z][A-Z]", token)):
            why = None if token in words else "spelled nowhere in the code"
        if why:
            found.append(f"`{shown}`: {why}")
    return found


def test_every_name_in_design_md_exists_in_the_code():
    assert problems(DOC.read_text(encoding="utf-8")) == []


def test_the_check_catches_names_that_moved():
    """The names design.md held before the glossary followed the code (issue 44) are all caught,
    beside names that exist."""
    stale = ("`runs.write_run`", "`text_eval/sources_*.py`", "`framebench.pipeline.text.GenerateMode`",
             "`pipeline.text.GenerateMode`", "`Suite.no_such_method`", "`records.key_columns`",
             "`framebench.no_such_group`", "`write_run_json`")
    current = ("`framebench.run_folder.write_run`", "`text_eval/framingqa/sources_*.py`",
               "`framebench.answering.GenerateAnswers`", "`SuiteItems.jobs`", "`SuiteRecords.key_columns`",
               "`framebench.suites`", "`write_run`", "`in_container.py`", "`scoring/sections.py`")
    found = problems(" ".join(stale + current))
    assert [line.split(":")[0] for line in found] == sorted(stale)


# --- what design.md says about the code's shape, not only its names (issue 52) ---------------------

SIGNATURE = re.compile(r"`((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(([^`()]*)\)(?: -> \w+)?`")
PARAM = re.compile(r"\*{0,2}[A-Za-z_]\w*(?:=(?!\.\.\.)[\w.]+)?|\*")


def shown_params(text: str) -> tuple[str, ...] | None:
    """A signature's parameters as the doc shows them, defaults dropped (None: a call, not a
    signature, such as ``standard_formats("binary", "mc")`` or ``run_embodied(simulator=...)``)."""
    params = [p.strip() for p in text.split(",") if p.strip()]
    if not all(PARAM.fullmatch(p) for p in params):
        return None
    return tuple(p.split("=")[0] for p in params)


def params_of(args: ast.arguments) -> tuple[str, ...]:
    positional = [a.arg for a in (*args.posonlyargs, *args.args) if a.arg not in ("self", "cls")]
    star = [f"*{args.vararg.arg}"] if args.vararg else (["*"] if args.kwonlyargs else [])
    return (*positional, *star, *(a.arg for a in args.kwonlyargs),
            *([f"**{args.kwarg.arg}"] if args.kwarg else []))


@cache
def definitions() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """Function name -> (its qualified name, its parameters) for every def of the code."""
    found: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}.{child.name}")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(child.name, []).append((f"{prefix}.{child.name}", params_of(child.args)))
                walk(child, f"{prefix}.{child.name}")
            else:
                walk(child, prefix)

    for path, text in sources().items():
        walk(ast.parse(text), module_name(path))
    return found


def signature_problem(name: str, params: tuple[str, ...]) -> str | None:
    """Why a signature the doc shows matches no def of that name (None: one matches). A qualified
    name (``Simulator.run``, ``framebench.api.run_embodied``) must match that def; a bare one any
    def of its name."""
    defs = definitions().get(name.rsplit(".", 1)[-1], [])
    if "." in name:
        tail = "." + ".".join(name.split(".")[-2:])
        defs = [(q, p) for q, p in defs if q.endswith(tail)]
    if not defs:
        return "no def of that name"
    if any(p == params for _, p in defs):
        return None
    return "the code has " + "; ".join(f"{q}({', '.join(p)})" for q, p in defs[:3])


def signature_problems(doc: str) -> list[str]:
    found = []
    for name, raw in SIGNATURE.findall(doc):
        params = shown_params(raw)
        if params is None:
            continue
        why = signature_problem(name, params)
        if why:
            found.append(f"`{name}({raw})`: {why}")
    return found


def test_every_signature_in_design_md_is_the_code_s():
    assert signature_problems(DOC.read_text(encoding="utf-8")) == []


def test_the_signature_check_catches_a_stale_signature():
    """The ``Simulator.run`` design.md showed before issue 52, beside the one the code has."""
    stale = "`run(planner, episodes, out, settings, *, progress, force, executor, ray_address, ray_workers)`"
    current = "`Simulator.run(planner, episodes, out, settings, execution)` `generate(chats, decoding, on_batch=None)`"
    assert [p.split(":")[0] for p in signature_problems(f"{stale} {current} `Simulator.run(planner)`")] == \
        [stale, "`Simulator.run(planner)`"]


def registered(group: str) -> dict[str, str]:
    """framebench's own entry points of ``group`` (pyproject.toml): name -> ``module:attribute``."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return meta["project"]["entry-points"].get(group, {})


def table_rows(doc: str, heading: str) -> list[list[str]]:
    """The cells of the first table under ``heading`` (its header and rule dropped)."""
    lines = doc.split(f"\n{heading}\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[start + 2:end]]


def shown_names(cell: str) -> set[str]:
    """The names a cell lists, e.g. ``hf:<path or hub id>`` -> hf, ``baseline:always-yes`` -> baseline."""
    return {re.split(r"[:\[]", span)[0] for span in CODE.findall(cell)} - {"none"}


def registries_problems(doc: str) -> list[str]:
    """Each entry-point group's row in "### Registries" lists exactly framebench's own entries."""
    found = []
    for row in table_rows(doc, "### Registries"):
        group = CODE.findall(row[0])[0]
        own = set(registered(group))
        if shown_names(row[-1]) != own:
            found.append(f"{group}: shows {sorted(shown_names(row[-1]))}, pyproject.toml has {sorted(own)}")
    return found


def engine_kinds() -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for name, target in registered("framebench.engines").items():
        module, attr = target.split(":")
        kinds.setdefault(getattr(importlib.import_module(module), attr).kind, set()).add(name)
    return kinds


def engines_problems(doc: str) -> list[str]:
    """Each kind's row in "### Engines" lists exactly framebench's engines of that kind."""
    found, kinds = [], engine_kinds()
    rows = {row[0]: row for row in table_rows(doc, "### Engines")}
    for kind, names in kinds.items():
        shown = shown_names(rows[kind][1]) if kind in rows else set()
        if shown != names:
            found.append(f"{kind}: shows {sorted(shown)}, registered {sorted(names)}")
    return found


def test_the_registry_and_engine_tables_list_what_is_registered():
    doc = DOC.read_text(encoding="utf-8")
    assert registries_problems(doc) == []
    assert engines_problems(doc) == []


def test_the_table_checks_catch_a_missing_entry():
    """design.md before issue 52: report parts without ``finding``, model engines without
    ``vllm``, planners without ``choice``."""
    doc = DOC.read_text(encoding="utf-8")
    stale = doc.replace("`meta`, `cautions`, `finding`,", "`meta`, `cautions`,").replace(
        "`openai:<model>`, `vllm:PATH`,", "`openai:<model>`,").replace(", `choice:MODEL`;", ";")
    assert [p.split(":")[0] for p in registries_problems(stale)] == ["framebench.report_parts"]
    assert [p.split(":")[0] for p in engines_problems(stale)] == ["model", "planner"]
