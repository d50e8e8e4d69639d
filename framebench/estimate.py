"""``framebench estimate``: what a text run will send before it sends anything.

The jobs are selected exactly as ``framebench text`` selects them (same items, tasks, formats,
limit, conditions and answer mode). From them:

- requests: one per job; ``--answer constrained`` scores each prompt (no text generated) and, for
  a suite whose job reasons first (OMIT M1, M4), also generates the reasoning;
- input tokens: every request's prompt counted with the model's own chat tokenizer where its
  engine declares one (``Engine.tokenizer``: hf, smollm2, vllm), else approximated as one token per
  four characters of the messages (said so in the output);
- the prefix a request shares with an earlier one (a prefix cache or framebench's prefix reuse
  computes it once): the prompts' token sequences as a trie, and the tokens left to compute;
- output tokens: the decoding's ``max_new_tokens`` summed (an upper bound), and, with a timed
  sample, the mean the model actually generated;
- time: from a timed sample of requests on the real model (``sample``; the model loads once), or
  from a rate the user measured on the server (``rate``, requests per second);
- cost: from the prices the user gives (per million input and output tokens), never a built-in
  price list.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framebench.backends.base import Chat, Decoding
from framebench.backends.prefix_trie import unique_tokens
from framebench.suite import Job

CHARS_PER_TOKEN = 4  # the approximation where the engine declares no tokenizer


@dataclass(frozen=True)
class Reference:
    """Seconds per generating request of a model size on a machine, for planning a run elsewhere
    (docs/speed.md, "The full build per model size"): ``basis`` says whether it was measured on
    the full build's items or projected."""

    model: str
    machine: str
    seconds_per_request: float
    basis: str


REFERENCES = (
    Reference("SmolLM2-135M (fp32)", "a 2-core CPU", 0.18, "measured on 467 full-build law items, a quiet "
              "machine; the longest contexts of the build"),
    Reference("1.7B (bf16)", "one H200", 0.0221, "projected from the rate measured on the demo's law items, "
              "random weights of the shape; not measured on the full build, nor on an H100"),
    Reference("8B (bf16)", "one H200", 0.0240, "projected from the rate measured on the demo's law items, "
              "random weights of the shape; not measured on the full build, nor on an H100"),
)


@dataclass(frozen=True)
class Sample:
    """A timed sample: ``requests`` requests (``generated`` of them generating text) took ``seconds``."""

    requests: int
    generated: int
    seconds: float
    output_tokens: int


@dataclass
class Estimate:
    model: str
    items: int
    requests: int
    generating: int  # requests that generate text (the rest are scored)
    input_tokens: int
    uncached_input_tokens: int  # after prefix sharing
    max_output_tokens: int
    tokens_from: str  # "the model's tokenizer" or the approximation
    sample: Sample | None = None
    rate: float | None = None  # requests per second, measured by the user
    prices: tuple[float, float] | None = None  # per million input / output tokens
    notes: list[str] = field(default_factory=list)

    @property
    def output_tokens(self) -> float:
        """Expected output tokens: the sample's mean per generating request, else the bound."""
        if self.sample is not None and self.sample.generated:
            return self.sample.output_tokens / self.sample.generated * self.generating
        return float(self.max_output_tokens)

    @property
    def seconds(self) -> float | None:
        if self.rate:
            return self.requests / self.rate
        if self.sample is not None and self.sample.requests:
            return self.sample.seconds / self.sample.requests * self.requests
        return None

    def cost(self, input_tokens: float, output_tokens: float) -> float | None:
        if self.prices is None:
            return None
        price_in, price_out = self.prices
        return (input_tokens * price_in + output_tokens * price_out) / 1e6


def select_jobs(data: Path, tasks: Any, formats: Any, limit: int | None, conditions: Sequence[str],
                answer: str) -> tuple[list[Job], int]:
    """The jobs ``framebench text`` would run, and the number of items they come from."""
    from framebench.errors import UserError
    from framebench.items import ITEMS_FILE, read_items
    from framebench.paths import data_path
    from framebench.pipeline.text import build_jobs, check_conditions_apply, select_items

    data = data_path(data)
    items_path = data / ITEMS_FILE if data.is_dir() else data
    items = select_items(read_items(items_path), tasks, formats, limit)
    if not items:
        raise UserError(f"{items_path}: no items match the selection (tasks={tasks}, formats={formats})")
    check_conditions_apply(items_path, items, list(conditions))
    return build_jobs(items, conditions, items_path, answer), len(items)


def reasons_first(job: Job) -> bool:
    from framebench.registry import suite

    return suite(job.item["suite"]).items.reasons_first(job)


def scores_answers(job: Job) -> bool:
    """Whether the job's answer mode scores the allowed answers (keeps their probabilities)."""
    from framebench.registry import answer_mode

    return answer_mode(job.answer_mode).keeps_probs


def generates(job: Job) -> bool:
    """Whether answering the job generates text (generate mode, or reasoning before a score)."""
    return not scores_answers(job) or reasons_first(job)


def counter(spec: str) -> tuple[Callable[[Chat], list[int]], Callable[[str], int], str]:
    """(chat -> tokens, text -> token count, what the counts come from) for a model spec."""
    from framebench.backends import DEFAULT_MODEL
    from framebench.registry import check_model

    spec = spec or DEFAULT_MODEL
    engine = check_model(spec)  # its ARG checked: a tokenizer is never asked for a model that is not there
    if engine.tokenizer is not None:
        tok = engine.tokenizer(spec.partition(":")[2])
        return tok.encode, tok.count, "the model's own tokenizer and chat template"

    def approx_chat(chat: Chat) -> list[int]:
        text = "\n".join(m["content"] for m in chat)
        return [ord(c) for c in text]  # characters: the trie below shares prefixes of characters

    return approx_chat, lambda text: math.ceil(len(text) / CHARS_PER_TOKEN), \
        f"an approximation: one token per {CHARS_PER_TOKEN} characters (the engine declares no tokenizer)"


def estimate(spec: str, jobs: list[Job], items: int, *, sample: int = 0, rate: float | None = None,
             prices: tuple[float, float] | None = None, model_args: Mapping[str, Any] | None = None) -> Estimate:
    from framebench.backends import DEFAULT_MODEL
    from framebench.registry import check_model

    _check_settings(sample, rate, prices)
    check_model(spec or DEFAULT_MODEL, model_args)  # -M as the run would take them, before any model loads
    encode, count, source = counter(spec)
    ids = [encode(job.chat) for job in jobs]
    approximate = "approximation" in source
    per_char = (lambda n: math.ceil(n / CHARS_PER_TOKEN)) if approximate else (lambda n: n)
    input_tokens = sum(per_char(len(x)) for x in ids)
    uncached = per_char(unique_tokens(ids))
    generating = [j for j in jobs if generates(j)]
    extra = sum(1 for j in jobs if scores_answers(j) and reasons_first(j))
    result = Estimate(spec, items, len(jobs) + extra, len(generating), input_tokens, uncached,
                      sum(j.decoding.max_new_tokens or 0 for j in generating), source, rate=rate, prices=prices)
    if sample:
        result.sample = timed_sample(spec, jobs, sample, count, model_args or {})
    return result


def _check_settings(sample: int, rate: float | None, prices: tuple[float, float] | None) -> None:
    """The command line's rules (``framebench.bounds``), for a caller of ``estimate`` from Python."""
    from framebench.bounds import PRICE, RATE, SAMPLE

    SAMPLE.check(sample, "--sample")
    if rate is not None:
        RATE.check(rate, "--rate")
    for flag, price in zip(("--price-in", "--price-out"), prices or (), strict=False):
        PRICE.check(price, flag)


def spread(jobs: list[Job], n: int) -> list[Job]:
    """At least ``n`` jobs (or all): whole contexts, taken evenly over the list, so the sample is
    batched and shares prompt prefixes as a run does, and every task and format is represented."""
    contexts: dict[str, list[Job]] = {}
    for job in jobs:
        contexts.setdefault(str(job.item.get("context_id", job.record_id)), []).append(job)
    groups = list(contexts.values())
    if n >= len(jobs):
        return list(jobs)
    per_context = len(jobs) / len(groups)
    k = max(1, math.ceil(n / per_context))
    step = len(groups) / k
    return [job for i in range(k) for job in groups[int(i * step)]]


def timed_sample(spec: str, jobs: list[Job], n: int, count: Callable[[str], int],
                 model_args: Mapping[str, Any]) -> Sample:
    """Answer ``n`` of the jobs with the real model and time it; one request first, untimed, loads
    the model and warms it up."""
    from framebench.backends import load_backend

    chosen = spread(jobs, n)
    backend = load_backend(spec, **dict(model_args))
    _answer(backend, chosen[:1])
    start = time.perf_counter()
    outputs = _answer(backend, chosen)
    seconds = time.perf_counter() - start
    generate = [j for j in chosen if generates(j)]
    return Sample(len(chosen), len(generate), seconds, sum(count(text) for text in outputs))


def _answer(backend: Any, jobs: list[Job]) -> list[str]:
    """Answer the jobs as a run would (generated texts grouped by decoding, then scored prompts);
    the generated texts."""
    from framebench.registry import suite

    out: list[str] = []
    by_decoding: dict[Decoding, list[Job]] = {}
    for job in jobs:
        if generates(job):
            by_decoding.setdefault(job.decoding, []).append(job)
    for decoding, group in by_decoding.items():
        out += backend.generate([j.chat for j in group], decoding)
    scored = [j for j in jobs if scores_answers(j)]
    if scored:
        backend.answer_probabilities([j.chat for j in scored],
                                     [suite(j.item["suite"]).items.answer_choices(j) for j in scored])
    return out


def lines(est: Estimate) -> list[tuple[str, str]]:
    """(what, value) rows for the console."""
    rows = [("model", est.model), ("items", f"{est.items:,}"),
            ("requests", f"{est.requests:,} ({est.generating:,} generate text)"),
            ("input tokens", f"{est.input_tokens:,}"),
            ("input tokens after prefix sharing", f"{est.uncached_input_tokens:,} "
             f"({_share(est.input_tokens - est.uncached_input_tokens, est.input_tokens)} shared with an earlier prompt)"),
            ("output tokens, at most", f"{est.max_output_tokens:,} (max_new_tokens of each generating request)")]
    if est.sample is not None:
        s = est.sample
        rows.append(("timed sample", f"{s.requests} requests in {s.seconds:.1f} s, {s.output_tokens} tokens generated"))
        rows.append(("output tokens, expected", f"{est.output_tokens:,.0f} (the sample's mean per request)"))
    seconds = est.seconds
    if seconds is not None:
        basis = f"at {est.rate} requests/s" if est.rate else "from the timed sample"
        rows.append(("time", f"{_duration(seconds)} ({basis}; model loading not included)"))
    else:
        rows.append(("time", "unknown: pass --sample N (time N real requests) or --rate R (requests/s you measured)"))
    for ref in REFERENCES:
        rows.append((f"time for {ref.model} on {ref.machine}",
                     f"{_duration(est.requests * ref.seconds_per_request)} ({ref.seconds_per_request} s a request; {ref.basis})"))
    expected, bound = est.cost(est.input_tokens, est.output_tokens), est.cost(est.input_tokens, est.max_output_tokens)
    if expected is not None and bound is not None:
        cached = est.cost(est.uncached_input_tokens, est.output_tokens)
        rows.append(("cost", f"${expected:,.2f} expected, ${bound:,.2f} at most; ${cached:,.2f} if a prompt "
                     "cache bills shared prefixes at zero (at the prices given)"))
    else:
        rows.append(("cost", "pass --price-in and --price-out (per million tokens) to price it"))
    rows.append(("tokens counted with", est.tokens_from))
    return rows


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "0 %"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"
