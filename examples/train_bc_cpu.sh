#!/usr/bin/env bash
# Behavioural cloning with two CPU processes (gloo), to try the distributed path without a GPU.
#
#   bash examples/train_bc_cpu.sh                   # a tiny random Llama on a small synthetic data set
#   bash examples/train_bc_cpu.sh MODEL DATA OUT    # your own model folder and AgentTraj files
#   LAUNCHER=accelerate bash examples/train_bc_cpu.sh
#   DEEPSPEED=examples/deepspeed/zero3.json bash examples/train_bc_cpu.sh   # ZeRO on CPU (torchrun only)
#
# Both launchers start 2 gloo processes; each takes a different slice of every global batch.
# (With accelerate, `--cpu --num_processes 2` starts ONE process: use `--multi_gpu` as below; the trainer
# itself chooses CPU when there is no GPU.)
set -euo pipefail
source "$(dirname "$0")/caller_paths.sh"
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=runs/bc-cpu
[ $# -ge 3 ] && OUT=$(caller_path "$3" out)
if [ $# -ge 2 ]; then
  MODEL=$(caller_path "$1")
  DATA=$(caller_path "$2")
else
  MODEL=runs/tiny-llama
  DATA=runs/tiny-data.jsonl
  "$PY" - <<'PYEOF'
from agentenv.data.trajectory import Trajectory, write_trajectories
from agentenv.testing import tiny_llama

tiny_llama("runs/tiny-llama")
trajectories = []
for i in range(32):
    t = Trajectory.start("maze", i, "You are an agent in a maze. Reach the goal.")
    t.add_observation(f"Your position is {i % 5}, 4. Available actions: move up, move down")
    t.add_reply(f"Thought:\nI should move toward the goal.\n\nAction:\nmove {'up' if i % 2 else 'down'}")
    trajectories.append(t)
write_trajectories("runs/tiny-data.jsonl", trajectories)
PYEOF
fi

ARGS=(bc --model "$MODEL" --data "$DATA" --output-dir "$OUT" --max-steps 20 --batch-size 4
      --learning-rate 1e-3 --warmup-ratio 0.1 --max-length 1024 --save-every 10)
if [ -n "${DEEPSPEED:-}" ]; then
  ARGS+=(--deepspeed "$DEEPSPEED")
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
if [ "${LAUNCHER:-torchrun}" = accelerate ]; then
  "$PY" -m accelerate.commands.launch --multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no \
    -m agentenv.trainer "${ARGS[@]}"
else
  "$PY" -m torch.distributed.run --nproc_per_node 2 -m agentenv.trainer "${ARGS[@]}"
fi
echo "model saved in $OUT; per-step log in $OUT/train_log.jsonl"
