#!/usr/bin/env bash
# Behavioural cloning of a 7B model (e.g. Llama-2-7b-chat) on 8 GPUs with DeepSpeed ZeRO-3.
#
#   bash examples/train_bc_7b_8gpu.sh /models/Llama-2-7b-chat-hf data/agenttraj/ runs/bc-7b
#
# DATA is AgentTraj .json/.jsonl files or a folder of them (AgentGym's released AgentTraj loads as is).
# AgentGym's BC recipe: 3 epochs, lr 2e-5 (global batch = 8 GPUs x 2 x 4 = 64), max length 4096.
# Killed runs resume from the latest checkpoint (--save-every) when started again with the same command.
# ZeRO-2 (faster, more memory per GPU): use examples/deepspeed/zero2.json.
set -euo pipefail
source "$(dirname "$0")/caller_paths.sh"
cd "$(dirname "$0")/.."
MODEL=$(caller_path "${1:?usage: $0 MODEL DATA [OUTPUT_DIR]}")
DATA=$(caller_path "${2:?usage: $0 MODEL DATA [OUTPUT_DIR]}")
OUT=runs/bc-7b
[ $# -ge 3 ] && OUT=$(caller_path "$3" out)
LAUNCHER=${LAUNCHER:-torchrun}   # or: accelerate

ARGS=(
  bc --model "$MODEL" --data "$DATA" --output-dir "$OUT"
  --num-epochs 3 --learning-rate 2e-5 --lr-scheduler cosine --warmup-ratio 0.03
  --batch-size 2 --gradient-accumulation-steps 4 --max-length 4096
  --mixed-precision bf16 --gradient-checkpointing on
  --save-every 200 --save-total-limit 2
)

if [ "$LAUNCHER" = accelerate ]; then
  # the accelerate config names the DeepSpeed file
  accelerate launch --config_file examples/accelerate/zero3.yaml -m agentenv.trainer "${ARGS[@]}"
else
  torchrun --nproc_per_node 8 -m agentenv.trainer "${ARGS[@]}" --deepspeed examples/deepspeed/zero3.json
fi
