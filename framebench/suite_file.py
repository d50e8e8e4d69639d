"""A suite from a Python file, registered without installing anything: ``--suite FILE.py:OBJECT``
(``framebench text``, ``framebench score``). The file is run as a module of its own; ``OBJECT``
must be a ``framebench.plugin.Suite``. Every mistake (no colon, no file, a file that fails to
import, no such object, not a suite) is one line naming the file and what to pass."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from framebench.errors import UserError
from framebench.registry import add_suite
from framebench.suite import Suite

USAGE = "expected FILE.py:OBJECT, e.g. my_suite.py:MY_SUITE"


def _module(path: Path, where: str) -> ModuleType:
    name = f"framebench_suite_file_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{where}: {path} is not a Python file ({USAGE})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a class's module up there
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any failure of the user's file is one line, not a traceback
        sys.modules.pop(name, None)
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path.resolve()]
        if isinstance(exc, SyntaxError) and exc.lineno:
            lines.append(exc.lineno)
        line = f" (line {lines[-1]})" if lines else ""
        raise UserError(f"{where}: {path} failed to import{line}: {type(exc).__name__}: {exc}") from None
    return module


def load_suite_file(spec: str) -> Suite:
    """The suite ``spec`` (``FILE.py:OBJECT``) names, checked, not yet registered."""
    where = f"--suite {spec}"
    file, colon, attr = spec.rpartition(":")
    if not colon or not file or not attr.isidentifier():
        raise UserError(f"{where}: {USAGE}")
    path = Path(file)
    if not path.is_file():
        raise UserError(f"{where}: no such file {path}" + (" (a folder)" if path.is_dir() else ""))
    module = _module(path, where)
    if not hasattr(module, attr):
        found = [n for n, v in vars(module).items() if isinstance(v, Suite)]
        raise UserError(f"{where}: {path} has no {attr} (its suites: {', '.join(found) or 'none'})")
    suite = getattr(module, attr)
    if not isinstance(suite, Suite):
        raise UserError(f"{where}: {attr} is a {type(suite).__name__}, not a framebench Suite "
                        "(framebench.plugin.text_suite or Suite)")
    return suite


def add_suite_files(specs: Iterable[str] | None) -> list[str]:
    """Register each ``FILE.py:OBJECT`` suite for this process; their names."""
    names = []
    for spec in specs or ():
        suite = load_suite_file(spec)
        add_suite(suite, f"--suite {spec}")
        names.append(suite.name)
    return names
