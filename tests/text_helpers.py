"""Helpers shared by the text-evaluator tests (tests/text/test_text_*.py, tests/core/test_backend_*.py) and the
in-process CLI tests (cli_run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def cli_exit_code(*args: str) -> int:
    """Run ``framebench ARGS`` in-process; its exit code."""
    from framebench.cli import main

    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def cli_run(*argv: str) -> tuple[int, str, str]:
    """Run ``framebench ARGV`` in-process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from framebench.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def make_varied_model(src: Path, dest: Path, std: float = 0.3, seed: int = 1) -> Path:
    """A copy of the tiny random Llama with larger random weights.

    The conftest model's default init (std 0.02) gives near-uniform logits and greedy outputs of
    only newlines, which would make equality tests vacuous; larger weights give varied outputs.
    """
    import torch
    from transformers import AutoModelForCausalLM

    if (dest / "model.safetensors").exists():
        return dest
    model = AutoModelForCausalLM.from_pretrained(src)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, param in sorted(model.named_parameters()):
            if param.dim() >= 2:
                param.copy_(torch.randn(param.shape, generator=gen) * std)
    model.save_pretrained(dest)
    for f in src.iterdir():
        if f.is_file() and ("token" in f.name or f.suffix == ".jinja"):
            shutil.copy(f, dest / f.name)
    return dest


def write_items(path: Path, items: list[dict]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    return path


def framingqa_items(n_contexts: int = 3, per_context: int = 4) -> list[dict]:
    """Small FramingQA-shaped items: per context, binary (gold alternating Yes/No) and MC items."""
    contexts = [
        "The tenant sued the landlord because the heating failed in winter.",
        "A patient presented with fever and cough after travelling abroad.",
        "The bank charged an overdraft fee although the account was in credit.",
        "The robot placed the cup on the table next to the sink.",
        "Should you act or not act when the neighbour asks for help?",
    ]
    options = ["Housing", "Family", "Crime", "Torts"]
    items = []
    for c in range(n_contexts):
        text = " ".join(contexts[(c + k) % len(contexts)] for k in range(3))
        for k in range(per_context):
            fmt = "binary" if k % 2 == 0 else "mc"
            bias = ["neutral", "correct", "incorrect"][k % 3] if fmt == "mc" else ["correct", "incorrect"][k % 2 // 1]
            items.append({
                "item_id": f"ctx{c}-{fmt}-{k}", "context_id": f"ctx{c}", "suite": "framingqa",
                "task": ["law_issue_spotting", "finance", "medicine"][c % 3], "format": fmt,
                "bias": bias, "level": "" if bias == "neutral" else "root",
                "form": "" if bias == "neutral" else "plain", "phrasing": "Q1" if bias != "neutral" else "",
                "option": "", "distractor": "", "slot": f"{bias}/{k}",
                "gold": ("Yes" if k % 4 == 0 else "No") if fmt == "binary" else "ABCD"[k % 4],
                "text": text,
                "question": f"Question {k}: is the issue about {options[k % 4].lower()}?" + " Think." * (k % 3),
                "options": options if fmt == "mc" else [],
            })
    return items
