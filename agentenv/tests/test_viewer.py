"""``agentenv view``: the API over two agents' results files (the expert, and the expert cut to 3 rounds)
on BabyAI and Maze, then the page in a real headless Chromium (Playwright): filter, open an episode with
its BabyAI picture, compare the two agents.  Screenshots go to a temporary folder, or to the folder
``AGENTENV_VIEWER_SCREENSHOTS`` names (``AGENTENV_VIEWER_SCREENSHOTS=docs/viewer`` renews the docs' own)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from agentenv.controller.evaluator import EvalTask, evaluate
from agentenv.controller.expert import ExpertAgent
from agentenv.registry import env_class
from agentenv.testing import running_server
from agentenv.viewer import create_app

pytest.importorskip("agentenv_babyai", reason="the viewer test plays BabyAI (agentenv-babyai)")
pytest.importorskip("agentenv_lmrlgym", reason="the viewer test plays Maze (agentenv-lmrlgym)")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[Path, Path]:
    """The expert's episodes and the expert's cut to 3 rounds (a weaker agent) on 8 BabyAI tasks of
    different levels and 4 mazes, played on real servers."""
    babyai, maze = env_class("babyai"), env_class("maze")
    folder = tmp_path_factory.mktemp("results")
    with running_server([babyai]) as babyai_url, running_server([maze]) as maze_url:
        tasks = [EvalTask("babyai", [babyai_url], i) for i in list(babyai.splits["test"])[::50]]
        tasks += [EvalTask("maze", [maze_url], i) for i in list(maze.splits["test"])[:4]]
        runs = (folder / "expert.jsonl", folder / "expert_3_rounds.jsonl")
        for path, rounds in zip(runs, (None, 3), strict=True):
            evaluate(ExpertAgent(), tasks, path, concurrency=4, max_rounds=rounds, temperature=None,
                     progress=False, print_table=False)
    return runs


def test_the_api_lists_filters_shows_and_draws_episodes(results):
    client = TestClient(create_app(list(results)), base_url="http://127.0.0.1")
    runs = client.get("/api/runs").json()
    assert [r["label"] for r in runs["runs"]] == ["expert", "expert_3_rounds"]
    assert runs["envs"] == ["babyai", "maze"] and len(runs["task_types"]) >= 3

    every = client.get("/api/episodes", params={"run": 0}).json()
    assert len(every) == 12 and sum(r["success"] for r in every) >= 11
    babyai = client.get("/api/episodes", params={"run": 1, "env": "babyai", "success": "false", "other": 0}).json()
    assert babyai and all(r["env"] == "babyai" and not r["success"] for r in babyai)
    assert all(r["other_success"] is not None for r in babyai)  # the expert's outcome on the same task

    key = next(r["key"] for r in every if r["env"] == "babyai" and r["rounds"] >= 2)
    episode = client.get("/api/episode", params={"run": 0, "key": key}).json()
    assert episode["picture"] is None
    replies = [t for t in episode["turns"] if t["role"] == "gpt" and "reward" in t]
    assert len(replies) == episode["rounds"] and replies[-1]["reward"] > 0  # the last move pays
    assert episode["turns"][-1].get("final")
    first, last = (client.get("/api/picture", params={"run": 0, "key": key, "round": r}) for r in (0, episode["rounds"]))
    assert first.headers["content-type"] == "image/png" and first.content.startswith(b"\x89PNG")
    assert first.content != last.content  # the agent moved

    maze_key = next(r["key"] for r in every if r["env"] == "maze")
    assert client.get("/api/episode", params={"run": 0, "key": maze_key}).json()["picture"] == "no picture: maze has no render"
    assert client.get("/api/picture", params={"run": 0, "key": maze_key}).status_code == 404
    assert client.get("/api/episode", params={"run": 0, "key": "babyai_999999#0"}).status_code == 404


def test_only_its_own_host_names_are_served_with_a_strict_content_policy(results):
    """A page that points its own name at 127.0.0.1 (DNS rebinding) gets nothing: the Host must be the
    viewer's; every answer forbids scripts from elsewhere and content sniffing."""
    app = create_app(list(results))
    for host in ("http://127.0.0.1:8080", "http://localhost"):
        answer = TestClient(app, base_url=host).get("/api/runs")
        assert answer.status_code == 200
        assert "default-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert TestClient(app, base_url="http://attacker.example:8080").get("/api/runs").status_code == 400


def test_records_with_values_of_the_wrong_kind_are_refused_naming_the_record(tmp_path):
    """They made the list or the whole page a 500 (an int env, a meta that is text, a NaN reward, an item
    number that is "²") or the page script throw (rewards that are not numbers)."""
    import json

    from agentenv.viewer.app import load_runs

    turns = [{"from": "human", "value": "x"}, {"from": "gpt", "value": "Ok."}, {"from": "human", "value": "o"}]
    good = {"item_id": "babyai_1", "conversations": turns + [{"from": "gpt", "value": "a"}] * 2, "reward": 1.0,
            "success": True, "env": "babyai", "meta": {"rewards": ["0.5", 1]}}
    for bad, why in [({"env": 5}, "env is text"), ({"meta": "oops"}, "env is text and meta an object"),
                     ({"reward": float("nan")}, "reward nan is not a finite number"),
                     ({"conversations": [{"from": "human", "value": 7}]}, "a turn's from and value are text")]:
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(good | bad) + "\n")
        with pytest.raises(ValueError, match=re.escape(f"bad.jsonl: line 2 is not an AgentTraj trajectory ({why}")):
            load_runs([path])
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(good | {"item_id": "babyai_\u00b2"}) + "\n" + json.dumps(good) + "\n" + "[" * 100_000 + "\n")
    client = TestClient(create_app([path]), base_url="http://127.0.0.1")
    assert [r["item_id"] for r in client.get("/api/episodes").json()] == ["babyai_1", "babyai_\u00b2"]
    replies = [t for t in client.get("/api/episode", params={"run": 0, "key": "babyai_1#0"}).json()["turns"] if "reward" in t]
    assert [t["reward"] for t in replies] == [None, 1]  # a reward that is no number is shown as none


def test_a_lone_surrogate_in_a_results_file_is_read_as_a_replacement_character(tmp_path, caplog):
    """JSON's escape of half a UTF-16 pair (\\ud800, written by another tool's json.dumps) is no character: the
    viewer answered 500 on its episode, and BC training stopped with an error naming no file."""
    from agentenv.data.trajectory import read_trajectories

    turns = [{"from": "human", "value": "x \ud800"}, {"from": "gpt", "value": "Action: up \udfff"},
             {"from": "human", "value": "ok \U0001f600"}]
    record = {"item_id": "maze_1", "conversations": turns, "reward": 1.0, "success": True, "meta": {"\ud83d": "\ud83d"}}
    path = tmp_path / "lone.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert "\\ud800" in path.read_text() and "\\ud83d\\ude00" in path.read_text()  # the pair is one character
    (traj,) = read_trajectories(path)
    assert [t.value for t in traj.conversations] == ["x \ufffd", "Action: up \ufffd", "ok \U0001f600"]
    assert traj.meta["\ufffd"] == "\ufffd"
    assert "lone.jsonl: line 1 holds 4 lone UTF-16 surrogate(s)" in caplog.text
    client = TestClient(create_app([path]), base_url="http://127.0.0.1")
    episode = client.get("/api/episode", params={"run": 0, "key": "maze_1#0"})
    assert episode.status_code == 200 and episode.json()["turns"][0]["value"] == "x \ufffd"


def test_view_refuses_a_missing_file_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "agentenv.cli", "view", str(tmp_path / "none.jsonl")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and out.stderr.strip() == f"error: no such results file: {tmp_path / 'none.jsonl'}"

    # a folder (a run's, or the dataset collect exported) is named as one, with the files it holds
    from agentenv.viewer.app import load_runs

    (tmp_path / "data").mkdir()
    with pytest.raises(FileNotFoundError, match=r"data is a folder, not a results file: give the results files"):
        load_runs([tmp_path / "data"])
    (tmp_path / "data" / "train.jsonl").write_text("")
    with pytest.raises(FileNotFoundError, match=r"data is a folder, not a results file: give a file in it \(train.jsonl\)"):
        load_runs([tmp_path / "data"])


def test_view_refuses_an_empty_file_or_one_given_twice(results, tmp_path):
    from agentenv.viewer.app import load_runs

    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"empty.jsonl holds no episode: give a file that `agentenv eval` or"):
        load_runs([results[0], tmp_path / "empty.jsonl"])
    with pytest.raises(ValueError, match=r"expert.jsonl is given twice"):
        load_runs([results[0], results[1], results[0]])


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    return path


def test_the_page_in_a_browser_filters_opens_and_compares(results, tmp_path):
    executable = chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from importlib.metadata import version

    if tuple(int(part) for part in version("playwright").split(".")[:2]) < (1, 41):
        # `make test-lowest` installs WebArena's floor, 1.40.0, whose sync API never finished starting here
        # (greenlet); WebArena uses the async API, which works there.  Checked with 1.65.2.
        pytest.skip("playwright 1.40's sync API hangs on this set-up; the viewer's browser test needs 1.41+")
    screenshots = Path(os.environ.get("AGENTENV_VIEWER_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    app, late = create_app(list(results)), {}

    @app.middleware("http")
    async def answer_late(request, call_next):
        # The compared run's answer about the first episode opened comes 2 s late, after a newer click:
        # the page must draw the newest request, not the last answer to arrive.
        query = request.query_params
        if request.url.path == "/api/episode" and query.get("run") == "1" and query.get("key") == late.get("key"):
            await asyncio.sleep(2)
        return await call_next(request)

    with running_server(app) as url, sync_api.sync_playwright() as pw:
        assert httpx.get(url + "/static/viewer.js").status_code == 200
        browser = pw.chromium.launch(executable_path=executable, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            # under the page's content policy: it loads, its style applies, nothing is refused
            strict, refused = browser.new_page(), []
            strict.on("console", lambda message: refused.append(message.text) if "Content Security" in message.text else None)
            strict.goto(url + "/")
            strict.locator("#episodes tbody tr").first.wait_for()
            assert strict.locator("#episodes tbody tr").count() == 12 and not refused
            strict.close()
            page = browser.new_page(viewport={"width": 1400, "height": 860}, bypass_csp=True)  # the test's own waits evaluate strings
            page.goto(url + "/")
            rows = page.locator("#episodes tbody tr")
            rows.first.wait_for()
            assert rows.count() == 12

            page.select_option("#env", "babyai")
            page.wait_for_function("document.querySelectorAll('#episodes tbody tr').length === 8")
            assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {"babyai"}
            page.screenshot(path=screenshots / "list.png")

            late["key"] = rows.nth(1).get_attribute("data-key")
            rows.nth(1).click()
            pane = page.locator(".pane").first
            pane.locator(".turn.gpt .reward").first.wait_for()
            assert pane.locator(".turn.gpt .reward").count() >= 2
            page.wait_for_function("() => { const i = document.querySelector('.pane .picture img');"
                                   " return i && i.complete && i.naturalWidth > 0; }")
            page.screenshot(path=screenshots / "episode.png")

            page.select_option("#compare", "1")  # the 3-round expert beside the expert
            page.wait_for_function("document.querySelectorAll('.pane').length === 2")
            page.select_option("#success", "true")
            page.wait_for_function("document.querySelectorAll('#episodes tbody td.other').length === 8")
            only_expert = rows.filter(has=page.locator("td.other .fail")).first  # a task only the expert solves
            item_id = only_expert.locator("td").first.inner_text()
            only_expert.click()
            page.wait_for_function("() => { const p = document.querySelectorAll('.pane'); return p.length === 2"
                                   " && p[0].querySelector('.facts .ok') && p[1].querySelector('.facts .fail'); }")
            page.wait_for_timeout(2_500)  # the late answers about the first episode have come and gone
            titles = page.locator(".pane h2").all_inner_texts()
            assert "expert_3_rounds" in titles[1] and all(title.endswith(f": {item_id}") for title in titles)
            page.wait_for_function("() => [...document.querySelectorAll('.pane .picture img')]"
                                   ".every(i => i.complete && i.naturalWidth > 0)")
            page.screenshot(path=screenshots / "compare.png")

            # a long list is drawn a thousand rows at a time: 130,000 spread into one call overflowed the
            # stack and the list never drew
            record = json.loads(results[0].read_text().splitlines()[0])
            many = tmp_path / "many.jsonl"
            many.write_text("".join(json.dumps(record | {"item_id": f"{record['env']}_{i}", "data_idx": i}) + "\n"
                                    for i in range(2_500)))
            with running_server(create_app([many])) as many_url:
                page.goto(many_url + "/")
                page.wait_for_function("document.querySelectorAll('#episodes tbody tr[data-key]').length === 1000")
                assert page.locator("#count").inner_text() == "2500 episodes"
                page.locator("#episodes tr.more button").click()
                page.wait_for_function("document.querySelectorAll('#episodes tbody tr[data-key]').length === 2000")
                assert page.locator("#episodes tr.more button").inner_text().startswith("show 500 more of 500")
                # an open episode past the first thousand keeps its row, drawn and marked, when the list is
                # filtered again (the list drew its first thousand rows only, and lost the mark)
                rows.nth(1_500).click()
                page.locator(".pane").first.wait_for()
                page.select_option("#success", "true")
                page.wait_for_function("document.querySelectorAll('#episodes tbody tr.selected').length === 1")
                assert rows.count() == 2_001 and page.locator("#episodes tbody tr.selected").get_attribute(
                    "data-key") == f"{record['env']}_1500#0"
        finally:
            browser.close()
    for name in ("list.png", "episode.png", "compare.png"):
        assert (screenshots / name).stat().st_size > 5_000
