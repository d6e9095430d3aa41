"""The expert: an oracle that knows the goal's product and shops for it as a careful person would.

It searches the goal's keywords, opens a listing on the result page that meets every requirement (the
goal's own product first, else any listing the reward would score 1.0), turns to the next page when only
that one holds such a listing, searches the product's name when no result page does, selects each option
the goal asks for and buys.  Each move comes with a thought that says why, from what the page shows.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from agentenv.env import ExpertAction

from .catalog import Product
from .goals import Goal, search_keywords
from .reward import MATCH_OVER, reward
from .site import BUY_NOW, NEXT_PAGE, PREV_PAGE, RESULTS_PER_PAGE, Site, label


def next_move(site: Site) -> ExpertAction:
    """The expert's action on the site's current page."""
    goal = site.goal
    if site.at == "search":
        keywords = search_keywords(goal)
        return ExpertAction(
            f"I am asked to buy {_request(goal)}. I'll search for {keywords!r}.", f"search[{keywords}]"
        )
    if site.at == "results":
        return _on_results(site)
    if site.at == "item":
        return _on_item(site)
    if site.at in ("description", "features", "reviews"):
        return ExpertAction("I have read enough here; back to the product page.", f"click[{PREV_PAGE}]")
    raise ValueError("the purchase is made: there is no move left")


def fits(product: Product, goal: Goal) -> bool:
    """Whether buying ``product`` with the goal's options scores 1.0."""
    return reward(product, goal, chosen_options(product, goal).values()).total >= 1.0


def chosen_options(product: Product, goal: Goal) -> dict[str, str]:
    """Group -> the product's value that matches each option the goal asks for (where one does)."""
    chosen: dict[str, str] = {}
    for group, wanted in goal.options.items():
        values = product.options.get(group) or [v for vs in product.options.values() for v in vs]
        if wanted in values:
            chosen[_group_of(product, wanted, group)] = wanted
            continue
        best = (
            process.extractOne(wanted, values, scorer=fuzz.token_set_ratio, processor=default_process)
            if values
            else None
        )
        if best is not None and best[1] > MATCH_OVER:
            chosen[_group_of(product, best[0], group)] = best[0]
    return chosen


def _group_of(product: Product, value: str, preferred: str) -> str:
    if value in product.options.get(preferred, ()):
        return preferred
    return next(g for g, values in product.options.items() if value in values)


def _on_results(site: Site) -> ExpertAction:
    goal = site.goal
    here = site.page_results
    fitting = [p for p in here if p.asin == goal.asin] or [p for p in here if fits(p, goal)]
    if fitting:
        product = fitting[0]
        return ExpertAction(
            f"{product.asin} looks right: {_summary(product, goal)}. I'll open it.",
            f"click[{product.asin.lower()}]",
        )
    start = site.page_number * RESULTS_PER_PAGE
    following = site.results[start : start + RESULTS_PER_PAGE]
    if any(p.asin == goal.asin or fits(p, goal) for p in following):
        return ExpertAction(
            f"Nothing on page {site.page_number} meets every requirement; I'll look at the next page.",
            f"click[{NEXT_PAGE}]",
        )
    target = site.shop.catalog.get(goal.asin)
    if target is not None and site.keywords != title_keywords(target):
        keywords = title_keywords(target)
        return ExpertAction(
            "These results do not meet every requirement. I'll search for a more specific product name.",
            f"search[{keywords}]",
        )
    best = max(here, key=lambda p: reward(p, goal, chosen_options(p, goal).values()).total, default=None)
    if best is None:
        keywords = goal.query
        return ExpertAction(
            f"The search found nothing; I'll try the broader words {keywords!r}.", f"search[{keywords}]"
        )
    return ExpertAction(
        f"{best.asin} comes closest to the request; I'll open it.", f"click[{best.asin.lower()}]"
    )


def _on_item(site: Site) -> ExpertAction:
    product, goal = site.product, site.goal
    assert product is not None
    if product.asin != goal.asin and not fits(product, goal):
        return ExpertAction(
            "This product does not meet the request; back to the results.", f"click[{PREV_PAGE}]"
        )
    clickables = site.page.clickables()
    for group, value in chosen_options(product, goal).items():
        # (a value two groups share selects the group the page lists last: skip what cannot be selected)
        if site.options.get(group) != value and clickables[label(value)].group == group:
            return ExpertAction(
                f"The request asks for {group}: {value}; I'll select {value}.", f"click[{value}]"
            )
    return ExpertAction(f"Everything matches: {_summary(product, goal)}. I'll buy it.", f"click[{BUY_NOW}]")


def _summary(product: Product, goal: Goal) -> str:
    parts = [f"it is {_and(goal.attributes)}"] if goal.attributes else []
    if goal.options:
        parts.append(f"it comes in {_and(list(goal.options.values()))}")
    if goal.has_ceiling:
        parts.append(f"it costs {product.price_tag}, under ${goal.price_upper:.2f}")
    else:
        parts.append(f"it costs {product.price_tag}")
    return ", ".join(parts)


def _request(goal: Goal) -> str:
    """The instruction as a noun phrase: ``i need a ...`` -> ``a ...``."""
    text = goal.instruction_text
    for lead in (
        "i am looking for ",
        "i'm looking for ",
        "i need ",
        "find me ",
        "i want to buy ",
        "i would like ",
        "get me ",
        "i am shopping for ",
        "i want ",
    ):
        if text.lower().startswith(lead):
            return text[len(lead) :]
    return f'what this asks for: "{text}"'


def _and(words: list[str] | tuple[str, ...]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def title_keywords(product: Product) -> str:
    """A product's title as search keywords."""
    return " ".join(re.sub(r"[^\w\s.'|-]", " ", product.title.lower()).split())
