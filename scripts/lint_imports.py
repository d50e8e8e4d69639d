"""Check the import contracts (pyproject.toml, [tool.importlinter]) on the package as it installs.

The repository keeps the suites in top-level folders that setuptools' package-dir maps under
``framebench`` (``text_eval/`` is ``framebench.text_eval``). import-linter reads a package from the
folders on disk and does not follow that mapping, so this lays the package out as the wheel does
(links to the sources, in a temporary folder) and runs import-linter there. Beside it go the
test-only plugins the contracts also check (``PLUGINS``: a third party's answer mode).

    python scripts/lint_imports.py [import-linter options]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Import packages outside the wheel that pyproject.toml's contracts name (root_packages).
PLUGINS = {"framebench_firstword": "tests/plugins_answer_mode/framebench_firstword"}


def package_dirs(repo: Path = REPO) -> dict[str, Path]:
    """Each import package -> its folder in the repository: the mapped ones, framebench itself and
    the checked plugins."""
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = {**config["tool"]["setuptools"].get("package-dir", {}), **PLUGINS}
    return {"framebench": repo / "framebench", **{name: repo / folder for name, folder in mapped.items()}}


def stage(dest: Path, repo: Path = REPO) -> Path:
    """The installed layout under ``dest`` (symbolic links to the source files; only .py files)."""
    for name, folder in package_dirs(repo).items():
        target = dest.joinpath(*name.split("."))
        for source in folder.rglob("*.py"):
            rel = source.relative_to(folder)
            if "__pycache__" in rel.parts or any(p.startswith(".") for p in rel.parts):
                continue
            link = target / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(source)
    return dest


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="framebench-layout-") as tmp:
        staged = stage(Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(staged)}
        code = ("import sys; from importlinter.cli import lint_imports_command; "
                "sys.exit(lint_imports_command())")
        args = ["--config", str(REPO / "pyproject.toml"), "--no-cache", *argv]
        return subprocess.run([sys.executable, "-c", code, *args], cwd=staged, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
