"""WebShop's own data, when a user has it: products, attributes, goals, indexed as AgentGym indexes them.

A data folder holds

- ``items_shuffle*.json``: the products, a list of ``{asin, name, category, query, product_category,
  pricing, customization_options, small_description, full_description, ...}``;
- ``items_ins_v2*.json``: per ASIN, ``{attributes, instruction, instruction_attributes}`` (the synthetic
  goals' source);
- optionally ``items_human_ins.json`` (per ASIN, a list of ``{instruction, instruction_attributes,
  instruction_options}``: the human goals) and ``reviews.json`` (a list of ``{asin, reviews,
  average_rating}``).

Products are read as WebShop reads them (the first of a repeated ASIN kept, option values lower-cased
with ``/`` written `` | ``, a price range's price drawn once, here from a generator seeded by the ASIN).
Goals are built as AgentGym builds them: synthetic goals, one per option combination of each product with
an instruction, price ceilings drawn in product order from ``random.Random(233)``; human goals, one per
instruction and price step; then the list is shuffled by ``random.Random(233)``, so goal ``i`` here is
AgentGym's session ``i``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from .catalog import NO_PRICE, Catalog, Product, Review
from .goals import NO_CEILING, PRICE_STEPS, Goal, instruction, option_combinations

GOAL_SEED = 233


def load_original(folder: Path, human_goals: bool = False) -> tuple[Catalog, list[Goal]]:
    """The catalog and goals of WebShop's files in ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"WebShop data folder {folder} does not exist")
    items = _read(_one(folder, "items_shuffle*.json"))
    attributes = _read(_one(folder, "items_ins_v2*.json"))
    reviews_file = folder / "reviews.json"
    reviews = {r["asin"]: r for r in _read(reviews_file)} if reviews_file.exists() else {}
    catalog = Catalog(read_products(items, attributes, reviews))
    if human_goals:
        goals = human_goals_of(catalog, _read(_one(folder, "items_human_ins*.json")))
    else:
        goals = synthetic_goals_of(catalog, attributes)
    random.Random(GOAL_SEED).shuffle(goals)
    return catalog, goals


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if not found:
        raise FileNotFoundError(f"no {pattern} in {folder}")
    if len(found) > 1:
        raise ValueError(
            f"{folder} holds several {pattern} files ({', '.join(f.name for f in found)}); keep one"
        )
    return found[0]


def _read(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_products(
    items: list[dict[str, Any]], attributes: dict[str, Any], reviews: dict[str, Any]
) -> list[Product]:
    products: list[Product] = []
    seen: set[str] = set()
    for item in items:
        asin = str(item.get("asin", ""))
        if asin == "nan" or not asin or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        pricing = parse_pricing(item.get("pricing"))
        price = pricing[0] if len(pricing) == 1 else round(random.Random(asin).uniform(*pricing), 2)
        bullets = item.get("small_description") or []
        review = reviews.get(asin, {})
        products.append(
            Product(
                asin=asin,
                title=item.get("name") or "",
                category=item.get("category") or "",
                query=(item.get("query") or "").lower().strip(),
                product_category=item.get("product_category") or "",
                pricing=pricing,
                price=price,
                options=parse_options(item.get("customization_options")),
                attributes=list(attributes.get(asin, {}).get("attributes") or ["DUMMY_ATTR"]),
                bullet_points=bullets if isinstance(bullets, list) else [bullets],
                description=item.get("full_description") or "",
                reviews=[_review(r) for r in review.get("reviews", [])],
                rating=str(review.get("average_rating", "N.A.")),
            )
        )
    return products


def parse_pricing(pricing: str | None) -> tuple[float, ...]:
    """``"$12.99"`` -> ``(12.99,)``; ``"$10.99 - $15.99"`` -> ``(10.99, 15.99)``; none -> ``(100.0,)``."""
    if not pricing:
        return (NO_PRICE,)
    prices = []
    for part in pricing.split("$")[1:]:
        digits = re.sub(r"[^\d.]", "", part)
        try:
            prices.append(float(digits))
        except ValueError:
            continue
    return tuple(prices[:2]) or (NO_PRICE,)


def parse_options(customization: dict[str, Any] | None) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for name, contents in (customization or {}).items():
        if contents is None:
            continue
        options[name.lower()] = [c["value"].strip().replace("/", " | ").lower() for c in contents]
    return options


def _review(raw: dict[str, Any]) -> Review:
    score = raw.get("score", raw.get("stars", 0))
    try:
        score = int(float(score))
    except (TypeError, ValueError):
        score = 0
    return Review(str(raw.get("title", "")), score, str(raw.get("body", raw.get("review", ""))))


def _price_steps(price: float) -> list[float]:
    return [p for p in PRICE_STEPS if p > price][:4]


def synthetic_goals_of(catalog: Catalog, attributes: dict[str, Any]) -> list[Goal]:
    """One goal per option combination of every product with an instruction (WebShop's synthetic goals)."""
    rng = random.Random(GOAL_SEED)
    goals: list[Goal] = []
    for product in catalog:
        record = attributes.get(product.asin) or {}
        text = record.get("instruction")
        if not text:
            continue
        steps = _price_steps(product.price)
        ceiling = max(rng.sample(steps, 2)) if len(steps) >= 2 else NO_CEILING
        wanted = tuple(record.get("instruction_attributes") or ())
        for options in option_combinations({name: product.options[name] for name in sorted(product.options)}):
            goals.append(_goal(product, instruction(text, options, ceiling), wanted, options, ceiling))
    return goals


def human_goals_of(catalog: Catalog, human: dict[str, Any]) -> list[Goal]:
    """AgentGym's human goals: for each human instruction with attributes, one goal per price step among the
    four above the product's price (four without a ceiling where fewer than two steps remain)."""
    goals: list[Goal] = []
    for product in catalog:
        for record in human.get(product.asin) or ():
            wanted = tuple(record.get("instruction_attributes") or ())
            if not wanted:
                continue
            options = _named_options(product, record.get("instruction_options") or {})
            steps = _price_steps(product.price)
            ceilings = steps if len(steps) >= 2 else [NO_CEILING] * 4
            for ceiling in ceilings:
                text = record["instruction"].strip(".")
                if ceiling < NO_CEILING:
                    text += f", and price lower than {ceiling:.2f} dollars"
                goals.append(_goal(product, text, wanted, options, ceiling))
    return goals


def _named_options(product: Product, options: dict[str, str] | list[str]) -> dict[str, str]:
    """Human goals list option values without their groups: name each by the product's group holding it."""
    if isinstance(options, dict):
        return {str(k).lower(): str(v).lower() for k, v in options.items()}
    named: dict[str, str] = {}
    for i, value in enumerate(str(v).lower() for v in options):
        group = next(
            (g for g, values in product.options.items() if value in values and g not in named),
            f"option {i + 1}",
        )
        named[group] = value
    return named


def _goal(
    product: Product, text: str, attributes: tuple[str, ...], options: dict[str, str], ceiling: float
) -> Goal:
    return Goal(
        asin=product.asin,
        instruction_text=text,
        attributes=attributes,
        options=options,
        price_upper=ceiling,
        query=product.query,
        product_category=product.product_category,
        name=product.title,
        category=product.category,
    )
