"""The environment variables a SQLGym server reads (``agentenv serve`` has no per-env options yet).

- ``AGENTENV_SQLGYM_ROUNDS``: SQL statements an agent may try per question (default 1, as AgentGym;
  more lets an agent see a wrong result or an error and revise).
- ``AGENTENV_SQLGYM_BIRD_PATH``: a BIRD folder (``train/train.json``, ``dev/dev.json`` and their
  ``*_databases/``); its questions are served under AgentGym's item ids. AgentGym's own variable.
- ``AGENTENV_SQLGYM_CACHE``: where the generated databases are kept (default
  ``$XDG_CACHE_HOME/agentenv/sqlgym``, else ``~/.cache/agentenv/sqlgym``).
- ``AGENTENV_SQLGYM_EVIDENCE``: ``1`` shows a question's evidence hint after it (AgentGym does not).

A value that does not parse is reported with a warning and the default is used: the env class is
imported by every ``agentenv`` command that lists installed envs, which must not fail for it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from agentenv.env import cache_dir

ROUNDS = "AGENTENV_SQLGYM_ROUNDS"
BIRD_PATH = "AGENTENV_SQLGYM_BIRD_PATH"
CACHE = "AGENTENV_SQLGYM_CACHE"
EVIDENCE = "AGENTENV_SQLGYM_EVIDENCE"


def rounds() -> int:
    text = os.environ.get(ROUNDS, "").strip()
    if not text:
        return 1
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        warnings.warn(f"{ROUNDS}={text!r} is not a whole number >= 1; using 1", stacklevel=2)
        return 1
    return value


def bird_path() -> Path | None:
    text = os.environ.get(BIRD_PATH, "").strip()
    return Path(text).expanduser() if text else None


def cache_root() -> Path:
    return cache_dir("sqlgym", CACHE)


def show_evidence() -> bool:
    return os.environ.get(EVIDENCE, "").strip().lower() in ("1", "true", "yes", "on")
