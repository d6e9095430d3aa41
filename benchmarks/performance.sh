#!/usr/bin/env bash
# Issue 37's figures in one run, one command after another on a quiet machine (docs/benchmarks.md,
# "Every core, a light BabyAI step, AgentGym's server"):
#
#   bash benchmarks/performance.sh /path/to/AgentGym      # a clone or bare git directory of AgentGym
#
# the BabyAI step in process, BabyAI with --workers 2 against one process, Maze against a bare FastAPI
# endpoint, this project's BabyAI server against AgentGym's own (built into a venv of its own on first use),
# and the rollout engine against the sequential batch-1 loop.  JSON figures land in benchmarks/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTGYM=${1:?usage: bash benchmarks/performance.sh AGENTGYM_REPO}
PY=${PYTHON:-.venv/bin/python}
R=benchmarks/results
uptime
"$PY" agentenv-babyai/benchmarks/latency.py --tasks 200 --sessions 20
"$PY" benchmarks/server_throughput.py --env babyai --workers 2 --clients 64 --rounds 3 --client raw --out $R/workers_babyai.json
"$PY" benchmarks/server_throughput.py --env maze --vs-bare --clients 64 --rounds 5 --client raw --out $R/maze_vs_bare.json
"$PY" benchmarks/agentgym_babyai.py --agentgym-repo "$AGENTGYM" --clients 1 64 --rounds 3 --out $R/agentgym_babyai.json
"$PY" benchmarks/rollout_throughput.py --skip-no-cache --out $R/rollout_throughput_amd_2threads.json
uptime
