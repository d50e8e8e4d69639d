#!/usr/bin/env bash
# One device session's speed bench, prepared to run in a single call of at most 10 minutes on an
# H200 with torch and transformers preinstalled and nothing reachable:
#
#   bench/limit.py (utilization: machine rate, necessary work, framebench generate and constrained,
#   naive and lm-eval-style loops) on random-init SmolLM2-1.7B and Llama-3.1-8B shapes in bf16,
#   with the SmolLM2 tokenizer, on the law items; then bench/engines.py's vLLM rows (prefix
#   caching on) on the same prompts where `import vllm` works.
#
#   bash bench/gpu.sh            # the device: 1.7b and 8b, every law_issue_spotting item
#   bash bench/gpu.sh --cpu      # anywhere: the tiny shape on one context (what CI runs)
#
# Environment: ITEMS (items.jsonl; default the demo set, or a full build's), TOKENIZER (a
# tokenizer folder; default framebench's SmolLM2 cache — carry it to the device), OUT (where the
# JSON and text results go; default $OUT or bench-out), STEP_TIMEOUT (seconds per step).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-bench-out}
ITEMS=${ITEMS:-datasets/demo/framingqa/items.jsonl}
TOKENIZER=${TOKENIZER:-$HOME/.cache/framebench/smollm2-135m-instruct}
mkdir -p "$OUT"

if [ "${1:-}" = "--cpu" ]; then
  shapes="tiny"; contexts=1; extra=(--naive-every 10 --rates 1,32,512 --lmeval-batch 16)
  step_timeout=${STEP_TIMEOUT:-300}
else
  shapes="1.7b 8b"; contexts=0; extra=(--naive-every 25 --lmeval-batch 256)
  step_timeout=${STEP_TIMEOUT:-200}
fi
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__,
"cuda", torch.cuda.is_available())'

status=0
for shape in $shapes; do
  echo "== limit: $shape"
  timeout "$step_timeout" "$PY" bench/limit.py --random-init "$shape" --tokenizer "$TOKENIZER" --items "$ITEMS" \
    --contexts "$contexts" "${extra[@]}" --json-out "$OUT/limit-$shape.json" > "$OUT/limit-$shape.txt" 2>&1 \
    || { echo "limit $shape: failed or timed out (exit $?)"; status=1; }
  grep -v '^{' "$OUT/limit-$shape.txt" | tail -12
done

if "$PY" -c 'import vllm' 2>/dev/null; then
  for shape in $shapes; do
    echo "== vllm vs hf: $shape (vLLM V1 caches prefixes by default)"
    timeout "$step_timeout" "$PY" bench/engines.py --random-init "$shape" --tokenizer "$TOKENIZER" --items "$ITEMS" \
      --task law_issue_spotting --naive-every 50 --lmeval-batches 256 --no-constrained \
      --json-out "$OUT/engines-$shape.json" > "$OUT/engines-$shape.txt" 2>&1 \
      || { echo "engines $shape: failed or timed out (exit $?)"; status=1; }
    grep -v '^{' "$OUT/engines-$shape.txt" | tail -12
  done
else
  echo "vllm: not importable here (skipped)"
fi
exit $status
