"""OpenEnv's own client (PyPI ``openenv``, unmodified) drives the project's servers: whole BabyAI and Maze
episodes, the kit's errors, capacity and token behind it."""

from __future__ import annotations

import httpx
import pytest

from agentenv.react import format_react
from agentenv.registry import env_class
from agentenv.testing import running_server

# the rl extra (`make test` installs it; `make test-lowest` leaves it out)
GenericEnvClient = pytest.importorskip("openenv.core", reason="needs agentenv[rl]").GenericEnvClient


def play_expert_episode(url: str, env: str, data_idx: int) -> tuple[list, dict]:
    """One whole episode through OpenEnv's client; the moves come from the expert of the same kit session
    (``state`` names it), asked through the uniform ``/expert`` route."""
    results = []
    with GenericEnvClient(base_url=f"{url}/{env}/openenv").sync() as client:
        first = client.reset(data_idx=data_idx)
        assert not first.done and first.observation["data_idx"] == data_idx
        assert first.observation["instruction"] == env_class(env).instruction
        session = client.state()["session_id"]
        for _ in range(env_class(env).max_rounds):
            move = httpx.get(f"{url}/{env}/expert", params={"id": session}).json()
            results.append(client.step({"action": format_react(move["thought"], move["action"])}))
            if results[-1].done:
                break
        state = client.state()
        with pytest.raises(RuntimeError, match="the episode is done; reset it first"):
            client.step({"action": "move up"})
    return results, state


@pytest.mark.parametrize(("env", "data_idx"), [("babyai", 0), ("maze", 18), ("maze", 3)])
def test_openenv_client_plays_a_whole_episode(env, data_idx):
    with running_server(env_class(env)) as url:
        results, state = play_expert_episode(url, env, data_idx)
        assert httpx.get(f"{url}/{env}/info").json()["live_sessions"] == 0  # the socket's session is closed
    last = results[-1]
    assert last.done and last.reward > 0 and last.observation["success"]
    assert last.observation["score"] >= env_class(env).success_score and last.observation["terminated"]
    assert all(not r.done for r in results[:-1])
    assert state["step_count"] == len(results) and state["done"] and state["data_idx"] == data_idx


def test_openenv_client_gets_the_kits_errors_and_keeps_its_session():
    with running_server(env_class("maze")) as url, GenericEnvClient(base_url=f"{url}/maze/openenv").sync() as client:
        with pytest.raises(RuntimeError, match="reset it first"):
            client.step({"action": "move up"})
        with pytest.raises(RuntimeError, match="outside every maze split"):
            client.reset(data_idx=10**9)
        start = client.reset(data_idx=18).observation["text"]
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"action": "x" * 100_001})  # over the kit's action limit
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"move": "up"})  # not the published action type
        wall = client.step({"action": "Thought: try.\nAction: dance"})  # an illegal action: answered, reward 0
        assert wall.reward == 0 and not wall.done and "Invalid action" in wall.observation["text"]
        assert client.reset(data_idx=18).observation["text"] == start
        assert client.reset(seed=7).observation["data_idx"] == client.reset(seed=7).observation["data_idx"]


def test_malformed_socket_messages_are_error_frames_and_the_session_goes_on():
    import json

    from fastapi.testclient import TestClient

    from agentenv.server.app import create_app

    with TestClient(create_app([env_class("maze")])) as http, http.websocket_connect("/maze/openenv/ws") as socket:
        for raw, code in [("not json", "INVALID_JSON"), ("[1, 2]", "INVALID_JSON"), ("[" * 100_000, "INVALID_JSON"),
                          ('{"type": "reset", "data": {"data_idx": ' + "1" * 5000 + "}}", "INVALID_JSON"),
                          ('{"type": "dance"}', "UNKNOWN_TYPE"), ('{"type": "step", "data": [1]}', "VALIDATION_ERROR")]:
            socket.send_text(raw)
            answer = json.loads(socket.receive_text())
            assert answer["type"] == "error" and answer["data"]["code"] == code, (raw[:30], answer)
        socket.send_bytes(b'{"type": "state"}')  # a binary frame dropped the connection (a KeyError in the server)
        answer = json.loads(socket.receive_text())
        assert answer["data"] == {"message": "a message is a JSON text frame, not binary", "code": "INVALID_JSON"}
        socket.send_text(json.dumps({"type": "reset", "data": {"data_idx": 18}}))
        assert json.loads(socket.receive_text())["data"]["observation"]["data_idx"] == 18


def test_frames_carry_metadata_beside_the_observation_and_close_is_a_normal_close():
    """As OpenEnv's serialize_observation: a step's metadata also at the frame's top level; ``close`` ends the
    socket with a close frame (code 1000), not a dropped connection."""
    import json

    connect = pytest.importorskip("websockets.sync.client").connect  # what OpenEnv's client uses
    from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

    with running_server(env_class("maze")) as url, connect(f"{url.replace('http', 'ws')}/maze/openenv/ws") as socket:
        socket.send(json.dumps({"type": "reset", "data": {"data_idx": 18}}))
        socket.recv(timeout=10)
        socket.send(json.dumps({"type": "step", "data": {"action": "move up"}}))
        step = json.loads(socket.recv(timeout=10))["data"]
        assert step["metadata"] and step["metadata"] == step["observation"]["metadata"]
        socket.send(json.dumps({"type": "close"}))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
        assert isinstance(closed.value, ConnectionClosedOK) and closed.value.rcvd.code == 1000
        assert httpx.get(f"{url}/maze/info").json()["live_sessions"] == 0


def test_a_full_server_and_a_token_refuse_openenv_clients_as_they_refuse_others():
    with running_server(env_class("maze"), max_sessions=1) as url:
        with GenericEnvClient(base_url=f"{url}/maze/openenv").sync() as first:
            first.reset(data_idx=3)
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                GenericEnvClient(base_url=f"{url}/maze/openenv").sync().reset(data_idx=3)
        with GenericEnvClient(base_url=f"{url}/maze/openenv").sync() as second:  # the place is free again
            assert not second.reset(data_idx=3).done
    with running_server(env_class("maze"), token="s3cret") as url:
        with pytest.raises(RuntimeError, match="bearer token"):
            GenericEnvClient(base_url=f"{url}/maze/openenv").sync().reset(data_idx=3)
        headers = {"Authorization": "Bearer s3cret"}
        with GenericEnvClient(base_url=f"{url}/maze/openenv", headers=headers).sync() as client:
            assert not client.reset(data_idx=3).done
        assert httpx.get(f"{url}/maze/openenv/schema").status_code == 401
        # health is open, as the server's own /health: a poller carries no token
        assert httpx.get(f"{url}/maze/openenv/health").json() == {"status": "healthy"}
        assert httpx.get(f"{url}/maze/openenv/schema", headers=headers).json()["action"]["required"] == ["action"]
