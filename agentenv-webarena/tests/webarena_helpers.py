"""Helpers the WebArena tests share (a module of its own: every package's tests have a conftest)."""

from __future__ import annotations


def element(session, role: str, name: str) -> int:
    """The id of an element of the session's last observation (fails the test if absent)."""
    found = session.env.tree.find(role, name)
    assert found is not None, f"no {role} {name!r} in:\n{session.env.tree.text}"
    return found


def task_index(intent_start: str) -> int:
    """The index of the first bundled task whose intent starts with ``intent_start``."""
    from agentenv_webarena import WebArenaEnv

    return next(i for i, c in enumerate(WebArenaEnv.tasks.bundled) if c["intent"].startswith(intent_start))
