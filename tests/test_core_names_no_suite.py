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
