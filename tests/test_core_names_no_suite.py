"""The core is machinery: no suite, task or condition name is a literal in its code (docstrings
and messages may name them). The roof (``framebench/cli``: command names, the demo's dataset
folders) and the registrations in pyproject.toml are where such names belong."""

from __future__ import annotations

import ast
from pathlib import Path

from framebench import registry

CORE = Path(__file__).resolve().parent.parent / "framebench"
# the sweep plan's [embodied] section is the ``framebench embodied`` command's, not the suite's
ALLOWED = {("pipeline/sweep.py", "embodied")}


def suite_words() -> set[str]:
    names: set[str] = set()
    for suite in registry.ordered_suites():
        names |= {suite.name, *suite.task_names(), *(name for name, _ in suite.conditions_listing())}
    return names


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string constant that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def offenders(root: Path, words: set[str]) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith("cli/"):
            continue
        found += [f"framebench/{where}:{line}: {value!r}" for line, value in literals(path)
                  if value in words and (where, value) not in ALLOWED]
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


def plugin_answer_modes() -> set[str]:
    """The registered answer modes that live outside the core (the core's own ``generate`` is
    named only where it is defined, ``framebench.pipeline.text``)."""
    return {name for name, mode in registry.answer_modes().items()
            if type(mode).__module__.partition(".")[0] != "framebench"}


def test_the_core_names_no_answer_mode():
    words = plugin_answer_modes()
    assert "constrained" in words and "generate" not in words
    assert offenders(CORE, words) == []


def test_the_check_finds_an_answer_mode_literal(tmp_path):
    """It can fail: a core module branching on an answer mode's name is caught."""
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "probe.py").write_text(
        'def f(job):\n    """Constrained jobs keep probabilities."""\n    return job.answer_mode == "constrained"\n')
    assert offenders(tmp_path, plugin_answer_modes()) == ["framebench/pipeline/probe.py:3: 'constrained'"]
