"""The generated catalog, its goals and the search index (built once, then loaded from its disk cache)."""

import re
from collections import Counter

from agentenv_webshop import generate_catalog, generate_goals
from agentenv_webshop.goals import NO_CEILING, search_keywords
from agentenv_webshop.search import SearchIndex, fingerprint
from agentenv_webshop.shop import GENERATED_GOALS, ShopConfig, splits_for


def test_a_catalog_is_deterministic_and_grows_by_appending():
    small, again, larger = (
        generate_catalog(300, seed=5),
        generate_catalog(300, seed=5),
        generate_catalog(600, seed=5),
    )
    assert [p.title for p in small] == [p.title for p in again]
    assert [p.asin for p in small] == [p.asin for p in larger[:300]]
    assert [p.asin for p in generate_catalog(300, seed=6)] != [p.asin for p in small]


def test_products_look_like_listings_of_the_five_categories(webshop_small_shop):
    catalog = webshop_small_shop.catalog
    assert set(Counter(p.category for p in catalog)) == {
        "beauty",
        "food",
        "fashion",
        "furniture",
        "electronics",
    }
    assert len({p.asin for p in catalog}) == len({p.title for p in catalog}) == len(catalog)
    brands = {
        p.title.split(" by ")[-1].split(",")[0] if " by " in p.title else p.title.split()[0] for p in catalog
    }
    assert len(brands) > 200  # brands vary as real listings' do
    for product in catalog:
        assert re.fullmatch(r"B0[0-9A-Z]{8}", product.asin)
        assert product.product_category.count(" › ") >= 2 and product.query
        assert 3 <= len(product.attributes) <= 5 and product.bullet_points and product.description
        assert all(values and all(v == v.lower() for v in values) for values in product.options.values())
        low = product.pricing[0]
        assert (
            (product.price == low)
            if len(product.pricing) == 1
            else (low <= product.price <= product.pricing[1])
        )
        assert re.fullmatch(r"\$\d+\.\d\d( to \$\d+\.\d\d)?", product.price_tag)
        assert product.rating == "N.A." or 1 <= float(product.rating) <= 5


def test_goals_follow_webshops_synthetic_form(webshop_small_shop):
    catalog = webshop_small_shop.catalog
    goals = generate_goals(catalog, 400, seed=3)
    assert goals == generate_goals(catalog, 400, seed=3)
    for goal in goals:
        product = catalog.get(goal.asin)
        assert set(goal.attributes) <= set(product.attributes) and 1 <= len(goal.attributes) <= 3
        assert list(goal.options) == list(product.options)  # one value of every option group
        assert all(value in product.options[group] for group, value in goal.options.items())
        options = ", and ".join(f"{g}: {v}" for g, v in goal.options.items())
        assert (" with " + options in goal.instruction_text) == bool(goal.options)
        # the ceiling is the second to fourth 10-dollar step above the price
        assert goal.price_upper == NO_CEILING or product.price < goal.price_upper - 10 <= product.price + 30
        assert goal.instruction_text.endswith(f", and price lower than {goal.price_upper:.2f} dollars")
        assert all(a in goal.instruction_text for a in goal.attributes)
    # several goals share a product, and many share a product type
    assert max(Counter(g.asin for g in goals).values()) >= 2
    assert len({g.query for g in goals}) < len(goals) / 4
    phrasings = Counter(" ".join(g.instruction_text.split()[:2]) for g in goals)
    assert len(phrasings) >= 5


def test_search_keywords_drop_the_request_phrasing_options_and_price(webshop_small_shop):
    goal = webshop_small_shop.goal(0)
    keywords = search_keywords(goal)
    assert "price" not in keywords and "dollars" not in keywords and not keywords.startswith(("i ", "find "))
    assert all(word in keywords for word in goal.attributes[0].split())


def test_splits_are_fixed_index_ranges():
    splits = splits_for(GENERATED_GOALS)
    assert splits == {"train": range(1500, 11_500), "valid": range(500, 1500), "test": range(0, 500)}
    assert splits_for(800) == {"train": range(800, 800), "valid": range(500, 800), "test": range(0, 500)}


def test_the_search_ranks_a_products_own_title_first(webshop_small_shop):
    catalog = webshop_small_shop.catalog
    for product in catalog[:40]:
        assert catalog[webshop_small_shop.index.search(product.title)[0]].asin == product.asin
    found = webshop_small_shop.search("wireless earbuds noise cancelling")
    assert 0 < len(found) <= 50 and "earbud" in (found[0].title + found[0].description).lower()
    assert webshop_small_shop.search("the and of") == []  # stop words only


def test_the_index_is_built_once_and_then_loaded_from_disk(tmp_path):
    documents = [p.search_text() for p in generate_catalog(200, seed=9)]
    built = SearchIndex.cached(documents, tmp_path)
    folder = tmp_path / f"bm25-{fingerprint(documents)}"
    assert (folder / "size.json").exists()
    stamp = (folder / "size.json").stat().st_mtime_ns
    loaded = SearchIndex.cached(documents, tmp_path)
    assert (folder / "size.json").stat().st_mtime_ns == stamp  # not written again
    for query in ("peanut butter", "office chair mesh", "usb c cable braided"):
        assert loaded.search(query) == built.search(query)
    # another catalog is another index
    other = [p.search_text() for p in generate_catalog(201, seed=9)]
    SearchIndex.cached(other, tmp_path)
    assert len(list(tmp_path.glob("bm25-*"))) == 2


def test_a_damaged_cache_is_rebuilt(tmp_path):
    documents = [p.search_text() for p in generate_catalog(100, seed=2)]
    expected = SearchIndex.cached(documents, tmp_path).search("lipstick")
    folder = tmp_path / f"bm25-{fingerprint(documents)}"
    for npy in folder.glob("*.npy"):
        npy.write_bytes(b"not an array")
    assert SearchIndex.cached(documents, tmp_path).search("lipstick") == expected


def test_config_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTENV_WEBSHOP_PRODUCTS", "2500")
    monkeypatch.setenv("AGENTENV_WEBSHOP_SEED", "4")
    monkeypatch.setenv("AGENTENV_WEBSHOP_CACHE", "none")
    config = ShopConfig.from_env()
    assert (config.products, config.seed, config.cache_dir, config.data_dir) == (2500, 4, None, None)
    monkeypatch.setenv("AGENTENV_WEBSHOP_DATA", str(tmp_path))
    monkeypatch.setenv("AGENTENV_WEBSHOP_GOALS", "human")
    config = ShopConfig.from_env()
    assert config.data_dir == tmp_path and config.goal_kind == "human"
    for name, value in (
        ("AGENTENV_WEBSHOP_PRODUCTS", "many"),
        ("AGENTENV_WEBSHOP_PRODUCTS", "0"),
        ("AGENTENV_WEBSHOP_GOALS", "robot"),
    ):
        monkeypatch.setenv(name, value)
        try:
            ShopConfig.from_env()
        except ValueError as exc:
            assert name in str(exc)
        else:
            raise AssertionError(f"{name}={value} was accepted")
        monkeypatch.delenv(name)
