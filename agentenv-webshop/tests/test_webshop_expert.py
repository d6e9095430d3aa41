"""The expert: it solves the test split, explains each move, and finds its way back from any page."""

import pytest
from agentenv_webshop import WebShopEnv


def play(env: WebShopEnv, idx: int) -> tuple[float, list[tuple[str, str]]]:
    env.reset(idx)
    moves = []
    for _ in range(WebShopEnv.max_rounds):
        move = env.expert_action()
        moves.append((move.thought, move.action))
        result = env.step(move.action)
        if result.done:
            return result.reward, moves
    return 0.0, moves


@pytest.fixture(scope="module")
def default_env():
    with WebShopEnv.shared():
        yield WebShopEnv()


def test_the_expert_solves_every_test_task_of_the_default_shop(default_env):
    """The acceptance figure, in process: all 500 test goals bought at reward 1.0 within 10 rounds."""
    rewards = [play(default_env, idx)[0] for idx in WebShopEnv.splits["test"]]
    assert len(rewards) == 500 and min(rewards) == 1.0


def test_each_move_comes_with_a_reason(webshop_small_shop):
    env = WebShopEnv(shop=webshop_small_shop)
    reward, moves = play(env, 11)
    assert reward == 1.0
    (first_thought, first_action), *_, (last_thought, last_action) = moves
    assert first_action.startswith("search[") and first_thought.startswith("I am asked to buy ")
    assert last_action == "click[Buy Now]" and last_thought.startswith("Everything matches: ")
    goal = webshop_small_shop.goal(11)
    for group, value in goal.options.items():
        assert (f"The request asks for {group}: {value}; I'll select {value}.", f"click[{value}]") in moves
    assert all(thought.endswith(".") and len(thought) > 20 for thought, _ in moves)


@pytest.mark.parametrize(
    "detour",
    [
        ["search[lamp]"],  # a poor search
        ["search[designed with care]", "click[next >]"],  # a far result page
        ["search[designed with care]", "click[{first}]", "click[reviews]"],  # a wrong product's sub-page
        ["search[designed with care]", "click[{first}]", "click[back to search]"],
    ],
)
def test_the_expert_recovers_from_a_detour(webshop_small_shop, detour):
    env = WebShopEnv(shop=webshop_small_shop)
    for idx in (2, 40, 301):
        env.reset(idx)
        for action in detour:
            if "{first}" in action:
                action = action.format(first=env.site.page_results[0].asin)
            assert not env.step(action).observation.startswith("Invalid action")
        for _ in range(WebShopEnv.max_rounds):
            result = env.step(env.expert_action().action)
            if result.done:
                break
        assert result.done and result.reward == 1.0


def test_a_listing_that_fits_as_well_as_the_target_is_bought(webshop_small_shop):
    """The expert takes the first listing on the page that scores 1.0, as a shopper would."""
    from agentenv_webshop.expert import fits

    env = WebShopEnv(shop=webshop_small_shop)
    bought_other = 0
    for idx in range(60):
        reward, _ = play(env, idx)
        assert reward == 1.0
        product = env.site.product
        assert product.asin == env.site.goal.asin or fits(product, env.site.goal)
        bought_other += product.asin != env.site.goal.asin
    assert bought_other > 0
