"""The generated task set on disk: built once per machine, the first time it is needed.

``task_set(root)`` returns the folder of the task set for this generator version, seed and Faker version,
building it first if it is missing.  A file lock makes one process build while the others wait; the
build goes to a staging folder that is renamed into place when complete, so no reader ever sees half a
task set, and a build that was killed leaves only a staging folder, removed by the next build.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import faker
from filelock import FileLock, Timeout

from .. import settings
from .build import GENERATOR_VERSION, SEED, build
from .domains import DOMAINS
from .spec import Domain

#: how long a process waits for another one's build before giving up
LOCK_TIMEOUT_S = 600


def key(seed: int = SEED, domains: tuple[Domain, ...] = DOMAINS) -> str:
    """The folder name of a task set: what its content follows from (a subset of the domains is named)."""
    subset = "" if domains == DOMAINS else "-" + "-".join(d.name for d in domains)
    return f"v{GENERATOR_VERSION}-seed{seed}-faker{faker.VERSION}{subset}"


def is_complete(folder: Path) -> bool:
    return (folder / "manifest.json").is_file()


def task_set(root: Path | None = None, seed: int = SEED, domains: tuple[Domain, ...] = DOMAINS) -> Path:
    """The folder of the generated task set under ``root`` (default: the cache), built if missing."""
    root = Path(root) if root is not None else settings.cache_root()
    name = key(seed, domains)
    folder = root / name
    if is_complete(folder):
        return folder
    root.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(root / f"{name}.lock"), timeout=LOCK_TIMEOUT_S):
            if is_complete(folder):  # another process built it while this one waited
                return folder
            for leftover in root.glob(f"{name}.building-*"):  # a killed build's; none runs now
                shutil.rmtree(leftover, ignore_errors=True)
            staging = root / f"{name}.building-{os.getpid()}"
            staging.mkdir()
            try:
                build(staging, seed, domains)
                if folder.exists():  # incomplete (no manifest): never renamed into place by a build
                    shutil.rmtree(folder)
                os.replace(staging, folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    except Timeout:
        raise TimeoutError(
            f"waited {LOCK_TIMEOUT_S} s for another process building the SQLGym databases in {root}"
        ) from None
    return folder
