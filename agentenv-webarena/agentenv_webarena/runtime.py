"""What every WebArena session of a process shares: one Chromium and the bundled sites.

:func:`acquire` starts them on first use and counts holders; :func:`release` stops them when the last
holder lets go.  ``WebArenaEnv.shared()`` holds them for a server's (or ``LocalEnv``'s) lifetime, and
each env instance holds them too, so an env made on its own (a benchmark's ``LocalSession``) still works
and still frees everything when it closes.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass

from .browser import BrowserHost
from .sites import BundledSites


@dataclass
class Runtime:
    browser: BrowserHost
    sites: BundledSites


_lock = threading.Lock()
_holders = 0
_runtime: Runtime | None = None


def acquire() -> Runtime:
    """The process's browser and sites, started if nobody holds them yet."""
    global _holders, _runtime
    with _lock:
        if _runtime is None:
            browser = BrowserHost()  # raises ChromiumMissing, with the command to run, before starting anything
            sites = BundledSites()
            sites.start()
            try:
                browser.start()
                browser.warm_up(next(iter(sites.urls.values())))
            except BaseException:
                browser.stop()
                sites.stop()
                raise
            _runtime = Runtime(browser, sites)
        _holders += 1
        return _runtime


def release() -> None:
    """Let go of the runtime; the last holder stops it."""
    global _holders, _runtime
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders or _runtime is None:
            return
        runtime, _runtime = _runtime, None
    _stop(runtime)


def _stop(runtime: Runtime) -> None:
    try:
        runtime.browser.stop()
    finally:
        runtime.sites.stop()


@atexit.register
def _stop_at_exit() -> None:
    """Holders that never let go (an env never closed) must not leave a browser behind."""
    global _holders, _runtime
    with _lock:
        runtime, _runtime, _holders = _runtime, None, 0
    if runtime is not None:
        _stop(runtime)
