# The two commands of the README:  `make demo`  and  `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test test-lowest lint bench

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) examples/demo.py --env babyai --max-rounds 10 --explore-tasks 256 --reader

test: setup
	$(PY) -m pytest -q

# The suite against the lowest versions our pyproject files allow (.ci/lowest-versions.txt), in its own venv.
test-lowest:
	@EXTRAS=train,openai,deepspeed $(MAKE) --no-print-directory test VENV=.venv-lowest CONSTRAINTS=.ci/lowest-versions.txt

lint: setup
	$(VENV)/bin/ruff check agentenv agentenv-* examples benchmarks research

bench: setup
	$(PY) benchmarks/server_throughput.py --out benchmarks/results/server_throughput.json
	$(PY) benchmarks/rollout_throughput.py --out benchmarks/results/rollout_throughput.json
