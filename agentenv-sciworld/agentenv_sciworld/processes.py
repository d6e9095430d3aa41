"""The JVMs this process has started, with their memory: for tests (a closed session leaves none behind)
and benchmarks (memory per live session)."""

from __future__ import annotations

import os
from pathlib import Path


def java_children(parent: int | None = None) -> dict[int, int]:
    """``{pid: RSS bytes}`` of the live (not zombie) ``java`` child processes of ``parent`` (default:
    this process).  Uses psutil when installed, else reads ``/proc`` (Linux)."""
    parent = os.getpid() if parent is None else parent
    try:
        import psutil
    except ImportError:
        return _from_proc(parent)
    found = {}
    for child in psutil.Process(parent).children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "java" in child.name():
                found[child.pid] = child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return found


def _from_proc(parent: int) -> dict[int, int]:
    page = os.sysconf("SC_PAGE_SIZE")
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended while we looked
            continue
        # "pid (comm) state ppid ... rss ...": comm may hold spaces, so split after the last ")"
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        state, ppid, rss_pages = fields[0], int(fields[1]), int(fields[21])
        if ppid == parent and state != "Z" and "java" in name:
            found[int(stat.parent.name)] = rss_pages * page
    return found
