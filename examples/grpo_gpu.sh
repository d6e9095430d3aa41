#!/usr/bin/env bash
# GRPO for a 1.5B model over several environments on one GPU node, generating with TRL's vLLM engine.
#
#   pip install -e 'agentenv[train,rl]' vllm          # vLLM is not part of the extras: it pins its own torch
#   bash examples/grpo_gpu.sh MODEL                    # e.g. a BC checkpoint of Qwen2.5-1.5B-Instruct
#   VLLM_MODE=server bash examples/grpo_gpu.sh MODEL   # vLLM on GPU 1 (trl vllm-serve), training on GPU 0
#
# The env servers run on this machine (agentenv up); tasks of every env in ENVS are mixed in each step.
# Colocate mode shares one GPU between training and vLLM (vLLM takes --vllm-gpu-memory-utilization of it).
# One training process: the rollouts play different numbers of rounds per process, and TRL's vLLM calls are
# collective, so several training processes with vLLM would wait on each other.
set -euo pipefail
source "$(dirname "$0")/caller_paths.sh"
cd "$(dirname "$0")/.."
MODEL=$(caller_path "${1:?usage: bash examples/grpo_gpu.sh MODEL}")
ENVS=${ENVS:-"babyai maze wordle textcraft"}
OUT=${OUT:-runs/grpo-gpu}
VLLM_MODE=${VLLM_MODE:-colocate}
PY=${PYTHON:-python}

agentenv up $ENVS &           # each env on its registered port (agentenv list)
servers=$!
trap 'kill $servers' EXIT
sleep 20

vllm=(--use-vllm --vllm-mode "$VLLM_MODE")
if [ "$VLLM_MODE" = server ]; then
  CUDA_VISIBLE_DEVICES=1 trl vllm-serve --model "$MODEL" --port 8000 &
  trap 'kill $servers $!' EXIT
  until curl -sf http://localhost:8000/health/ > /dev/null; do sleep 5; done
  vllm+=(--vllm-server-url http://localhost:8000)
else
  vllm+=(--vllm-gpu-memory-utilization 0.35)
fi

CUDA_VISIBLE_DEVICES=0 "$PY" -m agentenv.cli train grpo --model "$MODEL" --env $ENVS --train-limit 2000 \
  --num-generations 8 --batch-size 8 --gradient-accumulation-steps 8 --max-steps 300 \
  --learning-rate 1e-6 --beta 0.0 --temperature 1.0 --max-new-tokens 256 --max-length 8192 \
  --concurrency 64 --save-every 25 "${vllm[@]}" --output-dir "$OUT"
