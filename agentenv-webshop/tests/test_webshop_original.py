"""WebShop's own data format: a small sample written here loads, indexes its goals as AgentGym does, and
plays, in process and over HTTP."""

import itertools
import json
import random

import httpx
import pytest
from agentenv_webshop import Shop, ShopConfig, WebShopEnv
from agentenv_webshop.original import load_original, parse_pricing

from agentenv.testing import running_server

ITEMS = [
    {
        "asin": "B0SAMPLE01",
        "name": "Earth Glow Bright Citrus Deodorant for Sensitive Skin, 3 Ounce",
        "category": "beauty",
        "query": "Deodorant ",
        "product_category": (
            "Beauty & Personal Care › Personal Care › Deodorants & Antiperspirants › Deodorant"
        ),
        "pricing": "$10.99",
        "customization_options": {
            "Scent": [
                {"value": "Bright Citrus", "image": None},
                {"value": "Calming Lavender", "image": None},
            ],
            "Size": [
                {"value": "3 Ounce (Pack of 1)", "image": None},
                {"value": "Travel Set / 4-Pack", "image": None},  # read "travel set  |  4-pack", as WebShop does
            ],
        },
        "small_description": ["ALUMINUM FREE: natural and safe", "Gentle on sensitive skin"],
        "full_description": "A natural deodorant with calendula.",
        "images": ["https://example.invalid/1.jpg"],
    },
    {
        "asin": "B0SAMPLE02",
        "name": "Oak & Iron Men's Leather Hiking Boots, Waterproof",
        "category": "fashion",
        "query": "men hiking boots",
        "product_category": "Clothing, Shoes & Jewelry › Men › Shoes › Outdoor › Hiking & Trekking",
        "pricing": "$59.99 - $89.99",
        "customization_options": {
            "Color": [{"value": "Brown"}, {"value": "Black"}],
            "Size": [{"value": "9"}, {"value": "10"}, {"value": "11"}],
        },
        "small_description": "Rubber sole, waterproof leather",
        "full_description": "Built for long trails.",
        "images": [],
    },
    {  # a repeated ASIN: the first record stands
        "asin": "B0SAMPLE01",
        "name": "A duplicate",
        "category": "beauty",
        "query": "deodorant",
        "product_category": "",
        "pricing": "$1.00",
        "customization_options": None,
        "small_description": [],
        "full_description": "",
    },
    {
        "asin": "nan",
        "name": "no asin",
        "category": "",
        "query": "",
        "product_category": "",
        "pricing": "",
        "customization_options": None,
        "small_description": [],
        "full_description": "",
    },
    {
        "asin": "B0SAMPLE03",
        "name": "Summit Trail Mix, Gluten Free Snack, 12 oz",
        "category": "food",
        "query": "trail mix",
        "product_category": "Grocery & Gourmet Food › Snack Foods › Trail Mix",
        "pricing": "",
        "customization_options": {},
        "small_description": ["Gluten free", "High protein"],
        "full_description": "Nuts, seeds and dried fruit.",
        "images": [],
    },
]
ATTRIBUTES = {
    "B0SAMPLE01": {
        "attributes": ["sensitive skin", "aluminum free", "long lasting"],
        "instruction": "i would like a bright citrus deodorant for sensitive skin",
        "instruction_attributes": ["sensitive skin", "aluminum free"],
    },
    "B0SAMPLE02": {
        "attributes": ["waterproof", "rubber sole"],
        "instruction": "i need waterproof men's hiking boots with a rubber sole",
        "instruction_attributes": ["waterproof", "rubber sole"],
    },
    "B0SAMPLE03": {"attributes": ["gluten free", "high protein"]},  # no instruction: no synthetic goal
}
HUMAN = {
    "B0SAMPLE02": [
        {
            "instruction": "i want black hiking boots in size 10.",
            "instruction_attributes": ["waterproof"],
            "instruction_options": ["black", "10"],
        },
        {
            "instruction": "boots please",
            "instruction_attributes": [],
            "instruction_options": [],
        },  # skipped: no attributes
    ],
    "B0SAMPLE03": [
        {
            "instruction": "i need a gluten free trail mix",
            "instruction_attributes": ["gluten free"],
            "instruction_options": [],
        }
    ],
}
REVIEWS = [
    {
        "asin": "B0SAMPLE01",
        "average_rating": 4.5,
        "reviews": [{"title": "Works", "stars": "5", "review": "No smell all day."}],
    },
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    folder = tmp_path_factory.mktemp("webshop_data")
    for name, data in (
        ("items_shuffle_sample.json", ITEMS),
        ("items_ins_v2_sample.json", ATTRIBUTES),
        ("items_human_ins.json", HUMAN),
        ("reviews.json", REVIEWS),
    ):
        (folder / name).write_text(json.dumps(data))
    return folder


def test_products_are_read_as_webshop_reads_them(sample):
    catalog, _ = load_original(sample)
    assert [p.asin for p in catalog] == ["B0SAMPLE01", "B0SAMPLE02", "B0SAMPLE03"]
    deodorant, boots, trail_mix = catalog
    assert deodorant.options == {
        "scent": ["bright citrus", "calming lavender"],
        "size": ["3 ounce (pack of 1)", "travel set  |  4-pack"],
    }
    assert (
        deodorant.query == "deodorant" and deodorant.pricing == (10.99,) and deodorant.price_tag == "$10.99"
    )
    assert (
        deodorant.rating == "4.5"
        and deodorant.reviews[0].score == 5
        and deodorant.reviews[0].body == "No smell all day."
    )
    assert (
        boots.pricing == (59.99, 89.99)
        and 59.99 <= boots.price <= 89.99
        and boots.bullet_points == ["Rubber sole, waterproof leather"]
    )
    assert load_original(sample)[0][1].price == boots.price  # the range's draw is fixed
    assert trail_mix.pricing == (100.0,) and trail_mix.rating == "N.A."
    assert parse_pricing("$1,299.00") == (1299.0,)


def test_synthetic_goals_are_indexed_as_agentgyms(sample):
    catalog, goals = load_original(sample)
    # AgentGym's order: per product with an instruction, one goal per combination of its options (groups
    # sorted), ceilings drawn in product order from Random(233); then the list shuffled by Random(233)
    rng, expected = random.Random(233), []
    for product in catalog[:2]:
        steps = [10.0 * i for i in range(1, 100) if 10.0 * i > product.price][:4]
        ceiling = max(rng.sample(steps, 2))
        groups = sorted(product.options)
        for values in itertools.product(*(product.options[g] for g in groups)):
            expected.append((product.asin, dict(zip(groups, values, strict=True)), ceiling))
    random.Random(233).shuffle(expected)
    assert [(g.asin, g.options, g.price_upper) for g in goals] == expected
    first = goals[0]
    options = ", and ".join(f"{k}: {v}" for k, v in first.options.items())
    assert (
        first.instruction_text == f"{ATTRIBUTES[first.asin]['instruction']} with {options}, "
        f"and price lower than {first.price_upper:.2f} dollars"
    )


def test_human_goals_take_one_goal_per_price_step(sample):
    _, goals = load_original(sample, human_goals=True)
    boots = [g for g in goals if g.asin == "B0SAMPLE02"]
    assert (
        len(boots) == 4
        and {g.options["color"] for g in boots} == {"black"}
        and {g.options["size"] for g in boots} == {"10"}
    )
    assert all(
        g.instruction_text.startswith("i want black hiking boots in size 10, and price lower than")
        for g in boots
    )
    trail = [g for g in goals if g.asin == "B0SAMPLE03"]  # $100: four steps above it
    assert [g.price_upper for g in sorted(trail, key=lambda g: g.price_upper)] == [110.0, 120.0, 130.0, 140.0]


@pytest.mark.parametrize("human", [False, True])
def test_the_sample_plays_to_a_full_reward_in_process(sample, human):
    shop = Shop.from_config(
        ShopConfig(data_dir=sample, goal_kind="human" if human else "synthetic", cache_dir=None)
    )
    env = WebShopEnv(shop=shop)
    for idx in range(len(shop.goals)):
        env.reset(idx)
        for _ in range(WebShopEnv.max_rounds):
            result = env.step(env.expert_action().action)
            if result.done:
                break
        assert result.done and result.reward == 1.0, (idx, shop.goal(idx))


def test_the_sample_serves_agentgyms_wire(sample):
    SampleEnv = WebShopEnv.with_config(ShopConfig(data_dir=sample, cache_dir=None))
    # 4 deodorant goals (2 scents x 2 sizes) and 6 boot goals: all of them below 500, the test split
    assert SampleEnv.splits == {"train": range(10, 10), "valid": range(10, 10), "test": range(0, 10)}
    with running_server(SampleEnv) as url, httpx.Client(base_url=url, timeout=30) as http:
        env_idx = http.post("/create").json()
        observation, info = http.post("/reset", json={"env_idx": env_idx, "session_id": 5}).json()  # AgentGym's pair
        goal = http.get("/instruction_text", params={"env_idx": env_idx}).json()
        assert info is None and observation.startswith("WebShop [SEP] Instruction:") and goal.startswith("Instruction: i ")
        for _ in range(SampleEnv.max_rounds):
            move = http.get("/expert", params={"env_idx": env_idx}).json()
            step = http.post("/step", json={"env_idx": env_idx, "action": move["action"]}).json()
            if step["done"]:
                break
        assert step["reward"] == 1.0 and step["state"].startswith("Thank you for shopping with us!")
        assert http.post("/close", json={"env_idx": env_idx}).json()["closed"] is True
