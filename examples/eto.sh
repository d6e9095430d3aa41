#!/usr/bin/env bash
# ETO on env servers: the BC agent explores the train split, each failure is paired with the expert
# trajectory of the same instruction, and DPO (agent turns only, frozen reference) learns from the pairs.
#
#   bash examples/train_bc_7b_8gpu.sh /models/Llama-2-7b-chat-hf data/agenttraj runs/bc-7b   # the SFT agent
#   bash examples/eto.sh                         # settings from examples/configs/eto_7b.json
#   bash examples/eto.sh --beta 0 --iteration-betas 0 --nll-weight 1 --output-dir runs/eto-control
#       # the control: the same pipeline without the preference, fine-tuning on the pairs' expert sides
#       # (--iteration-betas 0 too: the config's per-iteration betas would otherwise override --beta)
#       # (research/results.md, experiment 5: on the CPU model it beat ETO by 20 points)
#
# DPO alone on a pair file:  torchrun --nproc_per_node 8 -m agentenv.trainer dpo --model runs/bc-7b \
#     --pairs pairs.jsonl --output-dir runs/dpo --deepspeed examples/deepspeed/zero3.json
set -euo pipefail
cd "$(dirname "$0")/.."
agentenv up sciworld &
SERVERS=$!
trap 'kill $SERVERS 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:36004/health" >/dev/null; do
  kill -0 "$SERVERS" 2>/dev/null || { echo "the env servers did not start" >&2; exit 1; }
  sleep 2
done
agentenv train eto --config examples/configs/eto_7b.json "$@"
