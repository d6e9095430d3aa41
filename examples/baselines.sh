#!/usr/bin/env bash
# The AgentEvol paper's baselines: rejection-sampling fine-tuning (RFT) and Best-of-N evaluation.
#
#   bash examples/baselines.sh /models/Llama-2-7b-chat-hf runs/bc-7b data/agenttraj
set -euo pipefail
source "$(dirname "$0")/caller_paths.sh"
cd "$(dirname "$0")/.."
BASE=$(caller_path "${1:?usage: $0 BASE_MODEL BC_MODEL DATA}")
BC=$(caller_path "${2:?usage: $0 BASE_MODEL BC_MODEL DATA}")
DATA=$(caller_path "${3:?usage: $0 BASE_MODEL BC_MODEL DATA}")

agentenv up babyai textcraft &
SERVERS=$!
trap 'kill $SERVERS 2>/dev/null || true' EXIT
for port in 36002 36003; do
  until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    kill -0 "$SERVERS" 2>/dev/null || { echo "the env servers did not start" >&2; exit 1; }
    sleep 2
  done
done

# RFT: 4 samples per BC instruction with the BC agent, every distinct success added to the expert set,
# one retraining from the base model
agentenv train rft --model "$BASE" --bc-model "$BC" --data "$DATA" --output-dir runs/rft-7b \
  --env babyai textcraft --samples-per-instruction 4 --explore-temperature 1.0 \
  --num-epochs 3 --learning-rate 2e-5 --batch-size 2 --gradient-accumulation-steps 4 \
  --mixed-precision bf16 --gradient-checkpointing on \
  --deepspeed examples/deepspeed/zero3.json --train-launcher "torchrun --nproc_per_node 8"

# Best-of-8: a test task counts as solved when any of 8 sampled episodes solves it
agentenv best-of-n --agent "hf:$BC" --env babyai textcraft --n 8 --temperature 0.7 \
  --out runs/best_of_8.jsonl
