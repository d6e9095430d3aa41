#!/usr/bin/env bash
# The "reader" of docs/results.md (CPU experiment 3): the random Llama (0.4M parameters) of the BabyAI demo,
# taught to read by pretraining on task-reading random walks (examples/random_walks.py --kind
# task_reading: every reply restates the mission's goal line and the observation; the moves are random, so
# no policy is in them).  It stands in for the pretrained LLM a CPU cannot train; the experiment then
# starts every seed from it: python examples/cpu_experiment.py ... --base runs/reader/model
#
#   bash examples/babyai_reader.sh          # about 7.5 minutes on 2 CPU cores (446 s measured)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/reader}
train() { agentenv train bc --batch-size 1 --warmup-ratio 0.05 --max-length 1536 --cpu "$@"; }

# 1. the seed-0 BabyAI demo's base model and plan; 800 walks (10 steps) in the two levels' training seeds
#    that are not held out, one epoch at lr 1e-3 (the demo's --reading-walks stage)
python examples/demo.py --env babyai --max-rounds 10 --explore-tasks 256 --iterations 0 --seed 0 \
  --reading-walks 800 --reading-kind task_reading --base-only --out "$OUT/stage1"
# 2. two more epochs on the same walks at lr 2e-3
train --model "$OUT/stage1/reading_model" --data "$OUT/stage1/reading_walks.jsonl" \
  --output-dir "$OUT/stage2" --learning-rate 2e-3 --num-epochs 2 --seed 1
# 3. 3,000 walks (6 steps) in random training tasks of all 40 levels, never the plan's held-out tasks
python examples/random_walks.py --env babyai --kind task_reading --sample 3000 --steps 6 \
  --exclude "$OUT/stage1/plan.json" --out "$OUT/walks.jsonl"
train --model "$OUT/stage2" --data "$OUT/walks.jsonl" --output-dir "$OUT/model" \
  --learning-rate 2e-3 --num-epochs 1 --seed 2
python agentenv-babyai/benchmarks/reading_probe.py "$OUT/stage1/reading_model" "$OUT/stage2" "$OUT/model" \
  --plan "$OUT/stage1/plan.json"
