"""The core is machinery: no suite, task or condition name, no suite's record column, no
simulator's own option and no answer mode is a literal in its code (docstrings and messages may
name them). The roof (``framebench/cli``: command names, the demo's dataset folders, flags) and
the registrations in pyproject.toml are where such names belong. The words come from the
registries (the suites' declarations, the simulators' options, the answer modes), not from a
hand list."""

from __future__ import annotations

import ast
from pathlib import Path

from framebench import records, registry

CORE = Path(__file__).resolve().parents[2] / "framebench"
# the sweep plan's [embodied] section is the ``framebench embodied`` command's, not the suite's
ALLOWED = {("sweep.py", "embodied")}


def suite_words() -> set[str]:
    names: set[str] = set()
    for suite in registry.ordered_suites():
        names |= {suite.name, *suite.items.task_names(), *(name for name, _ in suite.items.conditions_listing())}
    return names


def suite_column_words() -> set[str]:
    """Every record column a registered suite declares (its columns, their former names, its key
    and filter columns), less the core's, and every registered simulator's own options."""
    words: set[str] = set()
    for suite in registry.ordered_suites():
        decl = suite.items.records
        words |= {*decl.columns, *decl.former_names, *decl.key_columns, *decl.enums, *suite.view.filter_columns}
    for name in registry.engines_of("simulator"):
        words |= set(registry.build_engine(name, "simulator").options)
    return words - set(records.CORE_COLUMNS) - set(records.TRAILING_COLUMNS)


def simulator_options() -> set[str]:
    return {o for name in registry.engines_of("simulator") for o in registry.build_engine(name, "simulator").options}


def identifiers(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every attribute, keyword argument, parameter and annotated field name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        name = (node.attr if isinstance(node, ast.Attribute) else node.arg if isinstance(node, ast.keyword | ast.arg)
                else node.target.id if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) else None)
        if name:
            found.append((node.lineno, name))
    return found


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string constant that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def offenders(root: Path, words: set[str], names: set[str] = frozenset(), allowed=ALLOWED) -> list[str]:
    """Core string literals among ``words`` and identifiers among ``names``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith("cli/"):
            continue
        found += [f"framebench/{where}:{line}: {value!r}" for line, value in literals(path)
                  if value in words and (where, value) not in allowed]
        found += [f"framebench/{where}:{line}: name {value}" for line, value in identifiers(path)
                  if value in names and (where, value) not in allowed]
    return found


def test_the_core_names_no_suite_task_or_condition():
    words = suite_words()
    assert {"framingqa", "omit", "embodied", "robotics", "medicine", "M0"} <= words
    assert offenders(CORE, words) == []


def test_the_check_finds_a_literal(tmp_path):
    """It can fail: a core module branching on a suite's name is caught, its docstring is not."""
    (tmp_path / "scoring").mkdir()
    (tmp_path / "scoring" / "probe.py").write_text(
        '"""About omit."""\n\ndef f(row):\n    """For omit rows."""\n    return row["suite"] == "omit"\n')
    assert offenders(tmp_path, {"omit"}) == ["framebench/scoring/probe.py:5: 'omit'"]


def answer_mode_words() -> set[str]:
    """Every registered answer mode's name (the core's own ``generate`` and the plugins')."""
    return set(registry.answer_modes())


def answer_mode_homes() -> set[tuple[str, str]]:
    """Where an answer mode's name belongs in the core: the module that defines the mode (the
    core's own ``generate``: ``framebench.answering``), the registry's default, and where the
    same word is an engine capability (``registry.CAPABILITIES``: the ``generate`` capability of
    backends, and the lookup of the mode that uses it)."""
    homes = {("registry.py", "generate")}
    for name, mode in registry.answer_modes().items():
        module = type(mode).__module__
        if module.partition(".")[0] == "framebench":
            homes.add((module.removeprefix("framebench.").replace(".", "/") + ".py", name))
    for capability in set(registry.CAPABILITIES) & answer_mode_words():
        homes |= {(f, capability) for f in ("backends/base.py", "backends/engines.py", "interop/lm_eval_samples.py")}
    return homes


def test_the_core_names_no_answer_mode():
    words = answer_mode_words()
    assert {"generate", "constrained"} <= words
    assert ("answering.py", "generate") in answer_mode_homes()
    assert offenders(CORE, words, allowed=ALLOWED | answer_mode_homes()) == []


def test_the_check_finds_an_answer_mode_literal(tmp_path):
    """It can fail: a core module branching on an answer mode's name is caught."""
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "probe.py").write_text(
        'def f(job):\n    """Constrained jobs keep probabilities."""\n    return job.answer_mode == "constrained"\n')
    assert offenders(tmp_path, answer_mode_words()) == ["framebench/pipeline/probe.py:3: 'constrained'"]
    (tmp_path / "pipeline" / "probe.py").write_text('def f(job):\n    return job.answer_mode == "generate"\n')
    assert offenders(tmp_path, answer_mode_words()) == ["framebench/pipeline/probe.py:2: 'generate'"]


# Where a suite column's word means something of the core's own: the job field
# ``framebench.suite.Job.condition`` (every suite's per-job condition), exported by the interop
# formats as their ``condition`` field.
JOB_CONDITION = {(f"interop/{m}.py", "condition") for m in ("hf_dataset", "lm_eval_tasks", "lm_eval_samples", "samples")}
# An Inspect log's status "success" is Inspect's word, not embodied's column.
INTEROP = {("interop/inspect_log.py", "success")}


def test_the_core_names_no_suite_column_or_simulator_option():
    words = suite_column_words()
    assert {"form", "phrasing", "variant", "option", "distractor", "slot", "condition", "frame",
            "constraint", "percent_complete", "partnr_compat"} <= words
    assert not words & {"bias", "level", "answer", "correct", "output"}  # the core's
    assert offenders(CORE, words, simulator_options(), ALLOWED | JOB_CONDITION | INTEROP) == []


def test_the_check_finds_a_suite_column_literal(tmp_path):
    """It can fail: a core module naming a suite's column (or a simulator's option as a field) is
    caught; its docstring is not."""
    (tmp_path / "viewer").mkdir()
    (tmp_path / "viewer" / "probe.py").write_text(
        '"""Sorts by phrasing."""\n\nORDER = ["bias", "level", "phrasing"]\n\n'
        'def f(settings):\n    return settings.partnr_compat\n')
    assert offenders(tmp_path, suite_column_words(), simulator_options()) == [
        "framebench/viewer/probe.py:3: 'phrasing'", "framebench/viewer/probe.py:6: name partnr_compat"]
