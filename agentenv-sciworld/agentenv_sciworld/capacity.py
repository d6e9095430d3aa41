"""How many ScienceWorld sessions a machine holds: ``SciWorldEnv.max_sessions``, from memory.

Every session is a JVM.  Its resident memory is its heap (capped by ``-Xmx``, 384 MiB by default, see
:mod:`.java`) plus what the JVM holds beside it (classes, code cache, thread stacks): about 190 MiB after
a reset, up to about 430 MiB in long episodes.  A session is budgeted at its heap cap plus
:data:`JVM_OVERHEAD`, and the sessions get :data:`MEMORY_SHARE` of the machine's memory (the smaller of
the physical memory and a cgroup limit); the rest is the server's, the agents' and the system's.  On a
24 GiB machine with the default heap that is 12 GiB / 480 MiB = 25 sessions.  ``agentenv serve
--max-sessions`` overrides it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .java import java_opts

MIB = 1 << 20
#: resident memory of a JVM beyond its heap cap (measured: about 45 MiB at the largest, with -Xmx384m)
JVM_OVERHEAD = 96 * MIB
#: the share of the machine's memory that sessions may take
MEMORY_SHARE = 0.5
_SIZE = re.compile(r"^-Xmx(\d+)([kKmMgGtT]?)$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def machine_memory() -> int:
    """Bytes of memory this process may use: physical memory, or a smaller cgroup (container) limit."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def heap_cap(opts: list[str], memory: int) -> int:
    """The JVM's maximum heap under ``opts``: the last ``-Xmx``, else Java's default (a quarter of memory)."""
    cap = memory // 4
    for opt in opts:
        match = _SIZE.match(opt)
        if match:
            cap = int(match.group(1)) * _UNITS[match.group(2).lower()]
    return cap


def session_budget(opts: list[str] | None = None, memory: int | None = None) -> int:
    """Bytes one session may hold: its JVM's heap cap plus :data:`JVM_OVERHEAD`."""
    memory = machine_memory() if memory is None else memory
    return heap_cap(java_opts() if opts is None else opts, memory) + JVM_OVERHEAD


def default_max_sessions(opts: list[str] | None = None, memory: int | None = None) -> int:
    """Sessions whose budgets fit in :data:`MEMORY_SHARE` of the machine's memory (at least 1)."""
    memory = machine_memory() if memory is None else memory
    return max(1, int(MEMORY_SHARE * memory) // session_budget(opts, memory))
