"""The expert's pieces without a JVM: gold-path cursor, ambiguity answers, thoughts."""

from agentenv_sciworld.expert import (
    GoldPath,
    choose_option,
    explain,
    goal_of,
    is_ambiguous,
    option_number,
    option_text,
    options,
)

AMBIGUOUS = (
    "Ambiguous request: Please enter the number for the action you intended (or blank to cancel):\n"
    "0:\topen door between kitchen and hallway\n1:\topen door between bathroom and kitchen\n"
)
BOIL = (
    "Your task is to boil water. For compounds without a boiling point, combusting the substance is also "
    "acceptable. First, focus on the substance."
)


def test_goal_and_ambiguity_parsing():
    assert goal_of(BOIL) == "boil water"
    assert (
        goal_of("Your task is to find a(n) living thing. First, focus on the thing.")
        == "find a(n) living thing"
    )
    assert is_ambiguous(AMBIGUOUS) and not is_ambiguous("The door is now open.")
    assert choose_option(AMBIGUOUS, "open door between bathroom and kitchen") == "1"
    assert choose_option(AMBIGUOUS, "open door") == "0"
    assert choose_option(AMBIGUOUS, None) == "0"
    assert options(AMBIGUOUS) == [
        ("0", "open door between kitchen and hallway"),
        ("1", "open door between bathroom and kitchen"),
    ]
    assert option_text(AMBIGUOUS, "1") == "open door between bathroom and kitchen"
    assert option_text(AMBIGUOUS, "2") is None
    assert option_number(AMBIGUOUS, "Open door between  kitchen and hallway") == "0"
    assert option_number(AMBIGUOUS, "open door") is None


def test_gold_path_cursor_follows_gold_actions_and_waits_out_detours():
    gold = GoldPath(["open door to kitchen", "go to kitchen", "open door", "look around"])
    assert gold.next_action("You are in the hallway.") == ("open door to kitchen", "open door to kitchen")
    gold.record("look at picture", "a picture")  # a detour: the cursor stays
    assert gold.next_action("a picture")[0] == "open door to kitchen"
    gold.record("Open  door to KITCHEN", "The door is now open.")
    gold.record("go to kitchen", "You move to the kitchen.")
    assert gold.next_action("You move to the kitchen.")[0] == "open door"
    gold.record("open door", AMBIGUOUS)
    assert gold.next_action(AMBIGUOUS) == ("0", "open door")
    gold.record("0", "The door is now open.")
    assert gold.pending is None and gold.next_action("The door is now open.")[0] == "look around"
    gold.record("look around", "This room is called the kitchen.")
    assert gold.finished and gold.next_action("...")[0] == "look around"


def test_thoughts_give_a_reason_per_action():
    actions = [
        "open door to kitchen",
        "go to kitchen",
        "pick up thermometer",
        "focus on substance in metal pot",
        "move metal pot to stove",
        "activate stove",
        "use thermometer in inventory on substance in metal pot",
        "connect battery anode to orange wire terminal 1",
        "pour cup containing red paint in bowl",
        "mix bowl",
        "wait1",
        "look at substance in metal pot",
        "look around",
        "read book",
        "drop thermometer",
        "0",
    ]
    thoughts = [explain(a, BOIL) for a in actions]
    assert len(set(thoughts)) == len(thoughts)  # no fixed filler
    assert "boil water" in explain("focus on substance in metal pot", BOIL)
    assert "thermometer" in explain("pick up thermometer", BOIL)
    assert "temperature" in explain("use thermometer in inventory on substance in metal pot", BOIL)
    assert explain("open door to kitchen", BOIL, first=True).startswith("My task is to boil water.")
    assert "option 0" in explain("0", BOIL, served="open door")
