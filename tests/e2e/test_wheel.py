"""framebench as others install it: the sdist, a wheel built from that sdist, installed with
--no-deps into a fresh venv that sees this venv's dependencies, beside PyPI's ``embodied`` 1.2.0
(DreamerV3's package, whose top-level name framebench must not share). From a folder outside the
checkout: both import, ``framebench demo --help`` works, and a demo step runs on the packaged demo
data. ``scripts/setup.sh --test`` fetches the embodied sdist once (``EMBODIED_SDIST``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from test_suite_file import check_report, doc_commands, doc_files

REPO = Path(__file__).resolve().parents[2]
EMBODIED_SDIST = REPO / ".venv-cache" / "embodied-1.2.0.tar.gz"
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def run(args: list, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, **kwargs)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def checkout_copy(dest: Path) -> Path:
    """The tracked files only (what a clone has), so nothing built here leaks into the sdist."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        source = REPO / rel
        if source.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def build_sdist_and_wheel(tmp: Path, plant: dict[str, str] | None = None) -> tuple[Path, Path]:
    """The sdist and a wheel built from it, of the tracked files in ``tmp/src`` (plus ``plant``:
    relative path -> text, files added to that copy first)."""
    src = checkout_copy(tmp / "src")
    for rel, text in (plant or {}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    dist = tmp / "dist"
    run([sys.executable, "-c", f"from setuptools import build_meta as b; b.build_sdist({str(dist)!r})"], cwd=src)
    (sdist,) = dist.glob("*.tar.gz")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dist, sdist], cwd=tmp)
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return build_sdist_and_wheel(tmp_path_factory.mktemp("build"))


def top_level_names(wheel: Path) -> set[str]:
    return {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}


def test_the_wheel_installs_one_top_level_package(built):
    _, wheel = built
    name = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"]
    assert wheel.name.startswith(name.replace("-", "_") + "-")
    dist_info = {n for n in top_level_names(wheel) if n.endswith(".dist-info")}
    assert top_level_names(wheel) - dist_info == {"framebench"}
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("framebench/text_eval/framingqa/suite.py", "framebench/embodied/suite.py",
                   "framebench/partnr_adapters/in_container.py", "framebench/demo/framingqa/items.jsonl",
                   "framebench/demo/robotics/episodes.json.gz", "framebench/demo/demo-plan.toml",
                   "framebench/scoring/templates/report.html.j2"):
        assert needed in names, needed
    assert any(n.startswith("framebench/text_eval/framingqa/reviewed/") for n in names)


def mapped_roots(pyproject: Path) -> dict[str, str]:
    """Each folder of the source tree that holds a top-level package of the wheel -> where its files
    land in the wheel: ``framebench/`` itself, and every folder ``[tool.setuptools.package-dir]``
    maps under it (docs/design.md, "One import package")."""
    mapping = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-dir"]
    return {"framebench": "framebench", **{folder: package.replace(".", "/") for package, folder in mapping.items()}}


def left_out(src: Path, wheel: Path) -> dict[str, list[str]]:
    """Folders of the mapped roots (relative to ``src``) with files the wheel lacks -> those files:
    every file under them (Python, templates, data) must be in the wheel, so a new sub-folder that
    ``[tool.setuptools] packages`` or ``package-data`` misses is named here."""
    names = set(zipfile.ZipFile(wheel).namelist())
    missing: dict[str, list[str]] = {}
    for folder, package in mapped_roots(src / "pyproject.toml").items():
        for path in sorted((src / folder).rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(src / folder).as_posix()
            if f"{package}/{rel}" not in names:
                missing.setdefault(path.parent.relative_to(src).as_posix(), []).append(path.name)
    return missing


def test_the_wheel_holds_every_file_of_the_mapped_folders(built):
    _, wheel = built
    src = wheel.parent.parent / "src"
    assert len(mapped_roots(src / "pyproject.toml")) == 5  # framebench, text_eval, embodied, partnr_adapters, demo
    assert left_out(src, wheel) == {}


def test_the_guard_names_a_planted_folder(tmp_path):
    """It can fail: a new sub-folder with Python and one with data only, neither added to
    pyproject.toml, are named (the wheel silently lacks them)."""
    plant = {"embodied/newsim/__init__.py": "X = 1\n", "text_eval/framingqa/newdata/extra.jsonl": "{}\n"}
    _, wheel = build_sdist_and_wheel(tmp_path, plant)
    assert left_out(tmp_path / "src", wheel) == {"embodied/newsim": ["__init__.py"],
                                                 "text_eval/framingqa/newdata": ["extra.jsonl"]}


def test_the_check_sees_a_second_top_level_name(tmp_path):
    """It can fail: a wheel with another top-level folder is caught."""
    fake = tmp_path / "x-0.1-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("framebench/__init__.py", "")
        z.writestr("text_eval/__init__.py", "")
        z.writestr("x-0.1.dist-info/METADATA", "")
    assert top_level_names(fake) - {"x-0.1.dist-info"} == {"framebench", "text_eval"}


def embodied_wheel(tmp: Path) -> Path:
    """PyPI's embodied 1.2.0 is an sdist whose setup.py reads requirements files it does not ship;
    given empty ones, it builds as published."""
    if not EMBODIED_SDIST.exists():
        pytest.skip(f"{EMBODIED_SDIST} missing: scripts/setup.sh --test fetches it")
    with tarfile.open(EMBODIED_SDIST) as tar:
        tar.extractall(tmp, filter="data")
    (src,) = tmp.glob("embodied-1.2.0")
    for missing in ("embodied/requirements.txt", "embodied/agents/dreamerv3/requirements.txt"):
        (src / missing).parent.mkdir(parents=True, exist_ok=True)
        (src / missing).touch()
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp / "w", src], cwd=tmp)
    (wheel,) = (tmp / "w").glob("embodied-*.whl")
    return wheel


def fresh_venv(env_dir: Path) -> tuple[Path, str]:
    """A new venv (its python, its site-packages) that sees this venv's dependencies after its own
    packages, so a wheel installs there with --no-deps."""
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=env_dir).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "zz_test_venv_deps.pth").write_text("".join(f"{p}\n" for p in deps))
    return python, site


INTACT = """
import base64, hashlib, importlib.metadata as md, sys
dist = md.distribution(sys.argv[1])
bad = [str(f) for f in dist.files if f.hash and base64.urlsafe_b64encode(
    hashlib.new(f.hash.mode, f.locate().read_bytes()).digest()).rstrip(b"=").decode() != f.hash.value]
print(dist.version, len(dist.files), bad)
"""


def test_the_wheel_runs_beside_pypi_embodied_from_any_folder(built, tmp_path):
    """embodied installed first, framebench after it (the order that overwrote embodied/__init__.py
    when framebench had a top-level ``embodied``). PyPI's embodied 1.2.0 cannot itself be imported
    as published (its sdist lacks ``embodied/envs``, which its ``__init__`` imports), so its side is
    checked file by file: every file its RECORD lists still has the recorded hash."""
    _, wheel = built
    python, site = fresh_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index"]
    run([*pip, embodied_wheel(tmp_path / "emb")], cwd=tmp_path)
    run([*pip, wheel], cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    version, n_files, changed = run([python, "-c", INTACT, "embodied"], cwd=elsewhere, env=env).stdout.split(" ", 2)
    assert version == "1.2.0" and int(n_files) > 20 and changed.strip() == "[]"
    assert not any((Path(site) / "embodied").rglob("suite.py"))  # none of framebench's files in it
    probe = ("import importlib.util, framebench, framebench.embodied, framebench.text_eval; "
             "print(importlib.util.find_spec('embodied').origin); print(framebench.__file__); "
             "print(framebench.embodied.__file__)")
    paths = run([python, "-c", probe], cwd=elsewhere, env=env).stdout.split()
    assert all(p.startswith(site) for p in paths), paths  # the installed copies, not the checkout
    assert Path(paths[0]).parent.name == "embodied" and Path(paths[2]).parent.parent.name == "framebench"
    assert "Usage" in run([python, "-m", "framebench", "demo", "--help"], cwd=elsewhere, env=env).stdout
    run([python, "-m", "framebench", "text", "--model", "baseline:always-yes", "--data", "demo:framingqa",
         "--out", "runs/yes"], cwd=elsewhere, env=env)
    assert (elsewhere / "runs" / "yes" / "records.parquet").stat().st_size > 0
    listing = run([python, "-m", "framebench", "list", "planners"], cwd=elsewhere, env=env).stdout
    assert "oracle" in listing and "choice:" in listing
    # Inspect names an installed package's tasks itself: framebench/framingqa, as from a checkout
    names = ("from inspect_ai._util.registry import registry_info; import framebench.interop.inspect_tasks as t; "
             "print(registry_info(t.framingqa).name, registry_info(t.omit).name)")
    assert run([python, "-c", names], cwd=elsewhere, env=env).stdout.split() == ["framebench/framingqa", "framebench/omit"]


def test_a_suite_in_one_file_runs_on_the_installed_wheel(built, tmp_path):
    """docs/extending.md's one-file suite, its files written byte for byte into an empty folder and
    its commands run there by the installed ``framebench`` script: nothing but the wheel installed,
    the suite from its file alone."""
    _, wheel = built
    python, site = fresh_venv(tmp_path / "venv")
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp_path)
    env_dir = python.parent.parent
    empty = tmp_path / "empty"
    empty.mkdir()
    for name, text in doc_files().items():
        (empty / name).write_bytes(text.encode("utf-8"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outputs = [run([env_dir / "bin" / command[0], *command[1:]], cwd=empty, env=env).stdout for command in doc_commands()]
    assert "scored 14 records from 2 run(s)" in outputs[-1]
    check_report(json.loads((empty / "report" / "report.json").read_text()))
    origin = run([python, "-c", "import framebench; print(framebench.__file__)"], cwd=empty, env=env).stdout
    assert origin.startswith(site)
