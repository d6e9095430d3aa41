"""WebArena over HTTP: AgentGym's wire for it (``/create`` -> ``{env_idx}``, ``/reset {env_idx, seed, idx}``,
``/step`` -> ``{observation, reward, terminated, truncated, info}``, ``/observation``, ``/close``), and twenty
sessions at once on one server, one browser."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from agentenv_webarena import WebArenaEnv
from webarena_helpers import task_index

from agentenv.client import EnvClient
from agentenv.react import format_react
from agentenv.testing import running_server


@pytest.fixture(scope="module")
def server(runtime):
    with running_server(WebArenaEnv) as url:
        yield url


def test_agentgyms_wire(server):
    index = task_index("In which year was")
    year = WebArenaEnv.tasks.bundled[index]["eval"]["reference_answers"]["must_include"][0]
    with httpx.Client(base_url=server, timeout=120) as http:
        created = http.post("/create", json={}).json()
        sid = created["env_idx"]
        reset = http.post("/reset", json={"env_idx": sid, "seed": 0, "idx": index}).json()
        assert reset["observation"].startswith("OBSERVATION:\nTab 0 (current): Main Page - Almanac")
        step = http.post("/step", json={"env_idx": sid, "action": "In summary, the next action I will perform is "
                                                                   "```scroll [down]```"}).json()
        assert {"observation", "reward", "terminated", "truncated", "info"} <= set(step)
        assert (step["reward"], step["terminated"], step["truncated"]) == (0.0, False, False)
        assert step["info"]["action"] == "scroll [down]"
        assert http.get("/observation", params={"env_idx": sid}).json() == step["observation"]
        stop = http.post("/step", json={"env_idx": sid, "action": f"```stop [{year}]```"}).json()
        assert (stop["reward"], stop["terminated"], stop["truncated"]) == (1.0, True, False)
        assert stop["info"]["evaluation"]["string_match"] == 1.0
        assert http.post("/close", json={"env_idx": sid}).json()["closed"] is True
        assert http.post("/step", json={"env_idx": sid, "action": "stop"}).status_code == 404
        info = http.get("/webarena/info").json()
        assert (info["env"], info["max_rounds"], info["max_sessions"]) == ("webarena", 25, WebArenaEnv.max_sessions)
        other = http.post("/create", json={}).json()["env_idx"]
        assert http.post("/reset", json={"env_idx": other, "seed": 0, "idx": 10**6}).status_code == 422
        http.post("/close", json={"env_idx": other})


def test_twenty_sessions_at_once(server, runtime):
    before = runtime.browser.process_ids()
    wiki = [i for i, c in enumerate(WebArenaEnv.tasks.bundled) if c["sites"] == ["wikipedia"]]
    with EnvClient("webarena", server, timeout=300) as client:
        sessions = [client.session() for _ in range(20)]

        def play_two_moves(k: int) -> tuple[str, str]:
            session, index = sessions[k], wiki[k % len(wiki)]
            first = session.reset(index).observation
            move = session.expert()
            answer = session.step(format_react(move.thought, move.action))
            return first, answer.observation

        try:
            with ThreadPoolExecutor(20) as pool:
                played = list(pool.map(play_two_moves, range(20)))
            assert len(runtime.browser.process_ids() - before) >= 20  # a renderer (at least) per session
        finally:
            for session in sessions:
                session.close()
    for k, (first, after) in enumerate(played):
        intent = WebArenaEnv.tasks.bundled[wiki[k % len(wiki)]]["intent"]
        assert f"OBJECTIVE: {intent}" in first and f"OBJECTIVE: {intent}" in after
        assert "Search results - Almanac" in after  # the expert's search ran in this session's own tab
    deadline = time.monotonic() + 15
    while runtime.browser.process_ids() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert runtime.browser.process_ids() <= before
