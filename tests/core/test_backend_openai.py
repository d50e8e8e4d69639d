"""The OpenAI-compatible backend: retries against an unreliable loopback server, and a real local
server (xllamacpp serving the packaged SmolLM2 GGUF)."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import threading
import time

import pytest

from framebench.backends import load_backend
from framebench.backends.base import Decoding
from framebench.errors import UserError

SECRET = "sk-test-not-a-real-key-1234567890"
CLIENT_TIMEOUT = 0.6


def _answer_for(messages) -> str:
    """The canned server's deterministic answer for a prompt."""
    digest = hashlib.sha256(messages[-1]["content"].encode()).digest()
    return ["Yes", "No", "B) Family", "Yes, because"][digest[0] % 4]


def _completion(text: str) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "canned",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FlakyServer:
    """Answers chat completions; fails a seeded ``rate`` share of requests with 429, 500, a
    response slower than the client timeout, or a malformed JSON body."""

    def __init__(self, rate: float, seed: int = 0):
        self.rate = rate
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.injected: list[str] = []
        self.requests = 0
        self.auth_headers: set[str] = set()

    def __call__(self, request):
        from werkzeug import Response

        body = json.loads(request.get_data())
        with self.lock:
            self.requests += 1
            self.auth_headers.add(request.headers.get("Authorization", ""))
            fail = self.rng.random() < self.rate
            kind = self.rng.choice(["429", "500", "timeout", "malformed"]) if fail else ""
            if kind:
                self.injected.append(kind)
        if kind == "429":
            return Response(json.dumps({"error": {"message": "rate limited"}}), status=429,
                            headers={"retry-after-ms": "1"}, content_type="application/json")
        if kind == "500":
            return Response(json.dumps({"error": {"message": "boom"}}), status=500,
                            content_type="application/json")
        if kind == "timeout":
            time.sleep(CLIENT_TIMEOUT + 0.5)
        if kind == "malformed":
            return Response('{"id": "chatcmpl-1", "choices": [', status=200, content_type="application/json")
        return Response(json.dumps(_completion(_answer_for(body["messages"]))), status=200,
                        content_type="application/json")


@pytest.fixture
def loopback_server():
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


def _chats(n: int):
    return [[{"role": "user", "content": f"Context {i // 4}. Question {i}? Answer with Yes or No."}]
            for i in range(n)]


def _backend(server, monkeypatch, **options):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return load_backend("openai:canned", base_url=server.url_for("/v1"), timeout=CLIENT_TIMEOUT,
                        backoff_base=0.01, backoff_max=0.05, max_retries=30, **options)


@pytest.mark.server
def test_flaky_server_gives_clean_answers_and_logs_every_retry(loopback_server, monkeypatch, caplog):
    chats = _chats(40)
    clean = FlakyServer(rate=0.0)
    loopback_server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(clean)
    clean_answers = _backend(loopback_server, monkeypatch, concurrency=4).generate(chats, Decoding(8))
    assert clean_answers == [_answer_for(c) for c in chats]
    assert clean.requests == 40

    loopback_server.clear()
    flaky = FlakyServer(rate=0.3, seed=1)
    loopback_server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(flaky)
    caplog.set_level(logging.WARNING, logger="framebench.backends.openai_api")
    backend = _backend(loopback_server, monkeypatch, concurrency=4)
    answers = backend.generate(chats, Decoding(8))

    assert answers == clean_answers
    assert set(flaky.injected) == {"429", "500", "timeout", "malformed"}  # every failure kind exercised
    retries = [r for r in caplog.records if r.getMessage().startswith("retry ")]
    assert len(retries) == len(flaky.injected) == backend.retries
    assert flaky.requests == 40 + len(flaky.injected)
    # the key is sent to the server, but never logged
    assert flaky.auth_headers == {f"Bearer {SECRET}"}
    assert SECRET not in caplog.text


@pytest.mark.server
def test_client_errors_are_not_retried(loopback_server, monkeypatch):
    loopback_server.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": "bad model"}}, status=400)
    with pytest.raises(UserError, match="HTTP 400"):
        _backend(loopback_server, monkeypatch).generate(_chats(1), Decoding(8))


def test_fingerprint_names_model_and_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    a = load_backend("openai:gpt-x")
    b = load_backend("openai:gpt-x", base_url="http://127.0.0.1:9/v1")
    assert "gpt-x" in a.fingerprint() and "api.openai.com" in a.fingerprint()
    assert a.fingerprint() != b.fingerprint()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert load_backend("openai:gpt-x").fingerprint() == b.fingerprint()


def test_missing_key_for_openai_is_a_user_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        load_backend("openai:gpt-x").generate(_chats(1), Decoding(8))


@pytest.fixture(scope="module")
def llama_server():
    xlc = pytest.importorskip("xllamacpp")
    from framebench.backends.smollm2 import gguf_path

    try:
        path = gguf_path()
    except UserError as exc:
        pytest.skip(str(exc))
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.n_ctx = 2048
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    server = xlc.Server(params)
    yield server.listening_address
    del server


@pytest.mark.model
@pytest.mark.server
@pytest.mark.slow
def test_real_local_server(llama_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert llama_server.startswith("http://127.0.0.1")
    backend = load_backend("openai:smollm2", base_url=llama_server + "/v1", concurrency=2)
    chats = [[{"role": "user", "content": "What is the capital of France? Answer in one word."}],
             [{"role": "user", "content": "Is water wet? Answer with Yes or No."}]]
    first = backend.generate(chats, Decoding(max_new_tokens=8))
    assert all(isinstance(t, str) and t.strip() for t in first)
    assert backend.generate(chats, Decoding(max_new_tokens=8)) == first  # greedy is repeatable
    assert backend.retries == 0


@pytest.mark.server
def test_text_run_through_flaky_server_matches_clean_run(loopback_server, monkeypatch, tmp_path, caplog):
    from text_helpers import framingqa_items, write_items

    from framebench.api import run_text
    from framebench.records import read_records

    data = write_items(tmp_path / "data", framingqa_items(3, 6))
    loopback_server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(FlakyServer(0.0))
    run_text(None, data, tmp_path / "clean", progress=False,
             backend=_backend(loopback_server, monkeypatch, concurrency=3))
    loopback_server.clear()
    flaky = FlakyServer(rate=0.3, seed=2)
    loopback_server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(flaky)
    caplog.set_level(logging.WARNING, logger="framebench.backends.openai_api")
    run_text(None, data, tmp_path / "flaky", progress=False,
             backend=_backend(loopback_server, monkeypatch, concurrency=3))
    clean, noisy = read_records(tmp_path / "clean"), read_records(tmp_path / "flaky")
    assert noisy.equals(clean) and clean["output"].isin(["Yes", "No", "B) Family", "Yes, because"]).all()
    assert flaky.injected and len([r for r in caplog.records if r.getMessage().startswith("retry ")]) == len(
        flaky.injected)


@pytest.mark.server
def test_cli_with_base_url(loopback_server, monkeypatch, tmp_path):
    from text_helpers import framingqa_items, write_items

    from framebench.cli import main
    from framebench.records import read_records

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    data = write_items(tmp_path / "data", framingqa_items(1, 4))
    loopback_server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(FlakyServer(0.0))
    with pytest.raises(SystemExit) as exit_info:
        main(["text", "--model", "openai:canned", "--base-url", loopback_server.url_for("/v1"),
              "--data", str(data), "--out", str(tmp_path / "run"), "--concurrency", "2", "--quiet"])
    assert exit_info.value.code in (0, None)
    df = read_records(tmp_path / "run")
    assert len(df) == 4 and df["output"].isin(["Yes", "No", "B) Family", "Yes, because"]).all()
    info = (tmp_path / "run" / "run.json").read_text()
    assert loopback_server.url_for("/v1").rstrip("/") in info and SECRET not in info
