"""Content hashes of a run folder, recorded when it is written and checked before it is read.

``write_run`` records in run.json the sha256 of every file it wrote (``files``: name -> hex) and
seals run.json itself (``sha256``: the hash of its canonical JSON without that key). ``score`` and
``view`` call ``verify_run`` first: a file that changed after the run wrote it (a flipped bit, an
edit, a copy cut short) is one line naming it, unless the user forces the read (then it is a
warning). Folders without these keys (written before they existed, or records made by hand) are
read as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from framebench.errors import UserError
from framebench.runinfo import RUN_FILE, SEAL_KEY, content_seal, file_sha256

FILES_KEY = "files"
FORCE_HINT = "pass --force to read it anyway"


class IntegrityError(UserError):
    """A run folder's file does not match the hash its run.json recorded."""


def file_hashes(run_dir: str | Path, names: Iterable[str]) -> dict[str, str]:
    """``name -> sha256`` of the named files of ``run_dir`` (as written, before run.json)."""
    return {name: file_sha256(Path(run_dir) / name) for name in names}


def run_problems(run_dir: str | Path) -> list[str]:
    """Each way the folder differs from what its run.json recorded (empty: it verifies)."""
    run_dir = Path(run_dir)
    path = run_dir / RUN_FILE
    if not path.exists():
        return []
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [f"{path}: not readable JSON ({str(exc)[:80]}): damaged after the run wrote it"]
    if not isinstance(info, dict):
        return [f"{path}: not a JSON object: damaged after the run wrote it"]
    problems = []
    if SEAL_KEY in info and info[SEAL_KEY] != content_seal(info):
        problems.append(f"{path}: content does not match its sha256 (edited or damaged after the run wrote it)")
    files = info.get(FILES_KEY)
    if files is None:
        return problems
    if not isinstance(files, dict):
        return [*problems, f"{path}: field '{FILES_KEY}' must be an object {{file: sha256}}"]
    for name, expected in sorted(files.items()):
        target = run_dir / str(name)
        if Path(str(name)).name != name or not target.is_file():
            problems.append(f"{target}: missing (run.json records its sha256)")
        elif file_sha256(target) != expected:
            problems.append(f"{target}: sha256 does not match run.json (the file changed after the run wrote it)")
    return problems


def verify_run(run_dir: str | Path, force: bool = False) -> list[str]:
    """Raise ``IntegrityError`` on the first problem; with ``force`` return them (for warnings)."""
    problems = run_problems(run_dir)
    if problems and not force:
        raise IntegrityError(f"{problems[0]}; {FORCE_HINT}")
    return problems
