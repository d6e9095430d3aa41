#!/usr/bin/env bash
# The GPU proof (see README.md), run on a GPU machine after benchmarks/gpu/carry.sh built .gpu_carry/:
#
#   bash benchmarks/gpu/proof.sh       # with the device tool: run(command=..., carry=[".gpu_carry"], timeout_s=600)
#
# 1. installs what the image lacks from the carried wheels (no network there);
# 2. BC throughput and peak memory of SmolLM2-135M's shape in bf16 under DeepSpeed ZeRO-2 (torchrun);
# 3. one AgentEvol iteration on BabyAI with batched generation (64 episodes at a time), training under
#    torchrun + ZeRO-2.  The weights are random (the 93 MiB GGUF cannot travel), so the agent's success
#    says nothing; the iteration proves the GPU path and times its stages;
# 4. the rollout engine against the sequential batch-1 generate loop on the GPU (40 episodes x 5 rounds,
#    tiny random Llama, fp32): its speed-up there and whether the replies are identical;
# 5. GRPO from that iteration's model: 2 steps of 32 BabyAI episodes (groups of 8), generated in one batch
#    by the live policy on the GPU (HFAgent: vLLM is too big to travel to the lent machine), bf16;
# 6. where generation's time goes (generation_profile.py: SDPA per backend, the engine greedy and sampled,
#    and with cuDNN's attention allowed, which the agent keeps off).
# Two more steps run when named in STEPS (the six above take most of a 600 s call):
# 7. eto: one ETO iteration on BabyAI (explore at temperature 1, pair each failure with its expert
#    trajectory, DPO from the model under torchrun + ZeRO-2 in bf16: the reference pass and the loss);
# 8. eval: a results file resumed on the GPU (16 episodes, then 32: only the 16 new run), and refused once
#    another model's weights sit at the same path (the weights' digest, taken from bf16 CUDA tensors).
#
#   STEPS="bc eto eval" bash benchmarks/gpu/proof.sh     # bc makes the model and expert data the others use
# Each step has its own time limit and a failed step does not stop the next; `steps.txt` says which passed.
# Figures land in $OUT (the device tool brings them back) and in runs/gpu_proof/.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-runs/gpu_proof/out}
STEPS=${STEPS:-"bc agentevol rollout grpo profile"}
wants() { [[ " $STEPS " == *" $1 "* ]]; }
mkdir -p "$OUT" runs/gpu_proof
PY=python3
MODEL=runs/gpu_proof/throughput/random_smollm2_shape  # the random-weights model step 2 saves
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"

step() {  # step NAME SECONDS COMMAND...: run it under a time limit, note in steps.txt whether it passed
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "$name rc=$rc seconds=$((SECONDS - start))" | tee -a "$OUT/steps.txt"
}
: > "$OUT/steps.txt"

$PY -m pip install -q --no-index --no-deps .gpu_carry/wheels/*.whl || exit 1
step deepspeed-install 120 $PY -m pip install -q --no-index --no-deps --no-build-isolation .gpu_carry/wheels/deepspeed-*.tar.gz
$PY -m pip install -q --no-index --no-deps --no-build-isolation -e agentenv -e agentenv-babyai || exit 1
$PY -m pip check || true  # anything the carried wheels still miss shows here
$PY -c "import torch, deepspeed, trl, agentenv, agentenv_babyai; print('torch', torch.__version__, 'deepspeed', deepspeed.__version__, 'trl', trl.__version__)"

# 2. throughput: bf16 ("auto" on a GPU that has it), ZeRO-2, one process per GPU
wants bc && step bc-throughput 180 $PY benchmarks/train_throughput.py --model shape:.gpu_carry/smollm2_shape --deepspeed examples/deepspeed/zero2.json \
  --steps 40 --batch-size 8 --work runs/gpu_proof/throughput --out "$OUT/train_throughput_gpu.json" 2>&1 | tail -25

# 3. one AgentEvol iteration: BC on the expert data above, explore 64 tasks x 2 samples in batches of 64,
#    keep, retrain from the base, evaluate on 64 held-out tasks; the stage times are in stages.json
wants agentevol && step agentevol 300 $PY -m agentenv.trainer evol --model $MODEL \
  --data runs/gpu_proof/throughput/babyai_expert_128.jsonl --output-dir runs/gpu_proof/agentevol \
  --env babyai --local --iterations 1 --explore-limit 64 --samples-per-instruction 2 --eval-limit 64 \
  --concurrency 64 --max-rounds 10 --max-new-tokens 64 --num-epochs 1 --batch-size 8 --max-length 2048 \
  --learning-rate 2e-5 --train-launcher "torchrun --nproc_per_node 1" --deepspeed examples/deepspeed/zero2.json \
  2>&1 | tail -30
wants agentevol && cp runs/gpu_proof/agentevol/summary.json "$OUT/agentevol_summary.json"
wants agentevol && cp runs/gpu_proof/agentevol/iter_1/stages.json "$OUT/agentevol_iter1_stages.json"

# 4. rollout engine vs the sequential loop, on the GPU
wants rollout && step rollout 150 $PY benchmarks/rollout_throughput.py --device cuda --episodes 40 --rounds 5 --skip-no-cache \
  --out "$OUT/rollout_throughput_gpu.json" 2>&1 | tail -8

# 5. GRPO: 2 steps x 32 episodes (4 tasks x 8 samples), one generation batch of 32, bf16, no vLLM
start=$(ls -d runs/gpu_proof/agentevol/iter_*/model 2>/dev/null | tail -1)
wants grpo && step grpo 150 $PY -m agentenv.cli train grpo --model "${start:-$MODEL}" \
  --env babyai --local --train-limit 64 --num-generations 8 --batch-size 32 --max-steps 2 --max-rounds 10 \
  --max-new-tokens 64 --max-length 2048 --learning-rate 1e-5 --concurrency 32 --save-every 0 \
  --output-dir runs/gpu_proof/grpo 2>&1 | tail -12
wants grpo && cp runs/gpu_proof/grpo/train_log.jsonl "$OUT/grpo_train_log.jsonl"

# 6. the engine's generation profile (about 40 s)
wants profile && step profile 90 $PY benchmarks/gpu/generation_profile.py --shape .gpu_carry/smollm2_shape --rounds 2 \
  --out "$OUT/generation_profile.json" 2>&1 | grep -E "^temperature|^SDPA"

# 7. ETO: explore 32 tasks x 2 samples, pair failures with the expert, DPO (torchrun + ZeRO-2, bf16), evaluate 32
wants eto && step eto 240 $PY -m agentenv.trainer eto --model $MODEL \
  --expert-data runs/gpu_proof/throughput/babyai_expert_128.jsonl --output-dir runs/gpu_proof/eto \
  --env babyai --local --iterations 1 --explore-limit 32 --samples-per-instruction 2 --explore-temperature 1.0 \
  --eval-limit 32 --concurrency 64 --max-rounds 10 --max-new-tokens 64 --num-epochs 1 --batch-size 4 \
  --max-length 2048 --learning-rate 1e-6 --train-launcher "torchrun --nproc_per_node 1" \
  --deepspeed examples/deepspeed/zero2.json 2>&1 | tail -12
wants eto && cp runs/gpu_proof/eto/summary.json "$OUT/eto_summary.json"
wants eto && cp runs/gpu_proof/eto/iter_1/model/train_log.jsonl "$OUT/eto_dpo_train_log.jsonl"

# 8. a results file resumed on the GPU, then refused for another model's weights at the same path
wants eval && step eval 150 bash benchmarks/gpu/eval_resume.sh $PY $MODEL runs/gpu_proof/eto/iter_1/model runs/gpu_proof

cat "$OUT/steps.txt"
