"""What the WebArena tests share: one Chromium and one set of bundled sites for the whole run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def runtime():
    """The process's browser and bundled sites (started once; sessions and check_env hold them too)."""
    from agentenv_webarena import runtime as shared

    held = shared.acquire()
    yield held
    shared.release()


@pytest.fixture
def session(runtime):
    """A fresh in-process WebArena session under the server's rules, closed afterwards."""
    from agentenv_webarena import WebArenaEnv

    from agentenv.session import LocalSession

    with LocalSession(WebArenaEnv) as live:
        yield live
