#!/usr/bin/env bash
# Compares a few export options of a trained model on the internal check pairs only
# (tools/model/check-pairs.json; never shared/eval). Used once to choose the defaults in export.ts;
# the figures are recorded in models/README.md. Needs a finished training in $MODEL_WORK.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUN="$ROOT/node_modules/.bin/bun"
WORK="${MODEL_WORK:-/tmp/colony-model}"

run() {
  local name=$1
  shift
  env "$@" "$BUN" tools/model/export.ts "$WORK" "$WORK/variants/$name" 2>/dev/null
  printf '%-28s ' "$name"
  "$BUN" tools/model/check.ts "$WORK/variants/$name" --no-write
}
run "sif1e-3+pc" MODEL_SIF_A=1e-3 MODEL_REMOVE_PC=1
run "sif1e-4+pc" MODEL_SIF_A=1e-4 MODEL_REMOVE_PC=1
run "sif1e-3,no-pc" MODEL_SIF_A=1e-3 MODEL_REMOVE_PC=0
# Part factor is read at run time from tokenizer.json: try 1.0 on a copy of the first variant.
cp -r "$WORK/variants/sif1e-3+pc" "$WORK/variants/parts1.0"
sed -i 's/"partFactor":0.5/"partFactor":1/' "$WORK/variants/parts1.0/tokenizer.json"
printf '%-28s ' "sif1e-3+pc,parts1.0"
"$BUN" tools/model/check.ts "$WORK/variants/parts1.0" --no-write
