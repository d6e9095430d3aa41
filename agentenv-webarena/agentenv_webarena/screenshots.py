"""Screenshots of the bundled sites, taken by the env's own browser (the docs' pictures).

    python -m agentenv_webarena.screenshots docs/envs/webarena
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

from . import runtime
from .browser import origin
from .sites import LOGINS, NAMESPACE_HEADER

#: site -> the page shown (under the site's URL), logged in where the site has a login
PAGES = {
    "shopping": "/product/bluefin-chef-knife",
    "shopping_admin": "/catalog/product",
    "reddit": "/f/hiking/14",
    "wikipedia": "/wiki/Harbor_Bay",
}


def take_screenshots(folder: str | Path) -> list[Path]:
    """One 1280x720 PNG per bundled site, ``<site>.png`` in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    held = runtime.acquire()
    written = []
    try:
        urls, host = held.sites.urls, held.browser
        namespace = uuid.uuid4().hex
        held.sites.reset(namespace)
        session = host.open_session(allowed={origin(u) for u in urls.values()}, headers={NAMESPACE_HEADER: namespace})
        try:
            for site, path in PAGES.items():
                if site in LOGINS:
                    login, form = LOGINS[site]
                    host.run(session.post_form(urls[site] + login, form))
                host.run(session.open_tabs([urls[site] + path]))
                written.append(folder / f"{site}.png")
                host.run(session.screenshot(str(written[-1])))
        finally:
            host.run(session.close())
            held.sites.drop(namespace)
    finally:
        runtime.release()
    return written


if __name__ == "__main__":
    for path in take_screenshots(sys.argv[1] if len(sys.argv) > 1 else "."):
        print(path)
