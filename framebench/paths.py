"""Ids that become file names: checked, never used as paths unchecked; and where data arguments
point (a path, or ``demo:NAME`` for a demo dataset installed with framebench)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from framebench.errors import UserError

SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=,-]{0,199}$")


def check_safe_name(value: str, where: str) -> str:
    """``value`` when it can be a single file name (no separators, no leading dot); else a UserError."""
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        shown = repr(value)[:60]
        raise UserError(f"{where}: {shown} cannot name a file (use letters, digits and _ - . : @ + = , "
                        "and do not start with a dot)")
    return value


def child_path(folder: Path, name: str, suffix: str = "") -> Path:
    """``folder / (name + suffix)`` after checking that it stays inside ``folder``."""
    check_safe_name(name, str(folder))
    path = folder / f"{name}{suffix}"
    if path.resolve().parent != folder.resolve():
        raise UserError(f"{folder}: {name!r} would leave the folder")
    return path


def check_out_folder(out: Path, flag: str = "--out") -> Path:
    """``out`` can be (or become) a folder: neither it nor a parent is an existing file."""
    out = Path(out)
    for candidate in (out, *out.parents):
        if candidate.exists():
            if not candidate.is_dir():
                shown = out if candidate == out else f"{out} (its parent {candidate})"
                raise UserError(f"{flag} {shown}: exists and is not a folder")
            break
    return out


def check_out_file(out: Path, flag: str = "--out") -> Path:
    """``out`` can be written as a file: it is not a folder and its parent can be a folder."""
    out = Path(out)
    if out.is_dir():
        raise UserError(f"{flag} {out}: is a folder; name a file")
    check_out_folder(out.parent, flag)
    return out


PROJECT_ROOT = Path(__file__).resolve().parent.parent


def display_path(path: str | Path) -> str:
    """A path as reports show it: relative to the working directory, else to the project (the
    demo's own datasets), else as given; never this machine's absolute path when avoidable."""
    given = Path(path)
    if not given.is_absolute():
        return str(given)
    resolved = given.resolve()
    for base in (Path.cwd().resolve(), PROJECT_ROOT):
        if base.parent != base and resolved.is_relative_to(base):  # never relative to "/"
            return str(resolved.relative_to(base)) or "."
    return str(given)


DEMO_SCHEME = "demo:"


def demo_root() -> Path:
    """The demo datasets as installed: the package data of ``framebench.demo`` (``datasets/demo``
    in a checkout)."""
    return Path(str(resources.files("framebench.demo")))


def demo_datasets() -> list[str]:
    return sorted(p.name for p in demo_root().iterdir() if p.is_dir() and not p.name.startswith("_"))


def data_path(value: str | Path) -> Path:
    """A data argument (``--data``, ``--episodes``, a sweep plan's datasets): a path as given, or
    ``demo:NAME[/FILE]``, a demo dataset installed with framebench, from any folder."""
    text = str(value)
    if not text.startswith(DEMO_SCHEME):
        return Path(value)
    name = text.removeprefix(DEMO_SCHEME).strip("/")
    target = demo_root() / name
    if not name or ".." in Path(name).parts or not target.exists():
        raise UserError(f"{text}: no such demo dataset (demo datasets: "
                        f"{', '.join(DEMO_SCHEME + d for d in demo_datasets())})")
    return target
