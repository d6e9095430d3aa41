"""SciWorld's max_sessions comes from memory: the arithmetic, and the measured memory of real sessions."""

import httpx
import pytest
from agentenv_sciworld import SciWorldEnv
from agentenv_sciworld.capacity import (
    MEMORY_SHARE,
    MIB,
    default_max_sessions,
    heap_cap,
    machine_memory,
    session_budget,
)
from agentenv_sciworld.processes import java_children
from agentenv_sciworld.tasks import data_idx_of

from agentenv.testing import running_server

GIB = 1 << 30


def test_the_heap_cap_is_read_from_the_jvm_options():
    assert heap_cap(["-Xmx384m", "-XX:+UseSerialGC"], 24 * GIB) == 384 * MIB
    assert heap_cap(["-Xmx2g"], 24 * GIB) == 2 * GIB
    assert heap_cap(["-Xmx512M", "-Xmx1G"], 24 * GIB) == GIB  # the JVM takes the last
    assert heap_cap([], 24 * GIB) == 6 * GIB  # no cap: Java's default, a quarter of memory


def test_capacity_is_half_the_memory_over_a_sessions_budget():
    assert default_max_sessions(["-Xmx384m"], 24 * GIB) == 25  # 12 GiB / 480 MiB
    assert default_max_sessions(["-Xmx384m"], 64 * GIB) == 68
    assert default_max_sessions(["-Xmx1g"], 24 * GIB) == 10
    assert default_max_sessions([], 24 * GIB) == 1  # an uncapped JVM may take a quarter of the machine
    assert default_max_sessions(["-Xmx384m"], GIB) == 1  # never less than one
    assert SciWorldEnv.max_sessions == default_max_sessions() < 512  # the kit's default is far too many


@pytest.mark.slow
def test_the_default_capacity_holds_on_this_machine():
    """A few real sessions, one generating a gold path (the heaviest moment): each JVM stays inside the budget
    the capacity is computed from, so max_sessions of them fit in the memory set aside for sessions."""
    budget, capacity = session_budget(), SciWorldEnv.max_sessions
    before = set(java_children())
    with running_server([SciWorldEnv]) as url, httpx.Client(base_url=f"{url}/sciworld", timeout=120) as http:
        assert http.get("/info").json()["max_sessions"] == capacity
        tasks = [data_idx_of("test-conductivity", 450), data_idx_of("boil", 21), data_idx_of("find-plant", 225)]
        sids = [http.post("/create", json={"data_idx": idx}).json()["id"] for idx in tasks]
        for _ in range(15):  # the expert's first move loads the task with its gold path
            move = http.get("/expert", params={"id": sids[0]}).json()
            if http.post("/step", json={"id": sids[0], "action": move["action"]}).json()["done"]:
                break
        rss = {pid: size for pid, size in java_children().items() if pid not in before}
        for sid in sids:
            http.post("/close", json={"id": sid})
    assert len(rss) == 3
    print(f"JVM RSS (MiB): {sorted(v // MIB for v in rss.values())}; budget {budget // MIB} MiB; "
          f"capacity {capacity} of {machine_memory() // MIB} MiB")
    assert max(rss.values()) <= budget
    assert capacity * budget <= MEMORY_SHARE * machine_memory()
