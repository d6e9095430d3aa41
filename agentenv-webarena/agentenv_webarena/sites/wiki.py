"""Almanac, the wiki-like knowledge site (WebArena's ``__WIKIPEDIA__``, a Kiwix copy of Wikipedia in the
original): read-only articles about towns, rivers, people and companies, with infoboxes, cross links and
a title and text search."""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import quote

from fastapi.responses import HTMLResponse, Response

from .seed import Article, seed_data, slugify
from .store import Store
from .web import Site, e, link, not_found, page, table

COLOR = "#36454f"
HEADER = ("<strong><a href='/'>Almanac</a></strong><form role='search' action='/search' method='get'>"
          "<input type='search' name='pattern' aria-label='Search Almanac' placeholder='Search Almanac'> "
          "<button type='submit'>Go</button></form>")


def article_href(title: str) -> str:
    return "/wiki/" + quote(title.replace(" ", "_"))


@cache
def _linker() -> re.Pattern[str]:
    titles = sorted((a.title for a in seed_data().articles), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(e(t)) for t in titles) + r")\b")


def linked(text: str, current: str) -> str:
    """``text`` escaped, with every other article's title made a link to it."""
    by_escaped = {e(a.title): a.title for a in seed_data().articles}

    def to_link(match: re.Match[str]) -> str:
        title = by_escaped[match.group(1)]
        return match.group(1) if title == current else f"<a href='{article_href(title)}'>{match.group(1)}</a>"

    return _linker().sub(to_link, e(text))


def render_article(a: Article) -> str:
    infobox = table(["", a.title], [[e(k), linked(v, a.title)] for k, v in a.infobox], table_id="infobox")
    sections = "".join(f"<h2>{e(h)}</h2><p>{linked(t, a.title)}</p>" for h, t in a.sections)
    # links off the site, as an encyclopedia has: the env's browser refuses to follow them
    website = f"http://www.{slugify(a.title)}.example/"
    external = f"<h2>External links</h2><ul><li>{link(website, f'Official website of {a.title}')}</li></ul>"
    return f"<h1 id='firstHeading'>{e(a.title)}</h1>{infobox}<p>{linked(a.summary, a.title)}</p>{sections}{external}"


def build(store: Store, control_token: str) -> Site:
    """The wiki's app (read-only: it never touches the namespaced store, only its control routes do)."""
    site = Site("wiki", store, control_token)
    app = site.app
    articles = {a.title: a for a in seed_data().articles}

    def render(title: str, body: str) -> HTMLResponse:
        return page(f"{title} - Almanac", body, header=HEADER, color=COLOR)

    @app.get("/")
    async def home() -> Response:
        kinds = {"town": "Towns", "river": "Rivers", "person": "People", "company": "Companies"}
        body = "<h1>Welcome to Almanac</h1><p>The free knowledge base of the Northern Reach, Lowmarch and Westvale.</p>"
        for kind, heading in kinds.items():
            items = "".join(f"<li>{link(article_href(a.title), a.title)}</li>" for a in articles.values() if a.kind == kind)
            body += f"<h2>{heading}</h2><ul>{items}</ul>"
        return render("Main Page", body)

    @app.get("/search")
    async def search(pattern: str = "") -> Response:
        words = pattern.lower().split()
        found = [a for a in articles.values()
                 if words and all(w in f"{a.title} {a.summary}".lower() for w in words)]
        found.sort(key=lambda a: (pattern.lower() not in a.title.lower(), a.title))
        items = "".join(f"<li>{link(article_href(a.title), a.title)}: {e(a.summary)}</li>" for a in found)
        body = (f"<h1>Search results</h1><p>{len(found)} results for '{e(pattern)}'</p>"
                + (f"<ul>{items}</ul>" if found else "<p>No article matches.</p>"))
        return render("Search results", body)

    @app.get("/wiki/{path:path}")
    async def article(path: str) -> Response:
        found = articles.get(path.replace("_", " "))
        if found is None:
            return not_found(f"Almanac has no article {path.replace('_', ' ')}.", header=HEADER, color=COLOR)
        return render(found.title, render_article(found))

    return site
