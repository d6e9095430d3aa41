"""The product catalog: WebShop's product record, and a generator of catalogs deterministic from a seed.

Product ``i`` of a generated catalog is drawn from its own generator (seeded by the catalog seed and
``i``), so a catalog of 10,000 products is the first 10,000 products of one of 100,000 with the same seed.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .vocab import (
    BRAND_HEADS,
    BRAND_TAILS,
    BRAND_WORDS,
    BULLET_TEMPLATES,
    DESCRIPTION_CLOSINGS,
    DESCRIPTION_MIDDLES,
    DESCRIPTION_OPENINGS,
    OPTION_POOLS,
    PRODUCT_TYPES,
    REVIEW_TEXT,
    ProductType,
)

#: the price of a product WebShop lists without one
NO_PRICE = 100.0


@dataclass(frozen=True, slots=True)
class Review:
    title: str
    score: int
    body: str


@dataclass(slots=True)
class Product:
    """One product, with the fields WebShop's pages and reward read."""

    asin: str
    title: str
    #: the top category (``beauty``, ``food``, ``fashion``, ``furniture``, ``electronics`` here)
    category: str
    #: the search query the product was found by (WebShop's ``query``); the type reward compares it
    query: str
    #: the category path, segments joined with `` › ``
    product_category: str
    #: one price, or the low and high end of a range
    pricing: tuple[float, ...]
    #: the price the reward compares with a goal's ceiling: the price, or one fixed draw in the range
    price: float
    #: option group -> its values (lower-case), in page order
    options: dict[str, list[str]]
    attributes: list[str]
    bullet_points: list[str]
    description: str
    reviews: list[Review] = field(default_factory=list)
    #: the average review score, or ``"N.A."``
    rating: str = "N.A."
    #: the generator's product type (``"peanut butter"``), which goals name the product by; empty for
    #: products loaded from WebShop's files
    kind: str = ""

    @property
    def price_tag(self) -> str:
        """The price as the pages show it: ``$12.99`` or ``$10.99 to $15.99``."""
        if len(self.pricing) == 1:
            return f"${self.pricing[0]:.2f}"
        return f"${self.pricing[0]:.2f} to ${self.pricing[1]:.2f}"

    def search_text(self) -> str:
        """What the search index holds for the product: title, description, first bullet point and
        option names and values (WebShop's index document)."""
        options = " ".join(f"{name} {' '.join(values)}" for name, values in self.options.items())
        first_bullet = self.bullet_points[0] if self.bullet_points else ""
        return f"{self.title} {self.description} {first_bullet} {options}"


class Catalog(Sequence[Product]):
    """Products in a fixed order, also found by ASIN."""

    def __init__(self, products: Sequence[Product]) -> None:
        self.products = list(products)
        self.by_asin = {p.asin: p for p in self.products}
        if len(self.by_asin) != len(self.products):
            raise ValueError("a catalog's ASINs must be unique")

    def __getitem__(self, i):  # type: ignore[override]
        return self.products[i]

    def __len__(self) -> int:
        return len(self.products)

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products)

    def get(self, asin: str) -> Product | None:
        return self.by_asin.get(asin.upper())


# --- generation -----------------------------------------------------------------------------------------


def generate_catalog(size: int, seed: int = 0) -> Catalog:
    """``size`` products of WebShop's five categories, deterministic from ``seed``."""
    if size < 1:
        raise ValueError(f"a catalog needs at least one product, not {size}")
    products: list[Product] = []
    asins: set[str] = set()
    titles: set[str] = set()
    for i in range(size):
        product = generate_product(seed, i)
        while product.asin in asins:  # astronomically rare; drawn again from the product's generator
            product.asin = _asin(random.Random(f"{seed}:{i}:{product.asin}"))
        if product.title in titles:  # two listings may not share a title: add a model number
            product.title = f"{product.title} (Model {product.asin[-4:]})"
        asins.add(product.asin)
        titles.add(product.title)
        products.append(product)
    return Catalog(products)


def generate_product(seed: int, i: int) -> Product:
    """Product ``i`` of the catalog with ``seed``."""
    rng = random.Random(f"webshop:{seed}:{i}")
    kind = rng.choice(PRODUCT_TYPES)
    brand = brand_name(rng)
    descriptors = rng.sample(kind.descriptors, rng.choice((1, 1, 2)))
    attributes = rng.sample(kind.attributes, rng.randint(3, min(5, len(kind.attributes))))
    options = _options(rng, kind)
    size_phrase = rng.choice(kind.sizes) if kind.sizes and rng.random() < 0.7 else ""
    use = rng.choice(kind.uses) if kind.uses and rng.random() < 0.5 else ""
    title = _title(rng, brand, kind, descriptors, attributes, size_phrase, use)
    pricing = _pricing(rng, kind, has_options=bool(options))
    price = pricing[0] if len(pricing) == 1 else round(rng.uniform(*pricing), 2)
    reviews = _reviews(rng, kind, brand, attributes)
    rating = f"{sum(r.score for r in reviews) / len(reviews):.1f}" if reviews else "N.A."
    fill = {"brand": brand, "name": kind.name, "descriptor": " ".join(descriptors)}
    return Product(
        asin=_asin(rng),
        title=title,
        category=kind.category,
        query=kind.query,
        product_category=" › ".join(kind.path),
        pricing=pricing,
        price=price,
        options=options,
        attributes=attributes,
        bullet_points=_bullets(rng, fill, attributes, size_phrase),
        description=_description(rng, fill, attributes),
        reviews=reviews,
        rating=rating,
        kind=kind.name,
    )


def brand_name(rng: random.Random) -> str:
    """A brand: a made-up word (``Lumora``) or two words (``North Willow``)."""
    if rng.random() < 0.7:
        return rng.choice(BRAND_HEADS) + rng.choice(BRAND_TAILS)
    return f"{rng.choice(BRAND_WORDS[0])} {rng.choice(BRAND_WORDS[1])}"


def _asin(rng: random.Random) -> str:
    """An Amazon-style id: ``B0`` and eight capitals or digits."""
    return "B0" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=8))


def _options(rng: random.Random, kind: ProductType) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for name, pool in kind.options.items():
        if rng.random() < 0.15:  # some listings come in one variant only
            continue
        values = OPTION_POOLS[pool] if isinstance(pool, str) else pool
        chosen = set(rng.sample(values, rng.randint(2, min(6, len(values)))))
        options[name] = [v for v in values if v in chosen]  # in the pool's order, as a site lists them
    return options


def _title(
    rng: random.Random,
    brand: str,
    kind: ProductType,
    descriptors: list[str],
    attributes: list[str],
    size_phrase: str,
    use: str,
) -> str:
    words = _cap(" ".join(descriptors))
    name = _cap(kind.name)
    shown = [_cap(a) for a in rng.sample(attributes, rng.randint(1, 2))]
    tail = f", {size_phrase}" if size_phrase else ""
    use = f" {_cap(use)}" if use else ""
    pattern = rng.randrange(4)
    if pattern == 0:
        title = f"{brand} {words} {name}{use} - {', '.join(shown)}{tail}"
    elif pattern == 1:
        title = f"{words} {name} by {brand}, {' & '.join(shown)}{use}{tail}"
    elif pattern == 2:
        title = f"{brand} {name}, {words}, {shown[0]}{tail}"
    else:
        title = f"{brand} {shown[0]} {words} {name}{use}{tail}"
    if rng.random() < 0.2 and not any(w in size_phrase for w in ("pack", "set of", "count")):
        title += f" (Pack of {rng.choice((2, 3, 4, 6))})"
    return title


#: words listings write in their own case
SPELLINGS = {
    w.lower(): w
    for w in (
        "USB",
        "HDMI",
        "LED",
        "GPS",
        "AMOLED",
        "SPF",
        "RFID",
        "UV",
        "SD",
        "SDXC",
        "HDR",
        "iPhone",
        "A2",
        "U3",
        "V30",
    )
}


@lru_cache(maxsize=4096)
def _cap(text: str) -> str:
    """Title case as listings write it: each word capitalised, units, codes and brand spellings kept."""
    words = text.split()
    return " ".join(
        SPELLINGS.get(w, w if any(c.isdigit() for c in w) else w[:1].upper() + w[1:]) for w in words
    )


def _pricing(rng: random.Random, kind: ProductType, has_options: bool) -> tuple[float, ...]:
    low, high = kind.price
    price = _retail(rng, rng.uniform(low, high))
    if has_options and rng.random() < 0.25:  # variants priced differently: the page shows a range
        return (price, _retail(rng, price * rng.uniform(1.1, 1.6)))
    return (price,)


def _retail(rng: random.Random, amount: float) -> float:
    """A shelf price: whole dollars ending in .99, .95, .49 or .00."""
    return max(int(amount), 1) + rng.choice((0.99, 0.99, 0.95, 0.49, 0.0))


def _description(rng: random.Random, fill: dict[str, str], attributes: list[str]) -> str:
    a1, a2 = rng.sample(attributes, 2)
    parts = [
        rng.choice(DESCRIPTION_OPENINGS).format(**fill),
        rng.choice(DESCRIPTION_MIDDLES).format(attr1=a1, attr2=a2),
        rng.choice(DESCRIPTION_CLOSINGS),
    ]
    text = " ".join(p for p in parts if p)
    return text[0].upper() + text[1:]


def _bullets(rng: random.Random, fill: dict[str, str], attributes: list[str], size_phrase: str) -> list[str]:
    bullets = []
    for template, (attr, attr2) in zip(
        rng.sample(BULLET_TEMPLATES, rng.randint(3, 5)),
        itertools.cycle(itertools.pairwise(attributes + attributes[:1])),
        strict=False,
    ):
        bullets.append(
            template.format(
                ATTR=attr.upper(),
                ATTR2=attr2.upper(),
                attr=attr,
                name_cap=fill["name"].capitalize(),
                size_or_one=size_phrase or "one",
                **fill,
            )
        )
    return bullets


def _reviews(rng: random.Random, kind: ProductType, brand: str, attributes: list[str]) -> list[Review]:
    reviews = []
    for _ in range(rng.choice((0, 1, 2, 2, 3, 4))):
        score = rng.choices((5, 4, 3, 2, 1), weights=(50, 25, 12, 8, 5))[0]
        title, body = rng.choice(REVIEW_TEXT[score])
        reviews.append(
            Review(title, score, body.format(name=kind.name, brand=brand, attr=rng.choice(attributes)))
        )
    return reviews
