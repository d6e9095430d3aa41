#!/usr/bin/env bash
# AgentEvol on env servers.  Each iteration explores the train splits with the current agent, keeps the
# rewarded trajectories, merges them with the initial set, retrains FROM THE BASE MODEL and evaluates.
#
#   bash examples/agentevol.sh                                   # 8 GPUs, settings from examples/configs/agentevol_7b.json
#   bash examples/agentevol.sh --iterations 2 --explore-limit 200   # any flag overrides the config file
#
# Results: runs/agentevol-7b/iter_<m>/{explore,kept,train,eval}.jsonl, model/, stages.json, and
# summary.json + curve.png at the top.  A killed run resumes at its stage when started again.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. the environment servers (default ports; or point --url NAME=URL at servers elsewhere)
agentenv up babyai textcraft sciworld lmrlgym &
SERVERS=$!
trap 'kill $SERVERS 2>/dev/null || true' EXIT
for port in 36001 36002 36003 36004; do
  until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    kill -0 "$SERVERS" 2>/dev/null || { echo "the env servers did not start" >&2; exit 1; }
    sleep 2
  done
done

# 2. the loop (training stages run under torchrun with DeepSpeed ZeRO-3; exploration and evaluation use
#    one GPU in this process)
agentenv train evol --config examples/configs/agentevol_7b.json "$@"
