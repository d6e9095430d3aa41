"""The site in process: pages, pagination, back navigation, options, Buy Now, invalid actions, HTML mode."""

import re

import pytest
from agentenv_webshop import WebShopEnv, reward
from agentenv_webshop.site import SEP

#: a search that matches more than 50 products of the small shop (every listing "designed with care")
BROAD = "designed with care"


@pytest.fixture
def env(webshop_small_shop):
    env = WebShopEnv(shop=webshop_small_shop)
    env.reset(7)
    return env


def asins(observation: str) -> list[str]:
    return re.findall(r"\bB0[0-9A-Z]{8}\b", observation)


def test_the_first_page_is_webshops_search_page(env, webshop_small_shop):
    goal = webshop_small_shop.goal(7)
    assert env.observation() == f"WebShop{SEP}Instruction:{SEP}{goal.instruction_text}{SEP}Search"
    assert env.available_actions() == {"has_search_bar": True, "clickables": ["search"]}
    assert env.instruction_text() == f"Instruction: {goal.instruction_text}"
    assert env.task_type() == goal.category
    again = WebShopEnv(shop=webshop_small_shop)
    assert again.reset(7) == env.observation()


def test_results_come_ten_a_page_fifty_at_most(env):
    first = env.step(f"search[{BROAD}]")
    assert first.reward == 0 and not first.done
    page = first.observation
    assert (
        page.startswith("Instruction:")
        and f"{SEP}Back to Search{SEP}Page 1 (Total results: 50){SEP}Next >{SEP}" in page
    )
    assert "< Prev" not in page
    shown = asins(page)
    assert len(shown) == 10
    assert env.available_actions()["clickables"] == ["back to search", "next >", *[a.lower() for a in shown]]
    # each result shows its ASIN, title and price
    product = env.shop.catalog.get(shown[0])
    assert f"{shown[0]}{SEP}{product.title}{SEP}{product.price_tag}" in page
    seen = set(shown)
    for number in range(2, 6):
        page = env.step("click[Next >]").observation
        assert f"Page {number} (Total results: 50){SEP}< Prev{SEP}Next >{SEP}" in page
        seen |= set(asins(page))
    assert len(seen) == 50
    # WebShop shows Next > on every results page: past the last one it leads to an empty page
    past = env.step("click[next >]").observation
    assert f"Page 6 (Total results: 50){SEP}< Prev{SEP}Next >" in past and asins(past) == []
    assert "Page 5 (Total results: 50)" in env.step("click[< prev]").observation


def test_a_search_without_matches_shows_an_empty_page(env):
    page = env.step("search[zzzz qqqq]").observation
    assert page.endswith("Page 1 (Total results: 0) [SEP] Next >") and asins(page) == []


def test_back_navigation_returns_where_it_came_from(env):
    env.step(f"search[{BROAD}]")
    env.step("click[next >]")
    second_page = env.observation()
    asin = asins(second_page)[3]
    item = env.step(f"click[{asin}]").observation
    product = env.shop.catalog.get(asin)
    assert (
        f"{SEP}Back to Search{SEP}< Prev{SEP}" in item
        and f"{product.title}{SEP}Price: {product.price_tag}{SEP}Rating:" in item
    )
    assert item.endswith(f"Description{SEP}Features{SEP}Reviews{SEP}Buy Now")
    # an item's < Prev is its result page; a sub-page's is its item; Back to Search is the search page
    assert env.step("click[< prev]").observation == second_page
    env.step(f"click[{asin.lower()}]")
    description = env.step("click[description]").observation
    assert description.endswith(f"< Prev{SEP}{product.description}")
    assert env.step("click[< prev]").observation == item
    features = env.step("click[Features]").observation
    assert features.endswith(SEP.join(product.bullet_points))
    env.step("click[< prev]")
    reviews = env.step("click[reviews]").observation
    assert all(r.body in reviews for r in product.reviews) or "No reviews found" in reviews
    assert env.step("click[back to search]").observation.startswith("WebShop [SEP] Instruction:")


def _item_with_options(env, groups: int = 2):
    """Search broadly and open a listed product with at least ``groups`` option groups."""
    env.step(f"search[{BROAD}]")
    for _ in range(5):
        for asin in asins(env.observation()):
            product = env.shop.catalog.get(asin)
            if len(product.options) >= groups and all(len(v) >= 2 for v in product.options.values()):
                env.step(f"click[{asin}]")
                return product
        env.step("click[next >]")
    raise AssertionError("no product with options among 50 results")


def test_options_are_selected_by_clicking_their_values(env):
    product = _item_with_options(env)
    (group, values), (other_group, other_values) = list(product.options.items())[:2]
    page = env.observation()
    assert f"< Prev{SEP}{group}{SEP}{SEP.join(values)}" in page
    assert set(values) <= set(env.available_actions()["clickables"])
    env.step(f"click[{values[0]}]")
    env.step(f"click[{values[1]}]")  # a second value of the same group replaces the first
    env.step(f"click[{other_values[0]}]")
    assert env.detail()["options"] == {group: values[1], other_group: other_values[0]}
    env.step("click[description]")
    env.step("click[< prev]")
    assert env.detail()["options"] == {
        group: values[1],
        other_group: other_values[0],
    }  # kept across sub-pages
    env.step("click[< prev]")
    env.step(f"click[{product.asin}]")
    assert env.detail()["options"] == {}  # a product opened from the results starts with none


def test_buy_now_ends_the_episode_with_webshops_reward(env):
    product = _item_with_options(env, groups=1)
    chosen = {group: values[-1] for group, values in product.options.items()}
    for value in chosen.values():
        env.step(f"click[{value}]")
    bought = env.step("click[Buy Now]")
    expected = reward(product, env.site.goal, chosen.values())
    assert bought.terminated and bought.done and bought.reward == pytest.approx(expected.total)
    assert bought.info["asin"] == product.asin and bought.info["options"] == chosen
    assert {
        "r_type",
        "r_att",
        "r_price",
        "w_att",
        "w_price",
        "query_match",
        "category_match",
        "title_score",
    } <= set(bought.info)
    assert bought.observation.startswith("Thank you for shopping with us!")
    assert bought.observation.endswith(f"Your score (min 0.0, max 1.0){SEP}{expected.total:.4g}")
    assert env.available_actions()["clickables"] == []


@pytest.mark.parametrize(
    ("action", "why"),
    [
        ("buy the red one", "is not an action; use search[keywords] or click[value]"),
        ("search[]", "search[...] needs keywords"),
        ("search[   ]", "search[...] needs keywords"),
        ("click[search]", "to search, use search[keywords]"),
        ("click[buy now]", '"buy now" is not clickable on this page'),
        ("click[]", '"" is not clickable on this page'),
        ("jump[high]", "is not an action"),
        ("search[" + "x" * 600 + "]", "at most 500 characters"),
    ],
)
def test_an_invalid_action_changes_nothing_and_says_why(env, action, why):
    before = env.observation()
    answer = env.step(action)
    assert answer.reward == 0 and not answer.done and not answer.info
    assert answer.observation.startswith("Invalid action:") and why in answer.observation
    assert answer.observation.endswith(before) and env.observation() == before
    assert env.detail()["page"] == "search"


@pytest.mark.parametrize(
    "reply",
    [
        "search[vegan granola].",
        "search[vegan granola]\n\nThis should list vegan granolas.",
        "\nsearch[vegan granola]\nclick[next >]",
        "search [vegan granola] because it is what the goal asks for",
        "search[vegan\ngranola]",
    ],
)
def test_an_action_is_read_from_the_first_line_as_webshop_reads_it(env, reply):
    """WebShop's parser matches ``verb[argument]`` at the start and ignores what follows the line's last
    "]": a reply with a full stop or a note after its action was refused here, and lost its round."""
    page = env.step(reply).observation
    assert page.startswith("Instruction:") and "Page 1 (Total results:" in page
    assert env.detail()["page"] == "results" and env.state()["url"] == "/search_results/vegan+granola/1"


def test_a_click_not_on_the_page_is_refused_on_item_pages_too(env):
    _item_with_options(env, groups=1)
    before = env.observation()
    answer = env.step("click[next >]")
    assert answer.observation.startswith(
        'Invalid action: "next >" is not clickable on this page (clickables: back to search, < prev'
    )
    assert env.observation() == before


def test_html_mode_shows_the_same_page_as_html(webshop_small_shop):
    env = WebShopEnv(shop=webshop_small_shop, observation_mode="html")
    first = env.reset(7)
    assert first.startswith("<!DOCTYPE html>") and 'id="search_input"' in first
    assert '<div id="instruction-text"><h4>Instruction:<br>' in first
    page = env.step(f"search[{BROAD}]").observation
    assert (
        page.count('class="product-link"') == 10
        and '<button type="submit" class="btn">Next &gt;</button>' in page
    )
    env.step(f"click[{asins(page)[0]}]")
    env.step("click[Features]")
    state = env.state()
    assert state["url"].startswith("/item_sub_page/") and state["html"] == env.observation()
    assert state["instruction_text"] == env.instruction_text()


def test_the_step_budget_truncates_an_endless_episode(webshop_small_shop):
    env = WebShopEnv(shop=webshop_small_shop)
    env.reset(3)
    for _ in range(WebShopEnv.max_steps - 1):
        assert not env.step("search[lamp]").done
    last = env.step("search[lamp]")
    assert last.truncated and not last.terminated and last.reward == 0
