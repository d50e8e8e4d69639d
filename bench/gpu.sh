#!/usr/bin/env bash
# One device session's speed bench, prepared to run in a single call of at most 10 minutes on an
# H200 with torch and transformers preinstalled and nothing reachable:
#
#   per shape (random-init SmolLM2-1.7B and Llama-3.1-8B in bf16, the SmolLM2 tokenizer, law items):
#   1. bench/profile_text.py: a torch.profiler summary (matrix multiplies, attention, cache
#      copies, host syncs, other operators, time outside operators, device busy share, padding
#      waste, rows per decoding step) of framebench generate, framebench constrained and the
#      lm-eval-style loop on the first PROFILE_ITEMS law items (whole contexts);
#   2. bench/limit.py (utilization: machine rate, necessary work, framebench generate and
#      constrained, naive and lm-eval-style loops) on the first CONTEXTS law contexts;
#   then, with VLLM=1 and where `import vllm` works, bench/engines.py's vLLM rows.
#
#   ITEMS=build/items.jsonl bash bench/gpu.sh   # the device: a full build's law items (carry it)
#   bash bench/gpu.sh --cpu                     # anywhere: the tiny shape on one context (CI)
#
# Environment: ITEMS (items.jsonl; default the demo set; a full build's gives the batches a run
# sees), TOKENIZER (a tokenizer folder; default framebench's SmolLM2 cache: carry it to the
# device), OUT (where the JSON and text results go; default $OUT or bench-out), CONTEXTS (law
# contexts for limit.py; default 30, about 2,800 items), PROFILE_ITEMS (default 1,000),
# STEP_TIMEOUT / PROFILE_TIMEOUT (seconds per step). Worst case: 2 x (PROFILE_TIMEOUT 90 +
# STEP_TIMEOUT 190) + start-up, under 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-bench-out}
ITEMS=${ITEMS:-datasets/demo/framingqa/items.jsonl}
TOKENIZER=${TOKENIZER:-$HOME/.cache/framebench/smollm2-135m-instruct}
mkdir -p "$OUT"

if [ "${1:-}" = "--cpu" ]; then
  shapes="tiny"; contexts=1; extra=(--naive-every 10 --rates 1,32,512 --lmeval-batch 16)
  step_timeout=${STEP_TIMEOUT:-300}; profile_items=${PROFILE_ITEMS:-20}; profile_timeout=${PROFILE_TIMEOUT:-300}
else
  shapes="1.7b 8b"; contexts=${CONTEXTS:-30}; extra=(--naive-every 25 --lmeval-batch 256)
  step_timeout=${STEP_TIMEOUT:-190}; profile_items=${PROFILE_ITEMS:-1000}; profile_timeout=${PROFILE_TIMEOUT:-90}
fi
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__,
"cuda", torch.cuda.is_available())'

status=0
for shape in $shapes; do
  echo "== profile: $shape"
  timeout "$profile_timeout" "$PY" bench/profile_text.py --random-init "$shape" --tokenizer "$TOKENIZER" \
    --items "$ITEMS" --limit "$profile_items" --lmeval-batch "${extra[-1]}" --out "$OUT/profile-$shape" \
    > "$OUT/profile-$shape.txt" 2>&1 || { echo "profile $shape: failed or timed out (exit $?)"; status=1; }
  grep -E '^(generate|constrained|lmeval) ' "$OUT/profile-$shape.txt" || tail -5 "$OUT/profile-$shape.txt"
  echo "== limit: $shape"
  timeout "$step_timeout" "$PY" bench/limit.py --random-init "$shape" --tokenizer "$TOKENIZER" --items "$ITEMS" \
    --contexts "$contexts" "${extra[@]}" --no-cli --json-out "$OUT/limit-$shape.json" > "$OUT/limit-$shape.txt" 2>&1 \
    || { echo "limit $shape: failed or timed out (exit $?)"; status=1; }
  grep -v '^{' "$OUT/limit-$shape.txt" | tail -12
done

if [ "${VLLM:-0}" = 1 ] && "$PY" -c 'import vllm' 2>/dev/null; then
  for shape in $shapes; do
    echo "== vllm vs hf: $shape (vLLM V1 caches prefixes by default)"
    timeout "$step_timeout" "$PY" bench/engines.py --random-init "$shape" --tokenizer "$TOKENIZER" --items "$ITEMS" \
      --task law_issue_spotting --naive-every 50 --lmeval-batches 256 --no-constrained \
      --json-out "$OUT/engines-$shape.json" > "$OUT/engines-$shape.txt" 2>&1 \
      || { echo "engines $shape: failed or timed out (exit $?)"; status=1; }
    grep -v '^{' "$OUT/engines-$shape.txt" | tail -12
  done
else
  echo "vllm: skipped (VLLM=1 runs it where vllm imports)"
fi
exit $status
