"""Shared fixtures (local data, a tiny random Llama with an in-test tokenizer, SmolLM2) and the test tiers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# Ray on loopback only: without this Ray resolves 127.0.0.1 to the host's interface address.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

REPO = Path(__file__).resolve().parent.parent
# test modules of one area import helpers from another's (test_plugins' cli); a run of one folder finds them
sys.path[1:1] = [str(p) for p in sorted(Path(__file__).parent.iterdir())
                 if p.is_dir() and p.name in {"core", "text", "embodied", "partnr", "interop", "e2e"}]
SHARED_DATA = Path(os.environ.get("FRAMEBENCH_SHARED_DATA", REPO.parent / "shared" / "data"))

TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_SENTENCES = [
    "Is the answer yes or no?", "Answer with A, B, C or D.", "The tenant sued the landlord.",
    "A patient presented with fever and cough.", "The bank charged an overdraft fee.",
    "Yes", "No", "The robot placed the cup on the table.", "Should you act or not act?",
    "Consider the relevant moral principles before you answer.",
] * 10


# What a test starts, by marker (registered in pyproject.toml); a test with none of them is in the
# fast tier (`pytest -m fast`, docs/testing.md).
HEAVY_MARKERS = ("slow", "browser", "vllm", "model", "server", "cluster", "subprocess")
# Fixtures that start something mark every test that uses them, directly or through another fixture.
FIXTURE_MARKERS = {"smollm2_dir": "model", "tiny_llama_dir": "model", "httpserver": "server"}


@pytest.hookimpl(tryfirst=True)  # before -m selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if not any(item.get_closest_marker(name) for name in HEAVY_MARKERS):
            item.add_marker("fast")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared source data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """A random-weight Llama (~100k params) with a BPE tokenizer trained here; saved to disk."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from tokenizers import decoders as tk_decoders
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = tk_decoders.ByteLevel()
    raw.train_from_iterator(_SENTENCES, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                  pad_token="<pad>", unk_token="<|endoftext|>")
    tok.chat_template = TINY_CHAT_TEMPLATE
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg)
    out = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The packaged SmolLM2 converted once to a cached HF directory (skips if not installed)."""
    from framebench.backends import smollm2

    try:
        return smollm2.smollm2_dir()
    except Exception as exc:  # missing package -> skip, not fail, outside CI
        if os.environ.get("CI"):
            raise
        pytest.skip(f"SmolLM2 unavailable: {exc}")
