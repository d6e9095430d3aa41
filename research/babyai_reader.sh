#!/usr/bin/env bash
# The "reader" of research/results.md (CPU experiments 3-5): the random Llama (0.4M parameters) of the BabyAI
# demo, taught to read by task-reading random walks (agentenv.data.walks --kind task_reading: every
# reply restates the mission's goal line and the observation; the moves are random, so no policy is in
# them), in the three stages of examples/demo.py --reader (`reader_model`). It stands in for the pretrained
# LLM a CPU cannot train; `make demo` builds the same one under runs/demo, and the experiment starts every
# seed from it:  python research/cpu_experiment.py ... --base runs/reader/reader_model
#
#   bash research/babyai_reader.sh          # about 7.5 minutes on 2 CPU cores
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/reader}
python examples/demo.py --env babyai --max-rounds 10 --explore-tasks 256 --iterations 0 --seed 0 \
  --reader --base-only --out "$OUT"
# how well each stage reads (goal and observation restated on held-out tasks)
python research/probes/babyai_reading_probe.py "$OUT/reading_model" "$OUT/reader_stage2" \
  "$OUT/reader_model" --plan "$OUT/plan.json"
