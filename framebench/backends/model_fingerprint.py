"""What a local model's answers depend on, shared by ``hf:`` and ``vllm:``: the model folder, its
weights hash (sha256 per weights file, cached by path, size and mtime) and the chat template.

The fingerprint ``ENGINE:weights=...:template=...`` keys the result store, so two engines serving
the same folder store apart while their weights hashes agree.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from framebench.errors import UserError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
HUB_PATTERNS = ["*.json", "*.safetensors", "*.jinja", "*.model", "*.txt", "*.tiktoken"]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def engine_fingerprint(engine: str, weights_hash: str, template_hash: str) -> str:
    """What a local model's answers depend on: the engine, its weights and its chat template."""
    return f"{engine}:weights={weights_hash}:template={template_hash}"


def check_local_model(path: str) -> Path | None:
    """The local model folder ``path`` names (it must hold config.json); None for a hub id; a
    path that names no model folder is a user error (checked without loading anything)."""
    local = Path(path).expanduser()
    if local.is_dir():
        if not (local / "config.json").exists():
            raise UserError(f"{path}: not a model folder (no config.json)")
        return local
    if local.exists() or path.startswith((".", "/", "~")):
        raise UserError(f"{path}: not a model folder")
    return None


def resolve_model_dir(path: str) -> Path:
    """A local model folder (must hold config.json), or a hub id fetched (or reused) as a snapshot
    so its weights can be hashed; anything else is a user error."""
    local = check_local_model(path)
    if local is not None:
        return local
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(path, allow_patterns=HUB_PATTERNS))
    except Exception as exc:  # hub errors come in many types; all mean "cannot get it"
        raise UserError(f"{path}: not a local folder and not downloadable from the hub ({exc})") from None


def _hash_cache_file() -> Path:
    from framebench.backends.smollm2 import cache_root

    return cache_root() / "weight-hashes.json"


def weights_hashes(model_dir: str | Path) -> dict[str, str]:
    """sha256 of each weights file in a model folder, cached by (path, size, mtime)."""
    from framebench.files import file_sha256, write_json_atomic
    model_dir = Path(model_dir)
    files = sorted(p for p in model_dir.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        raise UserError(f"{model_dir}: no weights files ({', '.join(WEIGHT_SUFFIXES)}) found")
    cache_file = _hash_cache_file()
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    hashes: dict[str, str] = {}
    changed = False
    for path in files:
        st = path.stat()
        key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if key not in cache:
            cache[key] = file_sha256(path)
            changed = True
        hashes[path.name] = cache[key]
    if changed:
        try:
            write_json_atomic(cache, cache_file)
        except OSError:  # a read-only cache only costs re-hashing next time
            pass
    return hashes


def model_weights_hash(model_dir: str | Path) -> str:
    """One hash over every weight file of a local model folder."""
    return text_sha256(json.dumps(weights_hashes(model_dir), sort_keys=True))


def generation_eos_ids(model_dir: Path | None, tokenizer: Any) -> list[int]:
    """The ids generation stops at: generation_config.json's eos, else the tokenizer's."""
    eos = None
    if model_dir is not None:
        try:
            eos = json.loads((Path(model_dir) / "generation_config.json").read_text()).get("eos_token_id")
        except (OSError, ValueError):
            pass
    if eos is None:
        eos = getattr(tokenizer, "eos_token_id", None)
    return [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None]


class LocalModelFingerprint:
    """Identity methods of a backend over a local model folder (``model_dir``, ``engine``,
    ``chat_template_hash``); ``hf:`` and ``vllm:`` share them."""

    engine: str
    model_dir: Path | None
    chat_template_hash: str
    _fingerprint: str | None = None

    def weights_hash(self) -> str:
        if self.model_dir is None:
            raise RuntimeError(f"{self.engine}: a model built in memory has no weights folder to hash")
        return model_weights_hash(self.model_dir)

    def fingerprint(self) -> str:
        """Weights hash and chat-template hash, both of which change what the model answers."""
        if self._fingerprint is None:
            self._fingerprint = engine_fingerprint(self.engine, self.weights_hash(), self.chat_template_hash)
        return self._fingerprint
