#!/usr/bin/env bash
# A results file resumed on the GPU, then refused for another model's weights at the same path (proof.sh's
# step 8):  bash benchmarks/gpu/eval_resume.sh PYTHON MODEL OTHER_MODEL WORK
#
# evaluates MODEL (copied to WORK/eval_model) on 16 BabyAI tasks, then on 32 into the same file (only the
# 16 new run: 32 episodes in all), then puts OTHER_MODEL's weights at that path: the same command must stop
# with a one-line error naming the weights' digest, since the file's episodes are another model's.
set -uo pipefail
PY=$1 MODEL=$2 OTHER=$3 WORK=$4
model=$WORK/eval_model results=$WORK/eval.jsonl
rm -rf "$model" "$results" "${results%.jsonl}.meta.json" && cp -r "$MODEL" "$model" || exit 1
evaluate() {
  $PY -m agentenv.cli eval --agent "hf:$model" --env babyai --local --concurrency 32 --max-rounds 5 \
    --max-new-tokens 32 --temperature 1.0 --no-progress --out "$results" "$@"
}
evaluate --limit 16 > /dev/null && evaluate --limit 32 > /dev/null || exit 1
echo "episodes in the file: $(wc -l < "$results") (32 expected)"
[ "$(wc -l < "$results")" -eq 32 ] || exit 1
rm -rf "$model" && cp -r "$OTHER" "$model" || exit 1
refusal=$(evaluate --limit 32 2>&1) && { echo "another model's weights were taken for the file's"; exit 1; }
grep "^error: .*'weights'" <<< "$refusal" || { echo "refused, but not for the weights: $refusal"; exit 1; }
