"""WebShop's reward for buying a product, computed at "Buy Now".

``total = r_type * (attribute matches + option matches + r_price) / (goal attributes + goal options + 1)``

- ``r_price`` is 1 when the product's price is at most the goal's ceiling;
- a goal attribute matches when its token-set ratio with one of the product's attributes is over 85, or
  else when it is a substring of the product's lower-cased title, bullet points or description;
- a goal option matches when its token-set ratio with one of the selected option values is over 85, both
  reduced to their colour word where they name one;
- ``r_type`` (is it the same kind of product?) is 1, or 0.5 when neither the search query, two category
  segments nor the title nouns (over 20%) agree, 0.1 when under 10% of the goal title's nouns are in the
  bought title, and 0 when none is.

Fuzzy ratios come from ``rapidfuzz``; nouns from ``lemminflect``'s English lexicon (a word it knows as a
noun, or one it does not know at all, as a tagger would call most brand names proper nouns), where
WebShop used spaCy's tagger.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from .catalog import Product
from .goals import Goal
from .search import STOPWORDS

#: the fuzzy score over which two attributes or options are the same
MATCH_OVER = 85

#: WebShop's colour words, in its order (alphabetical): an option is reduced to the first one it contains,
#: anywhere in it ("navy blue" -> "blue", "dark wash" -> "ash"), as WebShop's option reward does
COLORS = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue", "blush",
    "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne", "charcoal", "cheetah",
    "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral", "cranberry", "cream",
    "crystal", "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape",
    "graphite", "grass", "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender",
    "lemon", "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint",
    "mocha", "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive", "orange", "peach",
    "pewter", "pink", "plum", "purple", "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire",
    "seashell", "silver", "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe",
    "teal", "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)

WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Reward:
    """The reward of one purchase and its terms (WebShop's ``info`` at Buy Now)."""

    total: float
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    r_att: float
    attribute_matches: int
    r_option: float | None
    option_matches: int
    r_price: bool

    def info(self, goal: Goal) -> dict[str, Any]:
        """The terms with their weights, as WebShop's verbose reward names them."""
        n = len(goal.attributes) + len(goal.options) + 1
        info: dict[str, Any] = {
            "reward": self.total,
            "r_type": self.r_type,
            "r_att": self.r_att,
            "w_att": len(goal.attributes) / n,
            "query_match": self.query_match,
            "category_match": self.category_match,
            "title_score": self.title_score,
            "r_price": self.r_price,
            "w_price": 1 / n,
        }
        if self.r_option is not None:
            info |= {"r_option": self.r_option, "w_option": len(goal.options) / n}
        return info


def reward(product: Product, goal: Goal, selected: Iterable[str]) -> Reward:
    """The reward for buying ``product`` with the option values ``selected`` towards ``goal``."""
    r_type, query_match, category_match, title_score = type_reward(product, goal)
    attribute_matches = count_attribute_matches(product, goal.attributes)
    option_matches = count_option_matches(list(selected), list(goal.options.values()))
    r_price = product.price <= goal.price_upper
    n = len(goal.attributes) + len(goal.options) + 1
    total = r_type * (attribute_matches + option_matches + r_price) / n
    return Reward(
        total=total,
        r_type=r_type,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
        r_att=attribute_matches / len(goal.attributes) if goal.attributes else 0.0,
        attribute_matches=attribute_matches,
        r_option=option_matches / len(goal.options) if goal.options else None,
        option_matches=option_matches,
        r_price=r_price,
    )


def type_reward(product: Product, goal: Goal) -> tuple[float, bool, bool, float]:
    """``(r_type, query_match, category_match, title_score)``."""
    query_match = product.query == goal.query
    bought_path = {s.strip() for s in product.product_category.split("›")}
    goal_path = {s.strip() for s in goal.product_category.split("›")}
    category_match = len(bought_path & goal_path) >= 2
    wanted = title_nouns(goal.name)
    title_score = len(set(title_nouns(product.title)) & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def count_attribute_matches(product: Product, attributes: Iterable[str]) -> int:
    text = " ".join([product.title, *product.bullet_points, product.description]).lower()
    matches = 0
    for wanted in attributes:
        if any(similarity(have, wanted) > MATCH_OVER for have in product.attributes) or wanted in text:
            matches += 1
    return matches


def count_option_matches(selected: list[str], wanted: list[str]) -> int:
    chosen = [color_word(o) for o in selected]
    return sum(any(similarity(have, color_word(w)) > MATCH_OVER for have in chosen) for w in wanted)


def similarity(a: str, b: str) -> float:
    """Token-set ratio (0-100) of two phrases, lower-cased and with punctuation as spaces (as thefuzz's
    default processing, which WebShop used, does)."""
    return fuzz.token_set_ratio(a, b, processor=default_process)


def color_word(option: str) -> str:
    """The first of WebShop's colour words the option contains (``"navy blue"`` -> ``"blue"``), else the
    option itself."""
    lowered = option.lower()
    return next((c for c in COLORS if c in lowered), lowered)


@lru_cache(maxsize=200_000)
def title_nouns(title: str) -> tuple[str, ...]:
    """The nouns of a title, lower-cased, in order (repeats kept, as WebShop counts them)."""
    return tuple(w for w in WORD.findall(title.lower()) if w not in STOPWORDS and _is_noun(w))


@lru_cache(maxsize=50_000)
def _is_noun(word: str) -> bool:
    from lemminflect import getAllLemmas  # here, not at import: lemminflect imports spaCy where installed

    if len(word) < 2:
        return False
    lemmas = getAllLemmas(word)
    return not lemmas or "NOUN" in lemmas or "PROPN" in lemmas
