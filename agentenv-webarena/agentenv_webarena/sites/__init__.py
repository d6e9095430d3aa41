"""The bundled sites: a shop and its admin panel, a forum and a wiki, served by the package itself.

:class:`BundledSites` runs them in a child process (:mod:`.serve`) on loopback ports and resets or drops a
session's namespace through their control routes.  The sites stand in for WebArena's docker sites under
the same placeholders (``__SHOPPING__``, ``__SHOPPING_ADMIN__``, ``__REDDIT__``, ``__WIKIPEDIA__``).
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import subprocess
import sys
import time

import httpx

from .control import CONTROL_HEADER, CONTROL_PREFIX, CONTROL_TOKEN_ENV, NAMESPACE_HEADER
from .seed import (
    ADMIN_PASSWORD,
    ADMIN_USERNAME,
    FORUM_PASSWORD,
    FORUM_USERNAME,
    SHOP_CUSTOMER_EMAIL,
    SHOP_CUSTOMER_PASSWORD,
)

__all__ = ["LOGINS", "NAMESPACE_HEADER", "BundledSites"]

#: how a task that requires a login signs in to a bundled site: the form's path under the site's URL and
#: its fields (WebArena's docker sites come with such accounts too)
LOGINS: dict[str, tuple[str, dict[str, str]]] = {
    "shopping": ("/customer/account/login", {"email": SHOP_CUSTOMER_EMAIL, "password": SHOP_CUSTOMER_PASSWORD}),
    "shopping_admin": ("/login", {"username": ADMIN_USERNAME, "password": ADMIN_PASSWORD}),
    "reddit": ("/login", {"username": FORUM_USERNAME, "password": FORUM_PASSWORD}),
}

#: where each site's pages live under its origin (WebArena's SHOPPING_ADMIN URL ends in /admin too)
SITE_PATHS = {"shopping": "", "shopping_admin": "/admin", "reddit": "", "wikipedia": ""}
START_TIMEOUT_S = 60.0


class BundledSites:
    """The sites' process and how to reach it."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.token = secrets.token_urlsafe(24)
        self.ports: dict[str, int] = {}
        self.http: httpx.Client | None = None

    @property
    def urls(self) -> dict[str, str]:
        """Site name (WebArena's: ``shopping``, ``shopping_admin``, ``reddit``, ``wikipedia``) -> base URL."""
        return {name: f"http://127.0.0.1:{port}{SITE_PATHS[name]}" for name, port in self.ports.items()}

    @property
    def origins(self) -> set[str]:
        return {f"http://127.0.0.1:{port}" for port in self.ports.values()}

    def start(self) -> None:
        env = dict(os.environ, **{CONTROL_TOKEN_ENV: self.token})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentenv_webarena.sites.serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        )
        try:
            self.ports = self._read_ports()
        except BaseException:
            self.stop()
            raise
        self.http = httpx.Client(timeout=30, headers={CONTROL_HEADER: self.token})

    def _read_ports(self) -> dict[str, int]:
        assert self.process is not None and self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline:
                if selector.select(timeout=0.2):
                    line = self.process.stdout.readline()
                    if line:
                        return {k: int(v) for k, v in json.loads(line).items()}
                if self.process.poll() is not None:
                    break
        raise RuntimeError(f"the bundled WebArena sites did not start (exit code {self.process.poll()})")

    def _control(self, route: str, namespace: str) -> None:
        if self.http is None:
            raise RuntimeError("the bundled sites are not running")
        port = next(iter(self.ports.values()))
        answer = self.http.post(f"http://127.0.0.1:{port}{CONTROL_PREFIX}/{route}", headers={NAMESPACE_HEADER: namespace})
        answer.raise_for_status()

    def reset(self, namespace: str) -> None:
        """Put a namespace's sites back to their seeded state."""
        self._control("reset", namespace)

    def drop(self, namespace: str) -> None:
        """Forget a namespace (its session closed)."""
        self._control("drop", namespace)

    def stop(self) -> None:
        """Stop the sites: their stdin closes, then they are killed if they linger."""
        if self.http is not None:
            self.http.close()
            self.http = None
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
