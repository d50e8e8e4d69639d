#!/usr/bin/env bash
# Fresh-machine check: clone the committed repo into a temporary folder, then run the README's two
# commands there exactly (each builds its own new .venv), and check the demo's report files.
# Usage: bash scripts/fresh_check.sh [--keep]    (prints the wall time of each command)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/framebench-fresh.XXXXXX)
[ "${1:-}" = "--keep" ] || trap 'rm -rf "$work"' EXIT
# A sibling shared/ (source data), when the checkout has one, as CI lays it out.
[ -d "$repo/../shared" ] && ln -s "$repo/../shared" "$work/shared"
git clone -q "$repo" "$work/framebench"
cd "$work/framebench"
export FRAMEBENCH_CACHE="$work/cache"   # convert the packaged model afresh, too
demo_cmd=$(sed -n 's/^Fresh machine.*run the demo: `\(.*\)`$/\1/p' README.md)
test_cmd=$(sed -n 's/^Fresh machine, set up and run the tests: `\(.*\)`$/\1/p' README.md)
[ -n "$demo_cmd" ] && [ -n "$test_cmd" ] || { echo "README first lines not found" >&2; exit 1; }

t0=$(date +%s); bash -c "$demo_cmd"; t1=$(date +%s)
for f in report.json report.md report.html; do
  test -s "framebench-demo/report/$f" || { echo "missing framebench-demo/report/$f" >&2; exit 1; }
done
echo "demo command: $((t1 - t0)) s (fresh venv + model conversion + demo)"
t2=$(date +%s); bash -c "$demo_cmd"; t3=$(date +%s)
echo "demo command again (resume): $((t3 - t2)) s"
rm -rf .venv
t4=$(date +%s); bash -c "$test_cmd"; t5=$(date +%s)
echo "test command: $((t5 - t4)) s (fresh venv + full test suite)"
