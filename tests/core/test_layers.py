"""The layering (docs/design.md) holds: the framebench core imports no suite package, the CLI and
the API are the roof, and sibling modules have no import cycles (import-linter contracts in
pyproject.toml)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def staged(dest: Path) -> Path:
    """The package laid out as installed (``scripts/lint_imports.py``)."""
    spec = importlib.util.spec_from_file_location("lint_imports", REPO / "scripts" / "lint_imports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.stage(dest)


@pytest.mark.subprocess
def test_import_contracts_are_kept():
    proc = subprocess.run([sys.executable, REPO / "scripts" / "lint_imports.py"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in proc.stdout


@pytest.mark.subprocess
@pytest.mark.parametrize("module, line", [
    ("framebench_firstword/mode.py", "from framebench.pipeline.answers import pack_calls"),
    ("framebench/text_eval/constrained.py", "from framebench.registry import suite"),
])
def test_answer_modes_may_import_only_the_answering_contract(tmp_path, module, line):
    """The answer-mode contract breaks on a mode that reaches past ``framebench.answering``."""
    layout = staged(tmp_path / "layout")
    probe = layout / module
    source = probe.resolve().read_text()
    probe.unlink()
    probe.write_text(source + f"\n{line}  # noqa\n")
    proc = subprocess.run([*LINT, "--no-cache", "--config", str(REPO / "pyproject.toml")], cwd=layout,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(layout), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and "Contracts: 4 kept, 1 broken." in proc.stdout, proc.stdout + proc.stderr
    assert "import only framebench.answering and\nthe backends BROKEN" in proc.stdout, proc.stdout


@pytest.mark.subprocess
def test_contracts_catch_an_upward_import(tmp_path):
    """The same contracts break on a core module that imports a suite (the check can fail)."""
    layout = staged(tmp_path / "layout")
    config = tmp_path / "contracts.ini"
    config.write_text(
        "[importlinter]\nroot_packages =\n    framebench\n    fb_probe\n\n"
        "[importlinter:contract:core]\nname = probe\ntype = forbidden\n"
        "source_modules =\n    fb_probe\nforbidden_modules =\n    framebench.text_eval\n")
    probe = layout / "fb_probe"
    probe.mkdir()
    (probe / "__init__.py").write_text("from framebench.text_eval import suite  # noqa\n")
    proc = subprocess.run([*LINT, "--no-cache", "--config", str(config)], cwd=layout,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(layout), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and "fb_probe -> framebench.text_eval" in proc.stdout, proc.stdout + proc.stderr


def test_no_framebench_module_names_a_suite_package():
    """Not even under TYPE_CHECKING: framebench reaches suites only through its registries."""
    import re

    pattern = re.compile(r"^\s*(from|import)\s+(text_eval|embodied|partnr_adapters)\b", re.M)
    root = Path(__file__).resolve().parents[2] / "framebench"
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_unknown_answer_mode_is_a_user_error():
    from framebench.errors import UserError
    from framebench.registry import answer_mode
    from framebench.text_eval.constrained import CONSTRAINED

    assert answer_mode("constrained") is CONSTRAINED
    with pytest.raises(UserError, match="no answer mode 'nope'"):
        answer_mode("nope")


@pytest.mark.subprocess
def test_cycles_through_lazy_and_type_checking_imports_count(tmp_path):
    """The contracts see imports inside functions and under TYPE_CHECKING (both hid the old
    records -> registry -> suite -> records cycle), and pyproject.toml keeps them counted."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["exclude_type_checking_imports"] is False
    probe = tmp_path / "fb_cycle"
    probe.mkdir()
    (probe / "__init__.py").write_text("")
    (probe / "a.py").write_text("def f():\n    from fb_cycle import b  # noqa\n")
    (probe / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fb_cycle import a  # noqa\n")
    ini = tmp_path / "contracts.ini"
    ini.write_text("[importlinter]\nroot_packages =\n    fb_cycle\nexclude_type_checking_imports = False\n\n"
                   "[importlinter:contract:cycles]\nname = probe\ntype = acyclic_siblings\n"
                   "ancestors =\n    fb_cycle\n")
    proc = subprocess.run([*LINT, "--no-cache", "--config", str(ini)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and "BROKEN" in proc.stdout, proc.stdout + proc.stderr
