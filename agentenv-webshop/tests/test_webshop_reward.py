"""WebShop's reward, term by term, on hand-built products and goals."""

import pytest
from agentenv_webshop.catalog import Product
from agentenv_webshop.goals import NO_CEILING, Goal
from agentenv_webshop.reward import color_word, reward, title_nouns, type_reward

PATH = "Grocery & Gourmet Food › Pantry Staples › Jams, Jellies & Sweet Spreads › Peanut Butter"


def peanut_butter(**changes) -> Product:
    fields = dict(
        asin="B0PEANUT01",
        title="Silver Nest Crunchy Peanut Butter, Gluten Free, 16 oz jar",
        category="food",
        query="peanut butter",
        product_category=PATH,
        pricing=(12.99,),
        price=12.99,
        options={"flavor": ["creamy", "crunchy", "honey"], "size": ["8 ounce", "1 pound"]},
        attributes=["gluten free", "non gmo", "high protein"],
        bullet_points=["HIGH PROTEIN: 7 g a serving"],
        description="Roasted in small batches. No palm oil.",
    )
    return Product(**{**fields, **changes})


def goal(**changes) -> Goal:
    fields = dict(
        asin="B0PEANUT01",
        instruction_text="i need some gluten free, non gmo peanut butter with flavor: honey, "
        "and size: 1 pound, and price lower than 20.00 dollars",
        attributes=("gluten free", "non gmo"),
        options={"flavor": "honey", "size": "1 pound"},
        price_upper=20.0,
        query="peanut butter",
        product_category=PATH,
        name="Silver Nest Crunchy Peanut Butter, Gluten Free, 16 oz jar",
        category="food",
    )
    return Goal(**{**fields, **changes})


def test_the_goals_own_product_with_its_options_scores_one():
    result = reward(peanut_butter(), goal(), ["honey", "1 pound"])
    assert result.total == 1.0
    assert (result.r_type, result.r_att, result.r_option, result.r_price) == (1.0, 1.0, 1.0, True)
    info = result.info(goal())
    # weights: 2 attributes, 2 options and the price, out of 5
    assert info["w_att"] == pytest.approx(0.4) and info["w_option"] == pytest.approx(0.4)
    assert info["w_price"] == pytest.approx(0.2) and info["reward"] == 1.0


def test_partial_options_and_attributes_count_each_match():
    product = peanut_butter(attributes=["gluten free"], description="Roasted in small batches.")
    result = reward(product, goal(), ["honey", "8 ounce"])
    # gluten free matches, non gmo does not; honey matches, 8 ounce is not 1 pound; the price is under
    assert (result.attribute_matches, result.option_matches, result.r_price) == (1, 1, True)
    assert result.total == pytest.approx(3 / 5)


def test_no_option_selected_and_no_attribute_leaves_only_the_price():
    product = peanut_butter(
        attributes=["organic"], title="Silver Nest Peanut Butter", bullet_points=[], description=""
    )
    result = reward(product, goal(), [])
    assert (result.attribute_matches, result.option_matches) == (0, 0)
    assert result.total == pytest.approx(1 / 5)


def test_a_price_over_the_ceiling_loses_the_price_term():
    result = reward(peanut_butter(price=24.99, pricing=(24.99,)), goal(), ["honey", "1 pound"])
    assert result.r_price is False
    assert result.total == pytest.approx(4 / 5)


def test_a_price_range_is_judged_on_its_fixed_draw():
    product = peanut_butter(pricing=(15.0, 30.0), price=19.5)
    assert reward(product, goal(), ["honey", "1 pound"]).r_price is True
    assert (
        reward(peanut_butter(pricing=(15.0, 30.0), price=21.0), goal(), ["honey", "1 pound"]).r_price is False
    )


def test_an_attribute_found_only_in_the_text_counts():
    product = peanut_butter(attributes=["high protein"], description="Certified non gmo and gluten free.")
    assert reward(product, goal(), ["honey", "1 pound"]).attribute_matches == 2


def test_fuzzy_attribute_match_over_85_only():
    # token-set ratio: one side's words within the other's is 100 ("non gmo" in "non gmo project verified");
    # case and punctuation do not count ("Gluten-Free")
    close = peanut_butter(
        attributes=["non gmo project verified", "Gluten-Free"],
        description="",
        bullet_points=[],
        title="Peanut Butter",
    )
    assert reward(close, goal(), []).attribute_matches == 2
    far = peanut_butter(
        attributes=["glucose syrup", "organic"], description="", bullet_points=[], title="Peanut Butter"
    )
    assert reward(far, goal(), []).attribute_matches == 0


def test_colour_options_match_on_webshop_s_first_colour_word():
    """WebShop reduces an option to the first word of its alphabetical colour list found anywhere in it."""
    assert color_word("Navy Blue") == "blue" and color_word("heather navy") == "heather"
    assert color_word("dark chocolate") == "chocolate" and color_word("dark wash") == "ash"
    assert color_word("rose gold") == "gold" and color_word("large") == "large"
    shirt_goal = goal(options={"color": "navy blue"}, attributes=("gluten free",))
    assert reward(peanut_butter(), shirt_goal, ["light blue"]).option_matches == 1
    assert reward(peanut_butter(), shirt_goal, ["heather navy"]).option_matches == 0
    assert reward(peanut_butter(), shirt_goal, ["black"]).option_matches == 0


def test_a_goal_without_options_has_no_option_term():
    no_options = goal(options={})
    result = reward(peanut_butter(), no_options, [])
    assert result.r_option is None and "r_option" not in result.info(no_options)
    assert result.total == 1.0  # 2 attributes + price out of 3


def test_a_goal_without_a_ceiling_always_has_the_price():
    assert (
        reward(peanut_butter(price=999.0), goal(price_upper=NO_CEILING), ["honey", "1 pound"]).r_price is True
    )


# --- the type term --------------------------------------------------------------------------------------


def test_same_query_keeps_type_one():
    other = peanut_butter(title="Rotix Creamy Peanut Butter Spread", product_category="Grocery › Spreads")
    r_type, query_match, category_match, title_score = type_reward(other, goal())
    assert (r_type, query_match, category_match) == (1.0, True, False)
    # the goal title's nouns: silver nest peanut butter gluten free oz jar
    assert title_score == pytest.approx(2 / 8)


def test_a_different_product_with_few_shared_title_nouns_gets_half():
    # nothing else agrees and 1 of the goal title's 8 nouns is shared: over a tenth, not over a fifth
    other = peanut_butter(
        title="Butter Knife Stainless", query="butter knife", product_category="Home › Kitchen › Cutlery"
    )
    r_type, query_match, category_match, title_score = type_reward(other, goal())
    assert (query_match, category_match) == (False, False)
    assert title_score == pytest.approx(1 / 8)
    assert r_type == 0.5
    # every other term is met (its attributes, options and price): half of 1.0
    assert reward(other, goal(), ["honey", "1 pound"]).total == pytest.approx(0.5)


def test_wrong_type_with_no_shared_noun_scores_zero():
    lamp = peanut_butter(
        title="Tripod Floor Lamp",
        query="floor lamp",
        product_category="Home & Kitchen › Lighting & Ceiling Fans › Lamps",
    )
    r_type, _, _, title_score = type_reward(lamp, goal())
    assert title_score == 0.0 and r_type == 0.0
    assert reward(lamp, goal(), ["honey", "1 pound"]).total == 0.0


def test_under_a_tenth_of_the_nouns_gives_a_tenth():
    long_goal = goal(name="Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel Igloo Jacket Kettle Lamp")
    one_shared = peanut_butter(title="Jacket Zipper", query="jacket", product_category="Clothing › Men")
    r_type, _, _, title_score = type_reward(one_shared, long_goal)
    assert title_score == pytest.approx(1 / 12) and r_type == 0.1


def test_the_type_bounds_a_fifth_of_the_nouns_and_a_price_at_the_ceiling():
    """WebShop's bounds, each side of them: a fifth of the goal title's nouns is not enough (over a fifth is),
    and a price equal to the ceiling is under it."""
    elsewhere = dict(query="zipper", product_category="Clothing › Men")
    fifth = type_reward(peanut_butter(title="Alpha Zipper", **elsewhere), goal(name="Alpha Bravo Charlie Delta Echo"))
    quarter = type_reward(peanut_butter(title="Alpha Zipper", **elsewhere), goal(name="Alpha Bravo Charlie Delta"))
    assert (fifth[3], fifth[0]) == (pytest.approx(0.2), 0.5) and (quarter[3], quarter[0]) == (0.25, 1.0)
    assert reward(peanut_butter(price=20.0, pricing=(20.0,)), goal(), []).r_price is True


def test_shared_category_segments_count_as_the_same_type():
    # one noun of five shared (butter): not over a fifth, so the type stands on the category path alone
    named = goal(name="Silver Nest Peanut Butter Spread")
    other = peanut_butter(title="Almond Butter", query="almond butter")
    assert type_reward(other, named) == (1.0, False, True, pytest.approx(0.2))
    elsewhere = peanut_butter(
        title="Almond Butter", query="almond butter", product_category="Grocery › Nut Butters"
    )
    assert type_reward(elsewhere, named)[0] == 0.5


def test_title_nouns_come_from_a_lexicon_and_unknown_words():
    nouns = title_nouns("Lumora Organic Argan Oil Shampoo for Dry Hair, 16 fl oz")
    assert {"lumora", "shampoo", "hair", "oil"} <= set(nouns)
    assert "for" not in nouns and "dry" not in nouns and "16" not in nouns
