#!/usr/bin/env bash
# GRPO on BabyAI from the demo's BC agent, on 2 CPU cores (the run of docs/results.md, "GRPO from the BC agent").
#
#   make demo                                   # first: leaves runs/demo/agentevol/iter_0/model and runs/demo/plan.json
#   bash examples/grpo_babyai_cpu.sh            # then: held-out success before, GRPO, held-out success after
#   STEPS=24 LR=5e-5 bash examples/grpo_babyai_cpu.sh
#
# It serves BabyAI on a free port, scores the BC agent greedily on the demo's held-out tasks (its 200 unseen
# seeds), trains with GRPO on the demo's exploration tasks (training seeds: groups of 4 episodes per task, the
# env's normalised final score as the reward), and scores the result on the same held-out tasks.  Everything
# lands under runs/grpo-babyai; rerunning resumes (the evaluations skip finished episodes, training resumes
# from its latest checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
BC=${BC:-runs/demo/agentevol/iter_0/model}
PLAN=${PLAN:-runs/demo/plan.json}
OUT=${OUT:-runs/grpo-babyai}
STEPS=${STEPS:-8}
LR=${LR:-1e-4}
[ -f "$BC/config.json" ] && [ -f "$PLAN" ] || { echo "no $BC or $PLAN: run 'make demo' first" >&2; exit 1; }
mkdir -p "$OUT"

held_out=$("$PY" -c "import json; p=json.load(open('$PLAN')); print(','.join(map(str, next(iter(p['held_out'].values())))))")
train=$("$PY" -c "import json; print(' '.join(map(str, json.load(open('$PLAN'))['explore'])))")
port=$("$PY" -c "from agentenv.testing import free_port; print(free_port())")
"$PY" -m agentenv.cli serve babyai --port "$port" > "$OUT/server.log" 2>&1 &
server=$!
trap 'kill $server' EXIT
until curl -sf "http://127.0.0.1:$port/babyai/health" > /dev/null; do sleep 1; done
url="http://127.0.0.1:$port"
# the demo's episode settings: 10 rounds, replies of at most 64 tokens
episodes=(--max-rounds 10 --max-new-tokens 64)

"$PY" -m agentenv.cli eval --agent "hf:$BC" --env babyai --url "$url" --indices "$held_out" "${episodes[@]}" \
  --concurrency 32 --no-progress --out "$OUT/before.jsonl"
"$PY" -m agentenv.cli train grpo --model "$BC" --env babyai --url "babyai=$url" --train-tasks $train "${episodes[@]}" \
  --num-generations 4 --batch-size 16 --max-steps "$STEPS" --learning-rate "$LR" --lr-scheduler constant \
  --warmup-ratio 0 --temperature 1.0 --concurrency 16 --max-length 1536 --save-every 4 --output-dir "$OUT/model"
"$PY" -m agentenv.cli eval --agent "hf:$OUT/model" --env babyai --url "$url" --indices "$held_out" "${episodes[@]}" \
  --concurrency 32 --no-progress --out "$OUT/after.jsonl"
