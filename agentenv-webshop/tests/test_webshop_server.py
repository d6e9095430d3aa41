"""WebShop over HTTP: a real server on a loopback port, AgentGym's wire shapes and the project's client."""

import httpx
import pytest
from agentenv_webshop import WebShopEnv
from agentenv_webshop.client import WebShopClient

from agentenv.react import format_react
from agentenv.registry import client_class
from agentenv.testing import running_server


@pytest.fixture(scope="module")
def base_url():
    with running_server(WebShopEnv) as url:
        yield url


def test_an_agentgym_client_plays_a_whole_episode(base_url):
    """A client written only from AgentGym's WebShop wire facts (DESIGN.md §3), at the server root."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        env_idx = http.post("/create").json()
        assert isinstance(env_idx, int) and not isinstance(env_idx, bool)
        reset = http.post("/reset", json={"env_idx": env_idx, "session_id": 2}).json()
        # AgentGym's answer: [observation, None] (its client then overwrites item 0 with GET /observation)
        observation = http.get("/observation", params={"env_idx": env_idx}).json()
        assert reset == [observation, None] and observation.startswith(
            "WebShop [SEP] Instruction: [SEP] "
        )
        instruction = http.get("/instruction_text", params={"env_idx": env_idx}).json()
        assert instruction.startswith("Instruction: ") and instruction[len("Instruction: ") :] in observation
        state = http.get("/state", params={"env_idx": env_idx}).json()
        assert set(state) == {"url", "html", "instruction_text"} and state["html"].startswith(
            "<!DOCTYPE html>"
        )
        actions = http.get("/available_actions", params={"env_idx": env_idx}).json()
        assert actions == {"has_search_bar": True, "clickables": ["search"]}

        step = http.post("/step", json={"env_idx": env_idx, "action": "search[comfortable shoes]"}).json()
        assert (
            {"state", "reward", "done", "info"} <= set(step) and step["reward"] == 0 and step["done"] is False
        )
        assert "Page 1 (Total results: " in step["state"]
        clickables = http.get("/available_actions", params={"env_idx": env_idx}).json()["clickables"]
        assert clickables[0] == "back to search"
        product = next(c for c in clickables if c.startswith("b0"))
        step = http.post("/step", json={"env_idx": env_idx, "action": f"click[{product}]"}).json()
        assert step["state"].endswith("Buy Now")
        step = http.post("/step", json={"env_idx": env_idx, "action": "click[buy now]"}).json()
        assert step["done"] is True and 0 <= step["reward"] <= 1
        assert step["info"]["asin"].lower() == product and "r_type" in step["info"]
        assert http.post("/close", json={"env_idx": env_idx}).json()["closed"] is True
        assert (
            http.post("/step", json={"env_idx": env_idx, "action": "click[back to search]"}).status_code
            == 404
        )


def test_the_expert_solves_test_tasks_over_http(base_url):
    assert client_class("webshop") is WebShopClient
    with WebShopClient("webshop", base_url) as client:
        for idx in (0, 123, 499):
            with client.session(idx) as session:
                for _ in range(WebShopEnv.max_rounds):
                    move = session.expert()
                    answer = session.step(format_react(move.thought, move.action))
                    if answer.done:
                        break
                assert answer.terminated and answer.reward == 1.0 and answer.success
                assert client.instruction_text(session.id).startswith("Instruction: ")
                assert client.state(session.id)["url"].startswith("/done/")
                detail = session.detail()
                assert detail["page"] == "done" and detail["task_type"] in {
                    "beauty",
                    "food",
                    "fashion",
                    "furniture",
                    "electronics",
                }


def test_html_sessions_are_asked_for_at_create(base_url):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        env_idx = http.post("/create", json={"observation_mode": "html"}).json()
        try:
            first = http.post("/reset", json={"env_idx": env_idx, "session_id": 0}).json()[0]
            assert first.startswith("<!DOCTYPE html>") and 'id="search_input"' in first
            step = http.post("/step", json={"env_idx": env_idx, "action": "search[office chair]"}).json()
            assert 'class="product-link"' in step["state"]
        finally:
            http.post("/close", json={"env_idx": env_idx})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"observation_mode": "pdf"}, "observation_mode must be 'text' or 'html'"),
        ({"browser": "x"}, "browser"),
    ],
)
def test_bad_create_fields_are_422_and_leave_no_session(base_url, body, message):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        live = http.get("/info").json()["live_sessions"]
        refused = http.post("/create", json=body)
        assert refused.status_code == 422 and message in refused.json()["error"]
        assert http.get("/info").json()["live_sessions"] == live


def test_a_task_outside_the_shops_goals_is_refused(base_url):
    with httpx.Client(base_url=base_url, timeout=30) as http:
        env_idx = http.post("/create").json()
        try:
            refused = http.post("/reset", json={"env_idx": env_idx, "session_id": 11_500})
            assert refused.status_code == 422 and "outside every webshop split" in refused.json()["error"]
        finally:
            http.post("/close", json={"env_idx": env_idx})


def test_task_types_are_told_without_playing(base_url):
    """``POST /task_types`` (what ``agentenv eval --sample`` stratifies by): each goal's category."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        told = http.post("/task_types", json={"data_idx": [0, 1, 2, 499]}).json()["task_types"]
        env_idx = http.post("/create").json()
        try:
            for idx, category in zip((0, 1, 2, 499), told, strict=True):
                reset = http.post("/reset", json={"env_idx": env_idx, "data_idx": idx}).json()
                assert reset["task_type"] == category
        finally:
            http.post("/close", json={"env_idx": env_idx})
