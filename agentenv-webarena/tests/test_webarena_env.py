"""WebArenaEnv in process: replies and actions in a real browser, refused navigation, tabs, drop-downs, the
stop and its score, per-task and per-session site state, logins, the step budget, and what closing frees."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from agentenv_webarena import WebArenaEnv
from agentenv_webarena import browser as browser_module
from agentenv_webarena.browser import INSTALL_HINT, ChromiumMissing, chromium_path
from webarena_helpers import element, task_index

from agentenv.session import LocalSession


def url_of(session) -> str:
    return session.env.browser.url


def test_a_webarena_reply_and_a_react_reply_are_both_understood(session, runtime):
    session.reset(task_index("In which year was"))
    reply = (f"Let's think step-by-step. The search box is [{element(session, 'searchbox', 'Search Almanac')}]. In "
             "summary, the next action I will perform is ```type "
             f"[{element(session, 'searchbox', 'Search Almanac')}] [Eldermoor] [1]```")
    answer = session.step(reply)
    assert url_of(session).endswith("/search?pattern=Eldermoor")
    assert "PREVIOUS ACTION: type [4] [Eldermoor] [1]" in answer.observation
    link = element(session, "link", "Eldermoor")
    session.step(f"Thought:\nThe article is listed.\n\nAction:\n```click [{link}]```")
    assert url_of(session) == f"{runtime.sites.urls['wikipedia']}/wiki/Eldermoor"


def test_bad_and_impossible_actions_change_nothing_and_say_why(session):
    session.reset(task_index("In which year was"))
    start = url_of(session)
    for action, why in [
        ("open the article please", "Invalid action: \"open the article please\" is not an action"),
        ("click [999]", "there is no element [999] in the current observation"),
        (f"type [{element(session, 'link', 'Eldermoor')}] [x]", "is a link, not a field to type in"),
        ("press [Ctrl+Nope]", "unknown key"),
        ("tab_focus [3]", "there is no tab 3"),
        ("go_forward", "there is no next page"),
        ("goto [javascript:alert(1)]", "is not an http(s) URL"),
        ("goto [http://[::1]", "is not an http(s) URL"),  # urlsplit's ValueError: "failed in the browser"
    ]:
        answer = session.step(f"```{action}```")
        assert why in answer.observation.split("\n\nOBSERVATION:")[0], answer.observation
        assert answer.reward == 0 and not answer.done
        assert url_of(session) == start
    assert session.env.steps == 8


def test_navigation_off_the_sites_is_refused(session, runtime):
    session.reset(task_index("In which year was"))
    article = f"{runtime.sites.urls['wikipedia']}/wiki/Fennick"
    session.step(f"```goto [{article}]```")
    for action in ("goto [http://example.com/]", f"click [{element(session, 'link', 'Official website of Fennick')}]"):
        answer = session.step(f"```{action}```")
        assert answer.observation.startswith("The browser refused to open http://")
        assert "may be visited" in answer.observation
        assert url_of(session) == article  # the tab stayed where it was
        assert "Tab 0 (current): Fennick - Almanac" in answer.observation


def test_tabs(session, runtime):
    session.reset(task_index("In which town is the company"))  # starts with the shop and the wiki open
    assert "Tab 0 (current): Home - Harbor Market | Tab 1: Main Page - Almanac" in session.observation()
    assert "Tab 0: Home - Harbor Market | Tab 1 (current): Main Page - Almanac" in session.step("```tab_focus [1]```").observation
    answer = session.step("```new_tab```")
    assert "Tab 2 (current): about:blank" in answer.observation
    session.step(f"```goto [{runtime.sites.urls['reddit']}/forums]```")
    assert "Tab 2 (current): Forums" in session.observation()
    answer = session.step("```close_tab```")
    assert "Tab 2" not in answer.observation and "Tab 1 (current): Main Page - Almanac" in answer.observation


def test_a_drop_down_is_chosen_by_typing_its_option(session, runtime):
    session.reset(task_index("Disable the product"))
    session.step(f"```goto [{runtime.sites.urls['shopping_admin']}/catalog/product/edit/3]```")
    status = element(session, "combobox", "Status")
    refused = session.step(f"```type [{status}] [Archived] [0]```")
    assert "has no option 'Archived' (its options: Enabled, Disabled)" in refused.observation
    session.step(f"```type [{status}] [disabled] [0]```")
    session.step(f"```click [{element(session, 'button', 'Save')}]```")
    assert "You saved the product." in session.observation()
    value = session.env.runtime.browser.run(session.env.browser.evaluate("document.querySelector('#status').value"))
    assert value == "Disabled"


def test_stop_ends_the_episode_with_its_evaluation(session):
    index = task_index("In which year was")
    session.reset(index)
    year = session.env.config["eval"]["reference_answers"]["must_include"][0]
    wrong = session.step("```stop [1066]```")
    assert (wrong.reward, wrong.terminated, wrong.truncated, wrong.success) == (0.0, True, False, False)
    assert wrong.info["evaluation"]["string_match"] == 0.0
    session.reset(index)
    right = session.step(f"In summary, the next action I will perform is ```stop [It was founded in {year}.]```")
    assert (right.reward, right.done, right.success) == (1.0, True, True)
    assert right.observation.startswith(f"You stopped with the answer 'It was founded in {year}.'")


def comments(session, runtime, post: str) -> str:
    env = session.env
    env.runtime.browser.run(env.browser.goto_for_evaluation(post))
    return env.runtime.browser.run(env.browser.evaluate("document.querySelector('#comments').outerText"))


def test_site_state_is_reset_per_task_and_private_to_a_session(session, runtime):
    index = task_index("Reply to the post")
    config = WebArenaEnv.tasks.bundled[index]
    text = config["instantiation_dict"]["comment"]
    post = config["eval"]["program_html"][0]["url"].replace("__REDDIT__", runtime.sites.urls["reddit"])
    session.reset(index)
    session.step(f"```goto [{post}]```")
    session.step(f"```type [{element(session, 'textbox', 'Comment')}] [{text}] [0]```")
    session.step(f"```click [{element(session, 'button', 'Post comment')}]```")
    assert "Your comment was posted." in session.observation()
    with LocalSession(WebArenaEnv) as other:  # another session sees the seeded forum
        other.reset(index)
        assert text not in comments(other, runtime, post)
    assert text in comments(session, runtime, post)
    session.reset(index)  # a new episode starts from the seeded forum
    assert text not in comments(session, runtime, post)


def test_requests_naming_made_up_namespaces_neither_make_them_nor_push_sessions_out(session, runtime):
    import httpx
    from agentenv_webarena.sites import NAMESPACE_HEADER

    session.reset(task_index("Reply to the post"))
    forum = runtime.sites.urls["reddit"]
    with httpx.Client(timeout=30) as http:  # any local process can reach the sites
        assert http.get(forum).status_code == 200  # no namespace: the public one, to read
        # its writes piled up without bound, and a page could reach the sites through a name for 127.0.0.1
        review = {"nickname": "x", "title": "t", "rating": "5", "text": "A" * 1000}
        shop = runtime.sites.urls["shopping"]
        assert http.post(f"{shop}/review/1", data=review).status_code == 403
        assert http.get(forum, headers={"Host": "evil.example"}).status_code == 403
        for i in range(20):  # none is made: none can push the session's out (the least recently used goes)
            answer = http.get(forum, headers={NAMESPACE_HEADER: f"made-up-{i}"})
            assert answer.status_code == 404, answer.text
    assert "Page not found" not in session.observation()
    session.step(f"```goto [{forum}]```")  # the session's own namespace is still there
    assert "no namespace" not in session.observation() and "Forums" in session.observation()


def test_logins_where_the_task_requires_them(session):
    session.reset(task_index("What is the status of order"))
    assert "Dashboard / Harbor Market Admin" in session.observation()
    session.reset(task_index("What was the grand total of my order"))
    assert "link 'My Account'" in session.observation()
    session.reset(task_index("What is the price of"))  # no login: the cookies of the last task are gone
    assert "link 'Sign In'" in session.observation() and "My Account" not in session.observation()


def test_the_step_budget_truncates_the_episode(runtime):
    short = type("ShortWebArena", (WebArenaEnv,), {"max_steps": 2})
    with LocalSession(short) as session:
        session.reset(0)
        assert not session.step("```scroll [down]```").done
        last = session.step("```scroll [down]```")
        assert (last.terminated, last.truncated, last.done, last.reward) == (False, True, True, 0.0)
        assert last.observation.endswith("The episode ends: 2 actions used.")


def test_a_closed_session_leaves_no_browser_process_behind(runtime):
    before = runtime.browser.process_ids()
    with LocalSession(WebArenaEnv) as session:
        session.reset(task_index("In which town is the company"))  # two tabs
        during = runtime.browser.process_ids()
        assert len(during) > len(before)  # the session's renderer processes
    deadline = time.monotonic() + 10
    while runtime.browser.process_ids() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert runtime.browser.process_ids() <= before


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.15])
def test_a_session_closed_while_its_reset_runs_leaves_no_browser_context(runtime, delay):
    """The server closes a session whose call ran past its deadline from another thread: a close that came
    while the reset was making its browser context missed it, and the context (two Chromium processes)
    lived until the server stopped, while /info counted no session."""
    import threading

    from agentenv.protocol import SessionNotFound

    async def open_contexts() -> int:
        return len(runtime.browser.browser.contexts)

    session = LocalSession(WebArenaEnv)
    ended: list[BaseException | str] = []

    def reset() -> None:
        try:
            session.reset(0)
            ended.append("reset")
        except BaseException as exc:
            ended.append(exc)

    worker = threading.Thread(target=reset)
    worker.start()
    time.sleep(delay)
    session.close()
    worker.join(60)
    assert ended and (ended[0] == "reset" or isinstance(ended[0], SessionNotFound)), ended
    assert runtime.browser.run(open_contexts()) == 0


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_a_stopped_server_leaves_no_process_behind():
    """In a fresh process: a server's sessions run a browser and the sites; once it stops, none is left."""
    done = run_python("""
        import psutil
        from agentenv.client import EnvClient
        from agentenv.testing import running_server
        from agentenv_webarena import WebArenaEnv
        with running_server(WebArenaEnv) as url, EnvClient("webarena", url) as client:
            with client.session() as session:
                session.reset(0)
                started = psutil.Process().children(recursive=True)
                names = sorted({p.name() for p in started})
        alive = [p.pid for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        print(len(started), names, alive)
    """)
    assert done.returncode == 0, done.stderr
    count, _, alive = done.stdout.strip().partition(" ")
    assert int(count) >= 4 and "chromium" in done.stdout and "node" in done.stdout
    assert alive.endswith("[]"), done.stdout


def test_without_chromium_one_line_says_what_to_run(monkeypatch):
    monkeypatch.delenv("WEBARENA_CHROMIUM", raising=False)
    monkeypatch.setattr(browser_module, "DEFAULT_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ChromiumMissing) as raised:
        chromium_path()
    assert str(raised.value) == INSTALL_HINT
    assert "apt-get install -y chromium" in INSTALL_HINT
    failed = run_python("from agentenv_webarena import WebArenaEnv; WebArenaEnv()", WEBARENA_CHROMIUM="/nonexistent")
    assert failed.returncode != 0
    assert failed.stderr.strip().splitlines()[-1] == (
        "agentenv_webarena.browser.ChromiumMissing: WEBARENA_CHROMIUM=/nonexistent is not an executable file")


def test_screenshots_of_the_bundled_sites(runtime, tmp_path):
    from agentenv_webarena.screenshots import take_screenshots

    shots = take_screenshots(tmp_path)
    assert [p.name for p in shots] == ["shopping.png", "shopping_admin.png", "reddit.png", "wikipedia.png"]
    for shot in shots:
        head = shot.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")) == (1280, 720)


def test_no_websocket_or_redirect_leads_the_browser_off_the_sites(runtime):
    """Chromium follows a redirect without asking the route again, and a WebSocket is no request: a page of an
    allowed site reached another local port through both. Now a navigation's redirect with any hop elsewhere
    (or a Location Python and Chromium read differently) is refused as a goto there is, one within the sites
    is followed, and a WebSocket elsewhere is closed."""
    import http.server
    import socket
    import threading

    from agentenv_webarena.actions import Action

    outside, reached = socket.socket(), []
    outside.bind(("127.0.0.1", 0))
    outside.listen(16)
    outside.settimeout(0.2)
    away = f"http://127.0.0.1:{outside.getsockname()[1]}"

    def listen():
        while not stop.is_set():
            try:
                conn, _ = outside.accept()
            except OSError:
                continue
            reached.append(conn.recv(4096).split(b"\r\n")[0])
            conn.close()

    page = (f"<html><body><h1>start</h1><script>try {{ new WebSocket('{away.replace('http', 'ws')}/ws'); }} "
            "catch (e) {}</script></body></html>").encode()
    here_port = []  # known once the site listens
    redirects = {"/redir": lambda: f"{away}/redirected", "/hop": lambda: "/redir", "/inside": lambda: "/landing",
                 # Python reads the host after the "@" (this site), Chromium the one before the backslash
                 "/slash": lambda: f"{away}\\@127.0.0.1:{here_port[0]}/"}

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path]())
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(page if self.path == "/" else b"<html><title>landing</title></html>")

        def log_message(self, *args):
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    here = f"http://127.0.0.1:{site.server_address[1]}"
    here_port.append(site.server_address[1])
    stop = threading.Event()
    threads = [threading.Thread(target=listen, daemon=True), threading.Thread(target=site.serve_forever, daemon=True)]
    for thread in threads:
        thread.start()
    host = runtime.browser
    browsing = host.open_session(allowed={here})
    try:
        host.run(browsing.open_tabs([f"{here}/"]))
        time.sleep(1.0)  # the page's WebSocket and fetch have gone out
        for path in ("/redir", "/hop", "/slash"):
            note = host.run(browsing.act(Action("goto", url=f"{here}{path}"), None))
            assert f"refused to open {away}" in note and browsing.url == f"{here}/", (path, note)
        host.run(browsing.act(Action("goto", url=f"{here}/inside"), None))
        assert browsing.url == f"{here}/landing"
        time.sleep(0.5)
        assert reached == []
    finally:
        host.run(browsing.close())
        stop.set()
        site.shutdown()
        outside.close()


def test_long_text_is_typed_whole(session, runtime):
    """Typed key by key (2.4 ms a key), 25,000 characters outlived the session's deadline (504, session ended):
    text over TYPED_KEY_BY_KEY characters goes in as one paste."""
    session.reset(task_index("In which year was"))
    text = "Eldermoor history " * 60  # 1,080 characters
    box = element(session, "searchbox", "Search Almanac")
    answer = session.step(f"```type [{box}] [{text}] [0]```")
    assert "failed" not in answer.observation.split("\n\nOBSERVATION:")[0]
    value = runtime.browser.run(session.env.browser.evaluate("document.querySelector('input[type=search], "
                                                             "input[name=pattern]').value"))
    assert value == text
    assert len(text) > browser_module.TYPED_KEY_BY_KEY


def test_the_browser_starts_on_a_machine_slow_to_schedule_its_thread(runtime, monkeypatch):
    """Under load the browser's thread had not run its loop yet when the launch was sent to it: "the browser
    is not running", and the env's conformance check failed in CI."""
    import time

    from agentenv_webarena.browser import BrowserHost

    serve = BrowserHost._serve
    monkeypatch.setattr(BrowserHost, "_serve", lambda self: time.sleep(0.5) or serve(self))
    host = BrowserHost(runtime.browser.executable)
    try:
        host.start()
        assert host.browser is not None and host.browser.is_connected()
    finally:
        host.stop()
