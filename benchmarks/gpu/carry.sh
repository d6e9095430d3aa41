#!/usr/bin/env bash
# Build .gpu_carry/, what a GPU machine without network needs for benchmarks/gpu/proof.sh (see README.md).
#
# The project's lent GPU machine (the device tool) has python3 3.12 with torch, transformers, accelerate and most of the scientific stack,
# but no network, so the packages it lacks travel as wheels; and a run carries at most 64 MiB, which the
# SmolLM2 GGUF (93 MiB) does not fit in.  So SmolLM2 travels as its shape alone (config, tokenizer, chat
# template; no weights): the GPU figures of throughput and memory do not depend on the weights' values.
#
#   bash benchmarks/gpu/carry.sh        # then, on the GPU machine: bash benchmarks/gpu/proof.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
OUT=.gpu_carry
rm -rf "$OUT" && mkdir -p "$OUT/wheels"

# what the device image lacks (the device tool's KINDS.md lists what it has), without their dependencies,
# which it has; checked by installing these --no-deps into a venv holding only the image's packages, then
# `pip check` and both steps of gpu_proof.sh (on CPU, Python 3.11; fastapi needs opentelemetry-api)
$PY -m pip download -q -d "$OUT/wheels" --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
  fastapi starlette uvicorn h11 pydantic pydantic-core annotated-types typing-inspection \
  opentelemetry-api importlib-metadata lazy-importer \
  datasets dill multiprocess gymnasium farama-notifications minigrid==3.2.0 pygame-ce gguf hjson trl==1.16.0
$PY -m pip download -q -d "$OUT/wheels" --no-deps --no-binary=:all: "deepspeed>=0.19.8"  # an sdist; builds in seconds

$PY -c "import sys; from pathlib import Path; from agentenv.models import copy_shape, smollm2; \
copy_shape(smollm2(), Path(sys.argv[1]))" "$OUT/smollm2_shape"

SIZE=$(du -sm "$OUT" | cut -f1)
echo "$OUT: ${SIZE} MiB (the device tool carries 64 MiB with the working tree)"
[ "$SIZE" -lt 60 ] || { echo "too big to carry" >&2; exit 1; }
