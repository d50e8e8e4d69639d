"""``openai:`` backend: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp).

Requests run concurrently (asyncio, at most ``concurrency`` in flight). Rate limits (429), server
errors (5xx), timeouts, dropped connections and malformed responses are retried with exponential
backoff plus jitter; every retry is logged (logger ``framebench.backends.openai_api``) without the
key. The key is read from ``OPENAI_API_KEY`` only and is never logged or written; the base URL
comes from the ``base_url`` option or ``OPENAI_BASE_URL``; credentials embedded in it
(``user:KEY@host``, ``?api_key=``) are redacted wherever the URL is recorded (fingerprint, run.json).
The retry budget is ``FRAMEBENCH_OPENAI_MAX_RETRIES`` (default 8), ``FRAMEBENCH_OPENAI_BACKOFF``
(first delay in seconds, default 0.5, doubling up to 30) and ``FRAMEBENCH_OPENAI_TIMEOUT`` (seconds
per request, default 60); when it is spent the run ends with one line (exit 2) and a rerun resumes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import threading
from collections.abc import Callable, Sequence

from framebench.backends.base import Chat, Decoding
from framebench.errors import UserError

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class MalformedResponse(Exception):
    """A 2xx response without a usable completion."""


class RetriesExhausted(UserError):
    """The server kept failing through every retry: reported as one line (exit 2), not a traceback."""


def redact_url(url: str) -> str:
    """``url`` with credentials removed: ``user:KEY@host`` -> ``***@host``; key/token query values -> ``***``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        secret = ("key", "token", "secret", "password", "auth", "sig")
        query = urlencode([(k, "***" if any(w in k.lower() for w in secret) else v)
                           for k, v in parse_qsl(query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _env_number(name: str, default: float, cast: type = float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = cast(raw)
    except ValueError:
        raise UserError(f"{name}: expected a number, got {raw!r}") from None
    if value < 0:
        raise UserError(f"{name}: must not be negative, got {raw!r}")
    return value


class OpenAIBackend:
    def __init__(self, model: str, spec: str | None = None, base_url: str | None = None,
                 concurrency: int = 8, max_retries: int | None = None, timeout: float | None = None,
                 backoff_base: float | None = None, backoff_max: float = 30.0, **_ignored: object):
        # the retry budget: arguments, else FRAMEBENCH_OPENAI_MAX_RETRIES / _BACKOFF / _TIMEOUT, else defaults
        max_retries = int(_env_number("FRAMEBENCH_OPENAI_MAX_RETRIES", 8, int)) if max_retries is None else max_retries
        backoff_base = _env_number("FRAMEBENCH_OPENAI_BACKOFF", 0.5) if backoff_base is None else backoff_base
        timeout = _env_number("FRAMEBENCH_OPENAI_TIMEOUT", 60.0) if timeout is None else timeout
        if concurrency < 1:
            raise UserError(f"--concurrency must be a positive integer, got {concurrency}")
        self.model = model
        self.spec = spec or f"openai:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retries = 0  # retries made so far (all calls)

    def fingerprint(self) -> str:
        return f"openai:{self.model}@{redact_url(self.base_url)}"

    def info(self) -> dict[str, str]:
        return {"base_url": redact_url(self.base_url), "api_model": self.model, "chat_template_hash": ""}

    def _api_key(self) -> str:
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            return key
        if self.base_url != DEFAULT_BASE_URL:
            return "EMPTY"  # local OpenAI-compatible servers usually need no key
        raise UserError("OPENAI_API_KEY is not set (needed for openai: models)")

    def generate(self, chats: list[Chat], decoding: Decoding,
                 on_batch: Callable[[list[int], list[str]], None] | None = None) -> list[str]:
        """One completion per chat, in order; ``on_batch([i], [text])`` fires as each arrives."""
        if not chats:
            return []
        return _run_coroutine(self._generate_all(chats, decoding, on_batch))

    async def _generate_all(self, chats, decoding, on_batch):
        import openai

        client = openai.AsyncOpenAI(api_key=self._api_key(), base_url=self.base_url,
                                    max_retries=0, timeout=self.timeout)
        limit = asyncio.Semaphore(self.concurrency)

        async def one(i: int, chat: Chat) -> str:
            async with limit:
                text = await self._complete(client, chat, decoding, i)
            if on_batch is not None:
                on_batch([i], [text])
            return text

        try:
            return list(await asyncio.gather(*(one(i, c) for i, c in enumerate(chats))))
        finally:
            await client.close()

    async def _complete(self, client, chat: Chat, decoding: Decoding, index: int) -> str:
        kwargs = {"model": self.model, "messages": chat, "temperature": decoding.temperature,
                  "max_tokens": decoding.max_new_tokens}
        if decoding.stop:
            kwargs["stop"] = list(decoding.stop)[:4]  # the API accepts at most 4
        text = await self._request(client, kwargs, index, _completion_text)
        for stop in decoding.stop:
            cut = text.find(stop)
            if cut >= 0:
                text = text[:cut]
        return text

    async def _request(self, client, kwargs: dict, index: int, read: Callable):
        """One chat-completions request with retries; ``read(response)`` extracts the result (and
        raises MalformedResponse for a body that is not a proper completion)."""
        import openai

        for attempt in range(self.max_retries + 1):
            try:
                response = await client.chat.completions.create(**kwargs)
                return read(response)
            except (openai.APIStatusError, openai.APITimeoutError, openai.APIConnectionError,
                    openai.APIResponseValidationError, MalformedResponse, json.JSONDecodeError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = not isinstance(exc, openai.APIStatusError) or status == 429 or (status or 0) >= 500
                if not retryable:
                    raise UserError(f"{self.spec}: request rejected (HTTP {status}): {_short(exc)}") from None
                if attempt == self.max_retries:
                    raise RetriesExhausted(
                        f"{self.spec}: the server at {redact_url(self.base_url)} failed request {index} "
                        f"{attempt + 1} times (last: {_short(exc)}); is it running? Answers so far are "
                        "stored: rerun the same command to resume (retry budget: "
                        "FRAMEBENCH_OPENAI_MAX_RETRIES, FRAMEBENCH_OPENAI_BACKOFF)") from None
                delay = min(self.backoff_max, self.backoff_base * 2 ** attempt) * (0.5 + random.random() / 2)
                self.retries += 1
                log.warning("retry %d/%d for request %d in %.2fs after %s: %s", attempt + 1,
                            self.max_retries, index, delay, type(exc).__name__, _short(exc))
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    # ---- constrained answers ---------------------------------------------------------------
    def answer_probabilities(self, chats: list[Chat], choices: list[Sequence[str]],
                             assistant_prefixes: list[str] | None = None) -> list[dict[str, float]]:
        """``P(answer)`` over each chat's allowed answers from the first generated token's
        ``top_logprobs`` (answers whose forms are not among them get 0; all absent: ``{}``)."""
        if assistant_prefixes and any(assistant_prefixes):
            raise UserError(f"{self.spec}: constrained answers after generated reasoning (OMIT M1/M4) need "
                            "prompt scoring, which chat-completions servers do not offer; use --answer generate")
        if not chats:
            return []
        return _run_coroutine(self._probabilities_all(chats, choices))

    async def _probabilities_all(self, chats, choices):
        import openai

        client = openai.AsyncOpenAI(api_key=self._api_key(), base_url=self.base_url,
                                    max_retries=0, timeout=self.timeout)
        limit = asyncio.Semaphore(self.concurrency)

        async def one(i: int, chat: Chat, allowed: Sequence[str]) -> dict[str, float]:
            kwargs = {"model": self.model, "messages": chat, "temperature": 0.0, "max_tokens": 1,
                      "logprobs": True, "top_logprobs": TOP_LOGPROBS}
            async with limit:
                top = await self._request(client, kwargs, i, self._top_logprobs)
            return probabilities_from_top_logprobs(top, allowed)

        try:
            return list(await asyncio.gather(*(one(i, c, a) for i, (c, a) in enumerate(zip(chats, choices,
                                                                                                strict=True)))))
        finally:
            await client.close()

    def _top_logprobs(self, response) -> list[tuple[str, float]]:
        _completion_text(response)  # a proper completion first (else retried)
        logprobs = getattr(response.choices[0], "logprobs", None)
        content = getattr(logprobs, "content", None) if logprobs is not None else None
        if not content:
            raise UserError(f"{self.spec}: the server at {self.base_url} returned no logprobs; --answer "
                            "constrained needs logprobs/top_logprobs (use --answer generate)")
        first = content[0]
        top = getattr(first, "top_logprobs", None) or []
        pairs = [(t.token, float(t.logprob)) for t in top]
        if not pairs:
            pairs = [(first.token, float(first.logprob))]
        return pairs


TOP_LOGPROBS = 20


def probabilities_from_top_logprobs(top: list[tuple[str, float]], allowed: Sequence[str]) -> dict[str, float]:
    """Mass of each allowed answer = sum of exp(logprob) over the top tokens that equal one of its
    surface forms (backends/constrained.py), normalised over the allowed answers."""
    import math

    from framebench.backends.constrained import surface_forms

    masses = {a: sum(math.exp(lp) for tok, lp in top if tok in surface_forms(a)) for a in allowed}
    total = sum(masses.values())
    if total <= 0:
        return {}
    return {a: m / total for a, m in masses.items()}


def _run_coroutine(coro):
    """Run a coroutine to its end; from inside a running event loop (e.g. a notebook), in a
    helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: dict[str, object] = {}
    thread = threading.Thread(target=lambda: result.setdefault("v", asyncio.run(coro)))
    thread.start()
    thread.join()
    return result["v"]


def _completion_text(response) -> str:
    """The completion text, or MalformedResponse if the body is not a proper completion."""
    if isinstance(response, (str, bytes)):  # some SDK paths hand back the raw body when it is not JSON
        raise MalformedResponse("response body is not JSON")
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("response has no choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise MalformedResponse("response has no message content")
    return content


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200]

