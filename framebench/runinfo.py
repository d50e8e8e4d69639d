"""``RUN_DIR/run.json``: what produced a records file (model, fingerprint, decoding, code, data)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

RUN_FILE = "run.json"
SEAL_KEY = "sha256"  # run.json's seal: the hash of its own content (framebench.integrity checks it)


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def code_version() -> str:
    """Package version plus the git commit of the checkout, when there is one."""
    from framebench import __version__

    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        return f"{__version__}+g{commit}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return __version__


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(text: str | bytes, path: str | Path) -> Path:
    """Write a file via temp file + rename, so readers never see it half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual file mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json_atomic(data: Any, path: str | Path) -> Path:
    return write_text_atomic(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", path)


def read_run_info(run_dir: str | Path) -> dict[str, Any] | None:
    """The run.json of ``run_dir`` when there is a readable one (else None)."""
    path = Path(run_dir) / RUN_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_reuse(run_dir: str | Path, identity: dict[str, Any], force: bool = False) -> None:
    """Refuse to write a different run into a folder that holds one (unless ``force``).

    ``identity`` holds what makes a run the same run (model as asked, dataset hash, selection);
    it is stored in run.json and compared on the next invocation, before any model is loaded.
    With ``force`` the old run.json is removed, so the history starts again.
    """
    from framebench.errors import UserError

    run_dir = Path(run_dir)
    previous = read_run_info(run_dir)
    if previous is None:
        return
    stored = previous.get("identity")
    if not isinstance(stored, dict):
        stored = {k: previous[k] for k in ("dataset_hash",) if k in previous and k in identity}
    differs = sorted(k for k in stored if k in identity and stored[k] != identity[k])
    if not differs:
        return
    if force:
        (run_dir / RUN_FILE).unlink(missing_ok=True)
        return
    changes = []
    for key in differs:
        old, new = stored[key], identity[key]
        if isinstance(old, dict) and isinstance(new, dict):
            changes += [f"{key}.{k} {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new))
                        if old.get(k) != new.get(k)]
        else:
            changes.append(f"{key} {str(old)[:40]!r} -> {str(new)[:40]!r}")
    raise UserError(f"{run_dir}: holds another run ({'; '.join(changes)}); choose another --out, or pass "
                    "--force to replace its records")


def _host() -> str:
    import socket

    return socket.gethostname()


def write_run_info(run_dir: str | Path, *, run_id: str, model: str, fingerprint: str,
                   decoding: dict[str, Any], dataset_hash: str, started: str,
                   code: str | None = None, **extra: Any) -> Path:
    """Write run.json with the contract fields (plus any extra, e.g. chat_template_hash).

    On a resumed run the first invocation's ``started``/``finished``/``host`` stay at the top and
    every invocation is appended to ``history`` (when, where, what it generated)."""
    finished = now_iso()
    version = code or code_version()  # ``code``: what made records no code computed (authored ones)
    entry = {"started": started, "finished": finished, "host": _host(), "code_version": version,
             **{k: extra[k] for k in ("n_generated", "n_from_store", "seconds") if k in extra}}
    previous = read_run_info(run_dir)
    history: list[dict[str, Any]] = []
    first = entry
    if previous is not None and previous.get("run_id") == run_id:
        old = previous.get("history")
        history = old if isinstance(old, list) else [
            {k: previous[k] for k in ("started", "finished", "host", "code_version") if k in previous}]
        first = {k: previous.get(k, entry[k]) for k in ("started", "finished", "host")}
    info = {
        **extra,
        "run_id": run_id,
        "model": model,
        "model_fingerprint": fingerprint,
        "decoding": decoding,
        "code_version": version,
        "dataset_hash": dataset_hash,
        "started": first["started"],
        "finished": first["finished"],
        "host": first["host"],
        "history": [*history, entry],
    }
    return write_sealed(info, run_dir)


def content_seal(info: dict[str, Any]) -> str:
    """sha256 of run.json's content without its seal, as it reads back from the file."""
    body = json.loads(json.dumps({k: v for k, v in info.items() if k != SEAL_KEY}, default=str))
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def sealed(info: dict[str, Any]) -> dict[str, Any]:
    return {**info, SEAL_KEY: content_seal(info)}


def write_sealed(info: dict[str, Any], run_dir: str | Path) -> Path:
    """Write run.json sealed with the hash of its content (checked by ``framebench.integrity``)."""
    return write_json_atomic(sealed(info), Path(run_dir) / RUN_FILE)

