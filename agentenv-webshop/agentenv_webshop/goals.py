"""Shopping goals: a target product, the attributes and options it must have, and a price ceiling.

Goals are made the way WebShop makes its synthetic ones: for a product, one goal per combination of its
option values (here up to three combinations per product), each asking for a few of the product's
attributes, every option group's chosen value and a price below a ceiling, in varied phrasings.  The goal
list is then shuffled, so a product's goals, and the many goals of one product type, fall in every split.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .catalog import Catalog, Product
from .vocab import GOAL_OPENINGS

#: the ceilings a goal's price may have: multiples of 10 dollars (WebShop's)
PRICE_STEPS = [10.0 * i for i in range(1, 100)]
#: the ceiling of a goal without one (a product costing more than every step)
NO_CEILING = 1_000_000.0

#: products sold by the amount ("some coffee"), and names already plural ("sunglasses")
MASS_NOUNS = frozenset(
    {
        "shampoo",
        "face moisturizer",
        "nail polish",
        "deodorant",
        "perfume",
        "body wash",
        "sunscreen",
        "peanut butter",
        "coffee",
        "green tea",
        "olive oil",
        "gummy candy",
        "beef jerky",
        "pasta",
        "granola",
        "hot sauce",
        "dark chocolate",
        "sparkling water",
    }
)


@dataclass(frozen=True)
class Goal:
    """What one task asks the agent to buy."""

    #: the product the goal was made from (the expert buys it; any product can score)
    asin: str
    instruction_text: str
    #: attributes the bought product must have (WebShop's ``attributes``)
    attributes: tuple[str, ...]
    #: option group -> the value asked for (for human goals, whose options are a bare list, the group is
    #: the product's group holding that value, or ``option N`` where none does)
    options: dict[str, str]
    price_upper: float
    #: the target's search query, category path and title: the type reward compares them
    query: str
    product_category: str
    name: str
    category: str

    @property
    def has_ceiling(self) -> bool:
        return self.price_upper < NO_CEILING


def price_ceiling(rng: random.Random, price: float) -> float:
    """WebShop's rule: the larger of two of the four 10-dollar steps above the price (none past $980)."""
    steps = [p for p in PRICE_STEPS if p > price][:4]
    if len(steps) < 2:
        return NO_CEILING
    return max(rng.sample(steps, 2))


def instruction(opening: str, options: dict[str, str], price_upper: float) -> str:
    """``{opening} with {group}: {value}, and ..., and price lower than {p:.2f} dollars`` (WebShop's form)."""
    text = opening
    if options:
        text += " with " + ", and ".join(f"{name}: {value}" for name, value in options.items())
    if price_upper < NO_CEILING:
        text += f", and price lower than {price_upper:.2f} dollars"
    return text


def generate_goals(catalog: Catalog, count: int, seed: int = 0) -> list[Goal]:
    """``count`` goals over ``catalog``, deterministic from ``seed``."""
    rng = random.Random(f"webshop-goals:{seed}")
    order = list(range(len(catalog)))
    rng.shuffle(order)
    goals: list[Goal] = []
    while len(goals) < count:  # a small catalog is gone through again, in other words
        for position in order:
            product = catalog[position]
            combinations = option_combinations(product.options)
            per_product = min(len(combinations), rng.choice((1, 2, 2, 3)))
            ceiling = price_ceiling(rng, product.price)
            for combination in rng.sample(combinations, per_product):
                goals.append(_goal(rng, product, product.kind or product.query, combination, ceiling))
            if len(goals) >= count:
                break
    rng.shuffle(goals)
    return goals[:count]


def option_combinations(options: dict[str, list[str]]) -> list[dict[str, str]]:
    """Every choice of one value per option group, groups in the given order (one empty choice where there
    are no options)."""
    names = list(options)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*options.values())]


def _goal(rng: random.Random, product: Product, kind: str, options: dict[str, str], ceiling: float) -> Goal:
    attributes = tuple(rng.sample(product.attributes, rng.choice((1, 1, 2, 2, 3))))
    # "that is dry skin" reads wrong: attributes that are not all adjectives go before the name
    openings = (
        GOAL_OPENINGS
        if all(map(is_adjectival, attributes))
        else [o for o in GOAL_OPENINGS if "that is" not in o and "which is" not in o]
    )
    opening = rng.choice(openings).format(a="\0", name=kind, attrs=_join(attributes))
    following = opening.split("\0", 1)[1]
    opening = opening.replace("\0", _article(kind, following))
    if _article(kind, following) == "":  # a plural name
        opening = opening.replace(" that is ", " that are ").replace(" which is ", " which are ")
    return Goal(
        asin=product.asin,
        instruction_text=instruction(opening, options, ceiling),
        attributes=attributes,
        options=options,
        price_upper=ceiling,
        query=product.query,
        product_category=product.product_category,
        name=product.title,
        category=product.category,
    )


def _article(kind: str, following: str) -> str:
    """The article before ``following``, the words that name the product ``kind``."""
    if kind in MASS_NOUNS:
        return "some "
    if kind.endswith("s") and not kind.endswith("ss"):
        return ""
    return "an " if following[:1] in tuple("aeiou") else "a "


@lru_cache(maxsize=4096)
def is_adjectival(attribute: str) -> bool:
    """Whether an attribute reads as "that is <attribute>": its last word is an adjective or a participle
    (``sulfate free``, ``long lasting``), not a noun (``dry skin``)."""
    from lemminflect import getAllLemmas  # here, not at import: lemminflect imports spaCy where installed

    last = attribute.split()[-1]
    return "ADJ" in getAllLemmas(last) or last.endswith(("ed", "ing"))


def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def search_keywords(goal: Goal) -> str:
    """The words of a goal worth searching for: its instruction without the option and price clauses and
    without the phrasing around the request (``i am looking for``)."""
    text = goal.instruction_text.lower()
    for clause in (" with " + next(iter(goal.options), "\0") + ":", ", and price lower than"):
        text = text.split(clause)[0]
    words = [w for w in text.replace(",", " ").split() if w not in FILLER]
    return " ".join(words) or goal.query


#: request phrasing a search does without
FILLER = frozenset(
    "i i'm am need looking for find me want to buy would like get some a an that is which shopping "
    "please can you could".split()
)
