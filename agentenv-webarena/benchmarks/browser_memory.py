"""WebArena's browser costs: starting it, and the memory of a live session, with one Chromium shared by every
session (a browser context each, what the env does) against one Chromium per session.

    python agentenv-webarena/benchmarks/browser_memory.py [--sessions 10] [--out F.json]

1. **Start**: the bundled sites and Chromium (Playwright's driver, the browser, a warm-up page), as the
   first session of a process (or a server's start) pays it.
2. **Shared browser**: ``--sessions`` env sessions, each reset to a bundled task (its own context), and the
   proportional memory (PSS, shared pages split between the processes that map them) that they add to
   this process's tree of child processes; then closed, and the Chromium processes left counted.
3. **A browser per session**: the same number of Chromium browsers, each with one context on the same page.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import psutil
from agentenv_webarena import WebArenaEnv, runtime
from agentenv_webarena.browser import CHROMIUM_ARGS, chromium_path

from agentenv.session import LocalSession


def tree_pss() -> int:
    """Proportional memory of this process's descendants (the sites, Playwright's driver, Chromium)."""
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_full_info().pss
        except psutil.Error:
            pass
    return total


def settle() -> None:
    time.sleep(2)  # renderers of closed contexts exit, new ones finish loading


def shared_browser(sessions: int) -> dict[str, float]:
    t = time.perf_counter()
    held = runtime.acquire()
    started = time.perf_counter() - t
    try:
        settle()
        before, chromium = tree_pss(), held.browser.process_ids()
        live = [LocalSession(WebArenaEnv, i) for i in range(sessions)]
        try:
            t = time.perf_counter()
            for i, session in enumerate(live):
                session.reset(i % len(WebArenaEnv.tasks.bundled))
            opened = time.perf_counter() - t
            settle()
            grown = tree_pss() - before
            per_context = len(held.browser.process_ids() - chromium) / sessions
        finally:
            for session in live:
                session.close()
        settle()
        left = len(held.browser.process_ids() - chromium)
    finally:
        runtime.release()
    return {"start_s": started, "sessions": sessions, "open_and_reset_s": opened,
            "pss_per_session_mib": grown / sessions / 2**20, "processes_per_session": per_context,
            "chromium_processes_left_after_close": left}


async def browsers_per_session(sessions: int, url: str) -> dict[str, float]:
    from playwright.async_api import async_playwright

    playwright = await async_playwright().start()
    before = tree_pss()
    browsers = []
    try:
        t = time.perf_counter()
        for _ in range(sessions):
            browser = await playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = await (await browser.new_context()).new_page()
            await page.goto(url)
            browsers.append(browser)
        opened = time.perf_counter() - t
        await asyncio.sleep(2)
        grown = tree_pss() - before
    finally:
        for browser in browsers:
            await browser.close()
        await playwright.stop()
    return {"sessions": sessions, "open_s": opened, "pss_per_session_mib": grown / sessions / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    results = {"shared_browser": shared_browser(args.sessions)}
    held = runtime.acquire()  # the sites, for the per-session browsers to load the same page
    try:
        url = held.sites.urls["shopping"]
        results["browser_per_session"] = asyncio.run(browsers_per_session(args.sessions, url))
    finally:
        runtime.release()
    shared, separate = results["shared_browser"], results["browser_per_session"]
    print(f"start (sites + Chromium + warm-up): {shared['start_s']:.2f} s")
    print(f"shared browser, {args.sessions} sessions: {shared['pss_per_session_mib']:.1f} MiB PSS per session, "
          f"{shared['processes_per_session']:.1f} processes each, opened and reset in {shared['open_and_reset_s']:.1f} s; "
          f"{shared['chromium_processes_left_after_close']} Chromium processes left after closing them")
    print(f"a browser per session, {args.sessions} sessions: {separate['pss_per_session_mib']:.1f} MiB PSS per session, "
          f"opened in {separate['open_s']:.1f} s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
