"""The shopping site one session browses: its pages, what can be clicked on each, and where a click leads.

Pages are lists of :class:`Element` s, rendered either as WebShop's text observation (the visible strings
joined with `` [SEP] ``) or as HTML.  The pages and buttons are WebShop's:

- the search page: ``WebShop [SEP] Instruction: [SEP] {instruction} [SEP] Search``;
- result pages (10 of at most 50 results each): ``Back to Search``, ``Page N (Total results: T)``,
  ``< Prev`` (after the first page), ``Next >`` (always, as in WebShop: past the last page it
  leads to an empty one), then each product's ASIN, title and price;
- item pages: ``Back to Search``, ``< Prev`` (back to the results), each option group and its values,
  title, price, rating, ``Description``, ``Features``, ``Reviews`` (sub-pages whose ``< Prev`` returns to
  the item) and ``Buy Now``, which ends the episode with the reward.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .catalog import Product
from .goals import Goal
from .reward import Reward, reward

if TYPE_CHECKING:
    from .shop import Shop

BACK_TO_SEARCH = "Back to Search"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BUY_NOW = "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")
RESULTS_PER_PAGE = 10
SEP = " [SEP] "

PageName = Literal["search", "results", "item", "description", "features", "reviews", "done"]
ElementKind = Literal[
    "heading", "instruction", "search_bar", "button", "product_link", "option_group", "option", "text"
]


@dataclass(frozen=True)
class Element:
    """One visible thing on a page.  Buttons, product links and options are clickable by their text,
    lower-cased; an option also names its group."""

    kind: ElementKind
    text: str
    group: str = ""
    selected: bool = False

    @property
    def clickable(self) -> bool:
        return self.kind in ("button", "product_link", "option")


def label(text: str) -> str:
    """How an action names a clickable: lower-cased, its spaces collapsed."""
    return " ".join(text.lower().split())


@dataclass
class Page:
    name: PageName
    url: str
    elements: list[Element] = field(default_factory=list)

    def add(self, kind: ElementKind, text: str, **extra: object) -> None:
        self.elements.append(Element(kind, text, **extra))  # type: ignore[arg-type]

    def clickables(self) -> dict[str, Element]:
        """Label (lower-cased, its spaces collapsed, as an action names it) -> element, in page order.  (An
        option of WebShop's own data holds a double space: "black / white" is read "black  |  white".)"""
        return {label(e.text): e for e in self.elements if e.clickable}

    def text(self) -> str:
        """WebShop's text observation: every visible string, joined with `` [SEP] ``."""
        return SEP.join(self._strings())

    def _strings(self) -> Iterator[str]:
        for element in self.elements:
            if element.kind == "instruction":
                yield "Instruction:"
            elif element.kind == "search_bar":
                continue  # an input field: no visible text of its own
            yield element.text

    def html(self) -> str:
        """The page as HTML: buttons ``class="btn"``, product links ``class="product-link"``, options as
        radio inputs, the instruction in ``#instruction-text`` (the classes WebShop's pages use)."""
        out = ["<!DOCTYPE html>", "<html>", "<head><title>WebShop</title></head>", "<body>"]
        for e in self.elements:
            text = html.escape(e.text)
            if e.kind == "heading":
                out.append(f"<h1>{text}</h1>")
            elif e.kind == "instruction":
                out.append(f'<div id="instruction-text"><h4>Instruction:<br>{text}</h4></div>')
            elif e.kind == "search_bar":
                out.append('<input type="text" id="search_input" name="search_query">')
            elif e.kind == "button":
                out.append(f'<button type="submit" class="btn">{text}</button>')
            elif e.kind == "product_link":
                out.append(f'<a class="product-link" href="#{text}">{text}</a>')
            elif e.kind == "option_group":
                out.append(f"<h4>{text}</h4>")
            elif e.kind == "option":
                checked = " checked" if e.selected else ""
                group = html.escape(e.group, quote=True)
                value = html.escape(e.text, quote=True)
                out.append(
                    f'<input type="radio" name="{group}" value="{value}"{checked}><label>{text}</label>'
                )
            else:
                out.append(f"<p>{text}</p>")
        out += ["</body>", "</html>"]
        return "\n".join(out)


class Site:
    """One shopper's visit: the page it is on, its last search, the product open and the options chosen.

    ``search`` and ``click`` move it (the caller checks a click names a clickable of :attr:`page`);
    ``click("buy now")`` answers the purchase's :class:`Reward` and ends the visit.
    """

    def __init__(self, shop: Shop, goal: Goal) -> None:
        self.shop = shop
        self.goal = goal
        self.at: PageName = "search"
        self.keywords = ""
        self.results: list[Product] = []
        self.page_number = 1
        self.product: Product | None = None
        self.options: dict[str, str] = {}
        self.purchase: Reward | None = None
        self._page: Page | None = None

    # --- moves -----------------------------------------------------------------------------------------
    def search(self, keywords: str) -> None:
        self.keywords = keywords
        self.results = self.shop.search(keywords)
        self._go("results", page_number=1)

    def click(self, label: str) -> Reward | None:
        """Follow the clickable ``label`` of the current page (lower-cased, as in an action)."""
        element = self.page.clickables()[label]
        if element.kind == "product_link":
            self.product = self.shop.catalog.get(element.text)
            self._go("item", options={})
        elif element.kind == "option":
            self.options = {**self.options, element.group: element.text}
            self._go("item")
        elif label == BACK_TO_SEARCH.lower():
            self._go("search", keywords="", results=[], product=None, options={})
        elif label == NEXT_PAGE.lower():
            self._go("results", page_number=self.page_number + 1)
        elif label == PREV_PAGE.lower():
            # from results: the page before; from an item: its results; from a sub-page: its item
            if self.at == "results":
                self._go("results", page_number=self.page_number - 1)
            elif self.at == "item":
                self._go("results", product=None, options={})
            else:
                self._go("item")
        elif label in (s.lower() for s in SUB_PAGES):
            self._go(label)  # type: ignore[arg-type]
        elif label == BUY_NOW.lower():
            assert self.product is not None
            self.purchase = reward(self.product, self.goal, self.options.values())
            self._go("done")
            return self.purchase
        return None

    def _go(self, at: PageName, **state: object) -> None:
        self.at = at
        for name, value in state.items():
            setattr(self, name, value)
        self._page = None

    # --- the page ----------------------------------------------------------------------------------------
    @property
    def page(self) -> Page:
        if self._page is None:
            self._page = getattr(self, f"_{self.at}_page")()
        return self._page

    @property
    def page_results(self) -> list[Product]:
        """The products on the current result page."""
        start = (self.page_number - 1) * RESULTS_PER_PAGE
        return self.results[start : start + RESULTS_PER_PAGE]

    def _search_page(self) -> Page:
        page = Page("search", "/")
        page.add("heading", "WebShop")
        page.add("instruction", self.goal.instruction_text)
        page.add("search_bar", "")
        page.add("button", "Search")
        return page

    def _top(self, page: Page) -> Page:
        page.add("instruction", self.goal.instruction_text)
        page.add("button", BACK_TO_SEARCH)
        return page

    def _results_page(self) -> Page:
        page = self._top(Page("results", f"/search_results/{_words(self.keywords)}/{self.page_number}"))
        page.add("text", f"Page {self.page_number} (Total results: {len(self.results)})")
        if self.page_number > 1:
            page.add("button", PREV_PAGE)
        page.add("button", NEXT_PAGE)  # on every results page, the last and an empty one too, as in WebShop
        for product in self.page_results:
            page.add("product_link", product.asin)
            page.add("text", product.title)
            page.add("text", product.price_tag)
        return page

    def _item_url(self, kind: str, *extra: str) -> str:
        assert self.product is not None
        parts = [
            kind,
            self.product.asin,
            _words(self.keywords),
            str(self.page_number),
            *extra,
            json.dumps(self.options),
        ]
        return "/" + "/".join(parts)

    def _item_page(self) -> Page:
        product = self.product
        assert product is not None
        page = self._top(Page("item", self._item_url("item_page")))
        page.add("button", PREV_PAGE)
        for group, values in product.options.items():
            page.add("option_group", group)
            for value in values:
                page.add("option", value, group=group, selected=self.options.get(group) == value)
        page.add("text", product.title)
        page.add("text", f"Price: {product.price_tag}")
        page.add("text", f"Rating: {product.rating}")
        for sub in SUB_PAGES:
            page.add("button", sub)
        page.add("button", BUY_NOW)
        return page

    def _sub_page(self, name: PageName, lines: list[str]) -> Page:
        page = self._top(Page(name, self._item_url("item_sub_page", name.capitalize())))
        page.add("button", PREV_PAGE)
        for line in lines:
            page.add("text", line)
        return page

    def _description_page(self) -> Page:
        assert self.product is not None
        return self._sub_page("description", [self.product.description or "No description"])

    def _features_page(self) -> Page:
        assert self.product is not None
        return self._sub_page("features", self.product.bullet_points or ["No features listed"])

    def _reviews_page(self) -> Page:
        assert self.product is not None
        lines = [s for r in self.product.reviews for s in (r.title, str(r.score), r.body)]
        return self._sub_page("reviews", lines or ["No reviews found"])

    def _done_page(self) -> Page:
        assert self.product is not None and self.purchase is not None
        page = Page("done", f"/done/{self.product.asin}/{json.dumps(self.options)}")
        page.add("heading", "Thank you for shopping with us!")
        page.add("text", "Purchased")
        page.add("text", f"asin: {self.product.asin}")
        page.add("text", f"options: {json.dumps(self.options)}")
        page.add("text", "Your score (min 0.0, max 1.0)")
        page.add("text", f"{self.purchase.total:.4g}")
        return page


def _words(keywords: str) -> str:
    return "+".join(keywords.split()) or "-"
