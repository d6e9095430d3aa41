"""WebArena's action grammar and finding the action in a reply (no browser)."""

import pytest
from agentenv_webarena.actions import Action, InvalidAction, find_action, parse_action


def test_the_block_after_the_summary_phrase_is_the_action():
    reply = (
        "Let's think step-by-step. The page lists ```something``` in code. In summary, the next action I will "
        "perform is ```click [1234]```"
    )
    assert find_action(reply) == "click [1234]"
    assert parse_action(reply) == Action("click", element_id=1234)


def test_without_the_phrase_the_first_block_and_else_the_whole_text():
    assert find_action("I will go back.\n```\ngo_back\n```\nand then ```stop [x]```") == "go_back"
    assert find_action("  scroll [down]  ") == "scroll [down]"
    assert find_action("`hover [3]`") == "hover [3]"


@pytest.mark.parametrize(
    "text, action",
    [
        ("click [12]", Action("click", element_id=12)),
        ("CLICK[12]", Action("click", element_id=12)),
        ("hover [7]", Action("hover", element_id=7)),
        ("type [3] [chef knife] [1]", Action("type", element_id=3, text="chef knife", enter=True)),
        ("type [3] [chef knife] [0]", Action("type", element_id=3, text="chef knife", enter=False)),
        ("type [3] [chef knife]", Action("type", element_id=3, text="chef knife", enter=True)),
        ("type [3] [a [b] c] [0]", Action("type", element_id=3, text="a [b] c", enter=False)),
        ("press [Control+a]", Action("press", key="Control+a")),
        ("scroll [down]", Action("scroll", direction="down")),
        ("scroll up", Action("scroll", direction="up")),
        ("new_tab", Action("new_tab")),
        ("tab_focus [2]", Action("tab_focus", tab=2)),
        ("close_tab", Action("close_tab")),
        ("goto [http://127.0.0.1:7770/wishlist]", Action("goto", url="http://127.0.0.1:7770/wishlist")),
        ("go_back", Action("go_back")),
        ("go_forward", Action("go_forward")),
        ("stop [$23.47]", Action("stop", answer="$23.47")),
        ("stop []", Action("stop", answer="")),
        ("stop", Action("stop", answer="")),
    ],
)
def test_each_action_of_the_grammar(text, action):
    assert parse_action(text) == action
    assert parse_action(str(action)) == action  # written back, it reads the same


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "no action found"),
        ("```  ```", "no action found"),
        ("click [abc]", "malformed click action; write it as click [id]"),
        ("type [3]", "malformed type action"),
        ("tab_focus [x]", "malformed tab_focus"),
        ("scroll [left]", "malformed scroll"),
        ("select [3] [x]", "is not an action"),
        ("stopper", "is not an action"),
        ("%%% ;DROP TABLE x; }{", "is not an action"),
        ("click [" + "1" * 5000 + "]", "malformed click action"),  # int() refuses over 4,300 digits
        ("tab_focus [" + "1" * 5000 + "]", "malformed tab_focus"),
    ],
)
def test_what_is_no_action_says_why(text, why):
    parsed = parse_action(text)
    assert isinstance(parsed, InvalidAction)
    assert why in parsed.reason


def test_a_huge_reply_is_parsed_quickly_and_refused():
    parsed = parse_action("move " * 20_000)
    assert isinstance(parsed, InvalidAction)
    assert len(parsed.reason) < 400


@pytest.mark.parametrize(
    "text, action",
    [
        ("click [12] to open it", Action("click", element_id=12)),
        ("stop [42].", Action("stop", answer="42")),
        ("```\nclick [3]\nclick [4]\n```", Action("click", element_id=3)),
        ("type [3] [hello] [0] and wait", Action("type", element_id=3, text="hello", enter=False)),
        ("stop [a]\nstop [b]", Action("stop", answer="a")),
        ("```type [3] [hello]\nclick [4]```", Action("type", element_id=3, text="hello", enter=True)),
        ("stop [Paris\nLondon]", Action("stop", answer="Paris\nLondon")),  # an answer over two lines
    ],
)
def test_text_after_an_action_is_ignored_as_webarena_ignores_it(text, action):
    assert parse_action(text) == action
