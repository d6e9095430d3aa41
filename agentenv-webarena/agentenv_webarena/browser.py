"""The browser: one headless Chromium per process, one browser context per session.

Playwright's async API runs on a thread of its own (:class:`BrowserHost`): env code, which the server runs
in worker threads, hands it coroutines and waits for their results, so many sessions browse at once
through one browser.  Chromium is Debian's (``/usr/bin/chromium``, or ``WEBARENA_CHROMIUM``), started by
Playwright through ``executable_path``; Playwright's own browser download is never used.

A :class:`BrowserSession` is one session's context: its tabs, the origins it may reach (every other
request is refused), the header that names its namespace on the bundled sites, and the actions of
WebArena's grammar carried out with the mouse and keyboard on the elements of the last observation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from .accessibility import Box, Tree, render
from .actions import Action

T = TypeVar("T")

#: where Debian's chromium package puts its launcher
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: the environment variable that names another Chromium binary
CHROMIUM_ENV_VAR = "WEBARENA_CHROMIUM"
#: the one line a machine without Chromium is told
INSTALL_HINT = (
    "Chromium is not installed: run `apt-get install -y chromium` as root "
    f"(or set {CHROMIUM_ENV_VAR} to a Chromium binary)"
)
#: headless, no sandbox (containers run as root), and none of Chromium's own connections: on a closed
#: network they are refused and slow the browser down
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 720}
#: the longest any one browser call may take before it is abandoned (a hung page never hangs a session)
CALL_TIMEOUT_S = 180.0
#: seconds the browser's thread may take to run its event loop (a loaded machine is slow to schedule it)
START_TIMEOUT_S = 60.0
#: how long an action waits for the navigation it started (Playwright's default; a loaded machine with many
#: sessions starting at once needs it)
NAVIGATION_TIMEOUT_MS = 30_000
#: text up to this long is typed key by key (as WebArena does); longer text is inserted as one paste
TYPED_KEY_BY_KEY = 256
#: the most redirects one request may follow (Chromium's own limit)
MAX_REDIRECTS = 20
#: actions whose input may start a navigation (a link clicked, a form sent with Enter), which Playwright's
#: mouse and keyboard do not wait for
MAY_NAVIGATE = frozenset({"click", "type", "press"})
#: how often an observation is taken again while the page is still loading
BUSY_RETRIES = 20

#: key names as models write them -> Playwright's
KEY_NAMES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta",
    "alt": "Alt", "option": "Alt", "shift": "Shift", "enter": "Enter", "return": "Enter", "esc": "Escape",
    "escape": "Escape", "tab": "Tab", "backspace": "Backspace", "delete": "Delete", "del": "Delete",
    "space": "Space", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "pageup": "PageUp", "pagedown": "PageDown", "home": "Home", "end": "End", "insert": "Insert",
}
#: what :meth:`BrowserSession.clear` wipes for each allowed origin (cookies go for the whole context)
SITE_STORAGE = "local_storage,indexeddb,cache_storage,service_workers,websql,file_systems"
#: roles an element must have to be typed into
TYPABLE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})

# our own scripts, run on elements the agent chose; the agent's text is passed as an argument, never as code
SELECT_OPTION_JS = """function (wanted) {
  const norm = s => s.trim().toLowerCase();
  const options = Array.from(this.options);
  const hit = options.find(o => norm(o.text) === norm(wanted)) || options.find(o => norm(o.value) === norm(wanted));
  if (!hit) return options.map(o => o.text.trim());
  this.value = hit.value;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return null;
}"""
IS_SELECT_JS = "function () { return this.tagName === 'SELECT'; }"


class ChromiumMissing(RuntimeError):
    """No Chromium binary where one is looked for."""


def chromium_path() -> str:
    """The Chromium binary to drive: ``WEBARENA_CHROMIUM``, else Debian's, else one on ``PATH``."""
    given = os.environ.get(CHROMIUM_ENV_VAR)
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise ChromiumMissing(f"{CHROMIUM_ENV_VAR}={given} is not an executable file")
        return given
    for candidate in (DEFAULT_CHROMIUM, shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ChromiumMissing(INSTALL_HINT)


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL (default ports written out), lower-cased; ``""`` if it has none."""
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # "http://[::1" or a port that is no number
        return ""
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def _busy(nodes: list[dict[str, Any]]) -> bool:
    """Whether the tree's document is still loading (its root says ``busy``)."""
    root = nodes[0] if nodes else {}
    return any(p.get("name") == "busy" and (p.get("value") or {}).get("value") for p in root.get("properties", []))


class _OffSites(Exception):
    """A navigation's redirect leads off the sites (``url``: the hop refused)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class BrowserHost:
    """One Chromium for the process, driven from a thread of its own with Playwright's async API."""

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or chromium_path()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.playwright: Any = None
        self.browser: Any = None

    def start(self) -> None:
        from playwright.async_api import async_playwright

        self.loop = asyncio.new_event_loop()
        running = threading.Event()
        self.loop.call_soon(running.set)  # once the thread runs the loop: a call before then was refused
        self.thread = threading.Thread(target=self._serve, name="webarena-browser", daemon=True)
        self.thread.start()
        if not running.wait(START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"the browser's thread did not start within {START_TIMEOUT_S:.0f} s")

        async def launch() -> None:
            self.playwright = await async_playwright().start()
            self.browser = await self.playwright.chromium.launch(
                executable_path=self.executable, args=CHROMIUM_ARGS, headless=True
            )

        try:
            self.run(launch())
        except BaseException:
            self.stop()
            raise

    def warm_up(self, url: str) -> None:
        """Open and close one page, so that Chromium's helper processes started on first use (its storage
        service) run from now on: a session's own processes are then exactly those its close ends."""

        async def visit() -> None:
            context = await self.browser.new_context()
            try:
                page = await context.new_page()
                await page.goto(url, wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)
            finally:
                await context.close()

        self.run(visit())

    def _serve(self) -> None:
        assert self.loop is not None
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        """Run a coroutine on the browser's thread and wait for its result."""
        if self.loop is None or not self.loop.is_running():
            coro.close()
            raise RuntimeError("the browser is not running")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        """Close the browser and Playwright's driver, then the thread."""
        if self.loop is None:
            return

        async def shutdown() -> None:
            if self.browser is not None:
                with contextlib.suppress(Exception):
                    await self.browser.close()
            if self.playwright is not None:
                with contextlib.suppress(Exception):
                    await self.playwright.stop()

        if self.loop.is_running():
            with contextlib.suppress(Exception):
                self.run(shutdown())
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self.thread is not None:
            self.thread.join(timeout=30)
        self.loop = self.thread = self.browser = self.playwright = None

    def open_session(self, **options: Any) -> BrowserSession:
        """A new browser context (see :meth:`BrowserSession.create`)."""
        return self.run(BrowserSession.create(self, **options))

    def process_ids(self) -> set[int]:
        """The pids of Chromium's processes (the browser and its helpers), for tests and measurements."""
        import psutil

        found = set()
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "chrom" in child.name().lower():
                    found.add(child.pid)
        return found


class ActionFailed(Exception):
    """An action that cannot be carried out here (its message is shown to the agent)."""


class BrowserSession:
    """One session's browser context: tabs, allowed origins, and WebArena's actions on them."""

    def __init__(self, host: BrowserHost, context: Any, allowed: set[str], made_with: tuple[Any, ...] = ()) -> None:
        self.host = host
        self.context = context
        self.allowed = allowed
        #: the options the context was made with (a task asking for others needs a new context)
        self.made_with = made_with
        self.pages: list[Any] = []
        self.current: Any = None
        self.cdp: dict[Any, Any] = {}
        #: navigations refused since the last action (their URLs)
        self.refused: list[str] = []
        #: tab -> its main frame's id (CDP's), for telling its navigations from its frames'
        self.main_frames: dict[Any, str] = {}
        #: tabs whose main frame Chromium was asked to navigate since the last action began
        self.requested: set[Any] = set()
        #: tab -> how many of its main frame's navigations have ended (loaded, failed, or left no page)
        self.ended: dict[Any, int] = {}
        #: set whenever a navigation ends
        self.navigation_ended = asyncio.Event()
        self.closed = False

    # --- set-up -------------------------------------------------------------------------------------------
    @classmethod
    async def create(
        cls,
        host: BrowserHost,
        *,
        allowed: set[str],
        headers: dict[str, str] | None = None,
        storage_state: str | None = None,
        geolocation: dict[str, float] | None = None,
    ) -> BrowserSession:
        options: dict[str, Any] = {"viewport": VIEWPORT, "service_workers": "block", "accept_downloads": False}
        if storage_state:
            options["storage_state"] = storage_state
        if geolocation:
            options |= {"geolocation": geolocation, "permissions": ["geolocation"]}
        context = await host.browser.new_context(**options)
        session = cls(host, context, allowed, (storage_state, geolocation))
        try:
            if headers:
                await context.set_extra_http_headers(headers)
            await context.route("**/*", session._route)
            await context.route_web_socket("**/*", session._route_web_socket)
            context.on("page", session._adopt)
            session._adopt(await context.new_page())
        except BaseException:
            await context.close()
            raise
        return session

    async def _route(self, route: Any) -> None:
        request = route.request
        if origin(request.url) not in self.allowed:
            await self._refuse(route, request.url)
            return
        if not request.is_navigation_request():  # a page's own requests (they may stream, or take long)
            await route.continue_()
            return
        # Chromium follows a redirect without asking the route again, so a site's redirect could take the tab
        # anywhere: a navigation's answer is fetched without following it, its redirect's hops are walked
        # here, and the tab is sent straight to the last one only when every hop is on the sites
        try:
            response = await route.fetch(max_redirects=0, timeout=NAVIGATION_TIMEOUT_MS)
            target = await self._redirect_target(response, request.method)
        except _OffSites as off:
            await self._refuse(route, off.url)
            return
        except Exception:  # the site is down or too slow: the tab shows the failure
            with contextlib.suppress(Exception):
                await route.abort("failed")
            return
        try:
            if target is None:
                await route.fulfill(response=response)
            else:
                await route.fulfill(response=response, headers=response.headers | {"location": target})
        except Exception:  # a tab gone elsewhere meanwhile no longer wants it (Playwright disposed of the answer)
            with contextlib.suppress(Exception):
                await route.abort("failed")

    async def _redirect_target(self, response: Any, method: str) -> str | None:
        """Where a navigation's redirects end (``None``: it was not redirected); :class:`_OffSites` for a hop
        off the sites, or one this walk cannot vouch for."""
        target = None
        for _ in range(MAX_REDIRECTS):
            if not (300 <= response.status < 400 and "location" in response.headers):
                return target
            target = urljoin(response.url, response.headers["location"])
            # a URL that Python and Chromium may read differently (a backslash, user info, spaces) is refused,
            # and so is a 307/308 of a form: Chromium would send it again, to a hop not checked here
            if (origin(target) not in self.allowed or "\\" in target or urlsplit(target).username is not None
                    or any(c <= " " for c in target) or (response.status in (307, 308) and method not in ("GET", "HEAD"))):
                raise _OffSites(target)
            response = await self.context.request.get(target, max_redirects=0, timeout=NAVIGATION_TIMEOUT_MS)
        raise RuntimeError(f"more than {MAX_REDIRECTS} redirects")

    async def _refuse(self, route: Any, url: str) -> None:
        request = route.request
        if request.is_navigation_request():
            # "204 No Content" to a navigation leaves the tab where it was (an abort would show an error page)
            self.refused.append(url)
            self.navigation_ended.set()
            await route.fulfill(status=204, body="")
            return
        await route.abort("blockedbyclient")

    async def _route_web_socket(self, socket: Any) -> None:
        if origin(socket.url.replace("ws", "http", 1)) in self.allowed:
            socket.connect_to_server()
        else:
            await socket.close(code=1008, reason="the browser may reach the task's sites only")

    def _adopt(self, page: Any) -> None:
        """A new tab (ours, or one a link opened): track it and make it current."""
        if page in self.pages:
            return
        self.pages.append(page)
        self.current = page
        page.on("load", lambda _: self._navigation_over(page))
        page.on("requestfailed", lambda request: self._main_request_over(page, request))
        page.on("response", lambda response: self._main_request_over(page, response.request, response.status))
        page.on("close", lambda _: self._forget(page))

    def _navigation_over(self, page: Any) -> None:
        self.ended[page] = self.ended.get(page, 0) + 1
        self.navigation_ended.set()

    def _main_request_over(self, page: Any, request: Any, status: int | None = None) -> None:
        """A main-frame navigation that failed, or was answered with no page to show (204, 205)."""
        if request.is_navigation_request() and request.frame == page.main_frame and status in (None, 204, 205):
            self._navigation_over(page)

    def _navigation_requested(self, page: Any, event: dict[str, Any]) -> None:
        if event.get("frameId") == self.main_frames.get(page) and event.get("disposition", "currentTab") == "currentTab":
            self.requested.add(page)

    def _forget(self, page: Any) -> None:
        if page in self.pages:
            self.pages.remove(page)
        self.cdp.pop(page, None)
        self._navigation_over(page)  # wakes whoever waits on its navigation
        self.ended.pop(page, None)
        self.main_frames.pop(page, None)
        if self.current is page:
            self.current = self.pages[-1] if self.pages else None

    async def clear(self) -> None:
        """Back to a fresh start for the next task: one tab, no cookies, no site storage.  (The tab and its
        renderer process are kept: a new one costs a process start; its history is reset in
        :meth:`open_tabs`.)"""
        keep = await self._current_page()
        for page in list(self.pages):
            if page is not keep:
                with contextlib.suppress(Exception):
                    await page.close()
                self._forget(page)
        self.current = keep
        with contextlib.suppress(Exception):
            await keep.evaluate("() => { try { sessionStorage.clear(); } catch (e) {} }")
        await self.context.clear_cookies()
        cdp = await self._session_for(keep)
        for allowed in sorted(self.allowed):
            await cdp.send("Storage.clearDataForOrigin", {"origin": allowed, "storageTypes": SITE_STORAGE})

    async def open_tabs(self, urls: list[str]) -> None:
        """Open the URLs, the first in the current tab (its history then starts there), the others in
        new tabs; the first stays current (WebArena's multi-tab start)."""
        first = await self._current_page()
        await self._goto(first, urls[0])
        await (await self._session_for(first)).send("Page.resetNavigationHistory")
        for url in urls[1:]:
            page = await self.context.new_page()
            self._adopt(page)
            await self._goto(page, url)
        self.current = first
        await first.bring_to_front()

    async def post_form(self, url: str, form: dict[str, str]) -> int:
        """POST a form with the context's cookies (a site's login); returns the final status."""
        response = await self.context.request.post(url, form=form, max_redirects=5)
        return response.status

    # --- observing ----------------------------------------------------------------------------------------
    async def _session_for(self, page: Any) -> Any:
        """The tab's own CDP session, which also hears when Chromium is asked to navigate the tab."""
        cdp = self.cdp.get(page)
        if cdp is None:
            cdp = self.cdp[page] = await self.context.new_cdp_session(page)
            self.main_frames[page] = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            cdp.on("Page.frameRequestedNavigation", lambda event: self._navigation_requested(page, event))
            cdp.on("Page.navigatedWithinDocument", lambda event: self._navigation_over(page))
            await cdp.send("Page.enable")
        return cdp

    async def observe(self, viewport_only: bool = False) -> tuple[str, Tree]:
        """The tabs line and the current tab's accessibility tree."""
        page = await self._current_page()
        cdp = await self._session_for(page)
        for _ in range(BUSY_RETRIES):
            nodes = (await cdp.send("Accessibility.getFullAXTree"))["nodes"]
            if not _busy(nodes):
                break
            await asyncio.sleep(0.05)  # a document still loading: its tree is not complete yet
            with contextlib.suppress(Exception):
                await page.wait_for_load_state("load", timeout=NAVIGATION_TIMEOUT_MS)
        boxes = viewport = None
        if viewport_only:
            boxes, viewport = await self._layout(cdp)
        tree = render(nodes, boxes=boxes, viewport=viewport)
        titles = []
        for i, tab in enumerate(self.pages):
            title = ""
            with contextlib.suppress(Exception):
                title = await tab.title()
            titles.append(f"Tab {i}{' (current)' if tab is page else ''}: {title if title else tab.url}")
        return " | ".join(titles), tree

    async def _layout(self, cdp: Any) -> tuple[dict[int, Box], Box]:
        """Each laid-out node's box and the viewport, in page coordinates (one DOM snapshot)."""
        snapshot = await cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
        document = snapshot["documents"][0]
        backend_ids = document["nodes"]["backendNodeId"]
        layout = document["layout"]
        boxes: dict[int, Box] = {}
        for index, bounds in zip(layout["nodeIndex"], layout["bounds"], strict=True):
            boxes.setdefault(backend_ids[index], tuple(bounds))  # type: ignore[arg-type]
        metrics = await cdp.send("Page.getLayoutMetrics")
        view = metrics["cssLayoutViewport"]
        return boxes, (view["pageX"], view["pageY"], view["clientWidth"], view["clientHeight"])

    async def _current_page(self) -> Any:
        if self.current is None or self.current.is_closed():
            self.current = self.pages[-1] if self.pages else None
        if self.current is None:  # every tab was closed: a blank one, as a browser window keeps
            page = await self.context.new_page()
            self._adopt(page)
        return self.current

    @property
    def url(self) -> str:
        return self.current.url if self.current is not None else "about:blank"

    # --- acting -------------------------------------------------------------------------------------------
    async def act(self, action: Action, tree: Tree) -> str:
        """Carry out an action on the current tab; returns a note for the agent ("" when all went well).
        Raises :class:`ActionFailed` for an action that cannot be carried out here."""
        self.refused.clear()
        self.requested.clear()
        page = await self._current_page()
        cdp = await self._session_for(page)
        ended = self.ended.get(page, 0)
        handler = getattr(self, f"_do_{action.kind}")
        await handler(page, action, tree)
        if action.kind in MAY_NAVIGATE:
            await self._settle(page, cdp, ended)
        if self.refused:
            blocked = self.refused[0]
            return f"The browser refused to open {blocked}: only {', '.join(sorted(self.allowed))} may be visited."
        return ""

    async def _settle(self, page: Any, cdp: Any, ended: int) -> None:
        """Wait for the navigation an input started (a link clicked, a form sent with Enter), as Playwright
        does for its own clicks: Chromium says a navigation was requested while it handles the input, so
        once a message sent after the input comes back, the request (if any) has been heard."""
        with contextlib.suppress(Exception):  # the page may be leaving: then it navigates, as heard
            await cdp.send("Runtime.evaluate", {"expression": "0"})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + NAVIGATION_TIMEOUT_MS / 1000
        while page in self.requested and self.ended.get(page, 0) <= ended and not self.refused:
            self.navigation_ended.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.navigation_ended.wait(), max(deadline - loop.time(), 0))
            if loop.time() >= deadline:
                break
        current = self.current  # a link may have opened a tab, now current
        if current is not None and not current.is_closed():
            with contextlib.suppress(Exception):
                await current.wait_for_load_state("load", timeout=NAVIGATION_TIMEOUT_MS)

    async def _element_center(self, page: Any, action: Action, tree: Tree) -> tuple[float, float]:
        element = tree.elements.get(action.element_id or 0)
        if element is None:
            raise ActionFailed(f"there is no element [{action.element_id}] in the current observation")
        if element.backend_id is None:
            raise ActionFailed(f"element [{action.element_id}] ({element.role}) cannot be pointed at")
        cdp = await self._session_for(page)
        try:
            await cdp.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": element.backend_id})
            quads = (await cdp.send("DOM.getContentQuads", {"backendNodeId": element.backend_id}))["quads"]
        except Exception as exc:
            raise ActionFailed(f"element [{action.element_id}] is no longer on the page") from exc
        if not quads:
            raise ActionFailed(f"element [{action.element_id}] is not visible")
        quad = quads[0]
        return sum(quad[0::2]) / 4, sum(quad[1::2]) / 4

    async def _do_click(self, page: Any, action: Action, tree: Tree) -> None:
        x, y = await self._element_center(page, action, tree)
        await page.mouse.click(x, y)

    async def _do_hover(self, page: Any, action: Action, tree: Tree) -> None:
        x, y = await self._element_center(page, action, tree)
        await page.mouse.move(x, y)

    async def _do_type(self, page: Any, action: Action, tree: Tree) -> None:
        element = tree.elements.get(action.element_id or 0)
        if element is not None and element.role not in TYPABLE_ROLES:
            raise ActionFailed(f"element [{action.element_id}] is a {element.role}, not a field to type in")
        x, y = await self._element_center(page, action, tree)
        assert element is not None and element.backend_id is not None
        cdp = await self._session_for(page)
        handle = (await cdp.send("DOM.resolveNode", {"backendNodeId": element.backend_id}))["object"]["objectId"]
        is_select = await cdp.send("Runtime.callFunctionOn", {
            "objectId": handle, "functionDeclaration": IS_SELECT_JS, "returnByValue": True})
        if is_select["result"].get("value"):
            chosen = await cdp.send("Runtime.callFunctionOn", {
                "objectId": handle, "functionDeclaration": SELECT_OPTION_JS, "returnByValue": True,
                "arguments": [{"value": action.text}]})
            options = chosen["result"].get("value")
            if options is not None:
                raise ActionFailed(f"element [{action.element_id}] has no option {action.text!r} "
                                   f"(its options: {', '.join(map(str, options))})")
            return
        await page.mouse.click(x, y)
        await page.keyboard.press("Control+A")
        await page.keyboard.press("Backspace")  # type replaces what the field held
        if len(action.text) <= TYPED_KEY_BY_KEY:
            await page.keyboard.type(action.text)
        else:  # at about 2.4 ms a key, 25,000 characters outlived the session's deadline: pasted at once
            await page.keyboard.insert_text(action.text)
        if action.enter:
            await page.keyboard.press("Enter")

    async def _do_press(self, page: Any, action: Action, tree: Tree) -> None:
        parts = [p.strip() for p in action.key.split("+")]
        if not all(parts):
            raise ActionFailed(f"{action.key!r} is not a key combination such as Enter or Control+a")
        keys = "+".join(KEY_NAMES.get(p.lower(), p) for p in parts)
        try:
            await page.keyboard.press(keys)
        except Exception as exc:
            if "Unknown key" in str(exc):
                raise ActionFailed(f"unknown key in {action.key!r}") from exc
            raise

    async def _do_scroll(self, page: Any, action: Action, tree: Tree) -> None:
        sign = -1 if action.direction == "up" else 1
        await page.evaluate("sign => window.scrollBy(0, sign * window.innerHeight)", sign)

    async def _do_new_tab(self, page: Any, action: Action, tree: Tree) -> None:
        self._adopt(await self.context.new_page())

    async def _do_tab_focus(self, page: Any, action: Action, tree: Tree) -> None:
        if action.tab is None or not 0 <= action.tab < len(self.pages):
            raise ActionFailed(f"there is no tab {action.tab} (tabs 0 to {len(self.pages) - 1} are open)")
        self.current = self.pages[action.tab]
        await self.current.bring_to_front()

    async def _do_close_tab(self, page: Any, action: Action, tree: Tree) -> None:
        await page.close()
        self._forget(page)
        page = await self._current_page()
        await page.bring_to_front()

    async def _do_goto(self, page: Any, action: Action, tree: Tree) -> None:
        if not origin(action.url):
            raise ActionFailed(f"{action.url!r} is not an http(s) URL")
        if origin(action.url) not in self.allowed:
            self.refused.append(action.url)
            return
        await self._goto(page, action.url)

    async def _goto(self, page: Any, url: str) -> None:
        try:
            await page.goto(url, wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)
        except Exception as exc:
            if origin(url) in self.allowed and not self.refused:
                raise ActionFailed(f"{url} could not be opened ({str(exc).splitlines()[0]})") from exc

    async def _do_go_back(self, page: Any, action: Action, tree: Tree) -> None:
        if await page.go_back(wait_until="load", timeout=NAVIGATION_TIMEOUT_MS) is None:
            raise ActionFailed("there is no previous page in this tab")

    async def _do_go_forward(self, page: Any, action: Action, tree: Tree) -> None:
        if await page.go_forward(wait_until="load", timeout=NAVIGATION_TIMEOUT_MS) is None:
            raise ActionFailed("there is no next page in this tab")

    # --- what evaluators read -----------------------------------------------------------------------------
    async def goto_for_evaluation(self, url: str) -> None:
        page = await self._current_page()
        await page.goto(url, wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)

    async def evaluate(self, expression: str) -> Any:
        """Evaluate a config's JS expression (a ``locator``: config files, never model text) on the page."""
        page = await self._current_page()
        return await page.evaluate(f"() => {expression}")

    async def content(self) -> str:
        page = await self._current_page()
        return await page.content()

    async def screenshot(self, path: str) -> None:
        page = await self._current_page()
        await page.screenshot(path=path)

    # --- closing ------------------------------------------------------------------------------------------
    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            await self.context.close()
