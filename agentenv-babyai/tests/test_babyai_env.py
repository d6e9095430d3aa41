"""The BabyAI text env in-process: task mapping, observations, actions, illegal input, the expert."""

import pytest
from agentenv_babyai import LEVELS, BabyAIEnv, level_of
from agentenv_babyai.agentgym import BabyAIAgentGymEnv
from agentenv_babyai.env import normalise_action


@pytest.fixture(scope="module")
def env():
    e = BabyAIEnv()
    yield e
    e.close()


def test_forty_levels_and_agentgym_mapping():
    assert len(LEVELS) == 40 and len(set(LEVELS)) == 40
    assert level_of(0) == ("BabyAI-GoToRedBallGrey-v0", 0)
    assert level_of(39) == ("BabyAI-BossLevelNoUnlock-v0", 0)
    assert level_of(41) == ("BabyAI-GoToRedBall-v0", 1)
    assert BabyAIEnv.split_of(0) == "test" and BabyAIEnv.split_of(400) == "train"


@pytest.mark.parametrize("cls", [BabyAIEnv, BabyAIAgentGymEnv])
def test_a_task_s_level_is_known_before_it_is_played_so_samples_stratify(cls):
    """task_type_of said None, so --sample drew BabyAI's tasks at random (27 of 40 levels in 40 tasks)."""
    from agentenv.controller.selection import select_tasks
    from agentenv.controller.sources import LocalEnv

    env = cls()
    for idx in (0, 41, 457, 1234):
        env.reset(idx)
        assert cls.task_type_of(idx) == env.task_type()
    env.close()
    with LocalEnv(cls) as source:
        chosen = select_tasks(cls.name, source, default_split="test", sample=40, seed=0).indices
    levels = {cls.task_type_of(i) for i in cls.splits["test"]}  # AgentGym's test list holds fewer levels
    assert {cls.task_type_of(i) for i in chosen} == levels and len(levels) >= 18


def test_same_index_same_task(env):
    first = env.reset(123)
    other = BabyAIEnv()
    other.reset(7)
    assert other.reset(123) == first == env.reset(123)
    assert env.reset(124) != first


def test_observation_lists_goal_objects_and_actions(env):
    text = env.reset(1)
    assert text.startswith("Your goal: go to the red ball\n")
    assert "red ball 1" in text and "You are not carrying anything." in text
    assert text.splitlines()[-1].startswith('Available actions: ["turn left", "turn right"')
    assert env.available_actions()[-1] == "check available actions"
    assert env.task_type() == "GoToRedBall"


@pytest.mark.parametrize(
    "action", ["", "dance", "go to purple key 9", "go through red ball 1", "drop", f"go to red ball {'9' * 5000}"]
)
def test_illegal_actions_say_so_and_change_nothing(env, action):
    start = env.reset(0)
    pose = (tuple(env.env.agent_pos), env.env.agent_dir)
    result = env.step(action)
    assert result.observation.startswith("Invalid action:")
    assert result.reward == 0 and not result.done and result.info["action_is_valid"] is False
    assert (tuple(env.env.agent_pos), env.env.agent_dir) == pose
    assert result.observation.splitlines()[1:] == start.splitlines()[1:]  # same view, actions listed again
    assert env.step("turn left").observation.startswith("You turned left.")


def test_agentgym_spellings_are_accepted():
    assert normalise_action("Pickup red ball 1.") == "pick up red ball 1"
    assert normalise_action("go to the red ball") == "go to red ball 1"
    # AgentGym numbers doors per colour and state: its "yellow open door 1" is the first open yellow door
    from agentenv_babyai.world import Thing

    doors = [Thing("door", "yellow", 1, (1, 1), 1, 0, "closed"), Thing("door", "yellow", 2, (3, 1), 3, 0, "open")]
    assert normalise_action("go through yellow open door 1", doors) == "go through yellow door 2"
    assert normalise_action("toggle and go through yellow closed door 1", doors) == "toggle and go through yellow door 1"
    assert normalise_action('"toggle and go through yellow closed door"', doors) == "toggle and go through yellow door 1"


def test_a_door_state_no_door_in_view_has_is_no_other_door(env):
    """`go to yellow locked door 1` with no locked yellow door in view went to the closed one (the state was
    dropped and the plain number kept)."""
    from agentenv_babyai.world import Thing

    doors = [Thing("door", "yellow", 1, (1, 1), 1, 0, "open"), Thing("door", "yellow", 2, (3, 3), 3, 2, "closed")]
    assert normalise_action("go to yellow locked door 1", doors) == "go to yellow locked door 1"
    assert normalise_action("go to yellow open door 2", doors) == "go to yellow open door 2"
    start = env.reset(5)  # in view: red closed doors 1 and 2, yellow closed door 1
    result = env.step("go to yellow open door 1")
    assert result.observation.startswith("Invalid action: you cannot see a yellow open door 1.")
    assert result.observation.splitlines()[1:] == start.splitlines()[1:] and not result.info["action_is_valid"]
    assert env.step("go to red closed door 2").info["action_is_valid"]
    # door 0 was the last such door, and with none in view an IndexError that ended the session
    env.reset(5)
    for action in ("go to red closed door 0", "go to yellow locked door 0"):
        result = env.step(action)
        assert not result.info["action_is_valid"] and "you cannot see a" in result.observation


def test_go_to_solves_go_to_red_ball(env):
    env.reset(1)
    result = env.step("go to red ball 1")
    assert result.done and 0.1 <= result.reward <= 1 and result.score == result.reward
    assert "The task is completed." in result.observation
    assert BabyAIEnv.is_success(result.score)
    assert env.step("turn left").done  # after the end: says so, stays done


def test_render_is_a_png(env):
    env.reset(38)
    png = env.render_png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


@pytest.mark.parametrize("idx", [0, 7, 11, 21, 22, 23, 25, 27, 29, 31, 32, 33, 57, 75])
def test_expert_solves_sample_levels_within_max_rounds(env, idx):
    env.reset(idx)
    for _ in range(BabyAIEnv.max_rounds):
        move = env.expert_action()
        assert move.thought and move.action in env.available_actions(), move
        result = env.step(move.action)
        if result.done:
            break
    assert result.done and result.reward > 0, (idx, env.mission)


def test_minigrids_rejected_samples_go_to_the_debug_log_not_stdout(env, capsys, caplog):
    import logging

    with caplog.at_level(logging.DEBUG, logger="agentenv_babyai.env"):
        env.reset(16444)  # a GoToLocal seed whose first level sample minigrid rejects
    assert "Sampling rejected" not in capsys.readouterr().out
    assert any("Sampling rejected" in r.getMessage() for r in caplog.records)


def test_fresh_tasks_leave_out_seeds_that_repeat_an_earlier_start_state():
    level = LEVELS.index("BabyAI-GoToObjS6-v1")
    from agentenv_babyai.starts import fresh_tasks

    tasks = fresh_tasks("GoToObjS6", 200, 260)
    seeds = [idx // 40 for idx in tasks]
    assert all(idx % 40 == level for idx in tasks) and seeds == sorted(seeds)
    assert 209 not in seeds and 246 not in seeds  # the start states of seeds 111 and 149
    assert len(seeds) == 58
    env = BabyAIEnv()
    assert env.reset(209 * 40 + level) == env.reset(111 * 40 + level)
    assert fresh_tasks("BabyAI-GoToObjS6-v1", 246, 248) == [247 * 40 + level]
    with pytest.raises(ValueError, match="no BabyAI level"):
        fresh_tasks("GoToNowhere", 0, 1)


def test_train_split_leaves_out_train_tasks_that_repeat_a_test_task():
    from agentenv_babyai.duplicates import TRAIN_TEST_DUPLICATES

    from agentenv.env import info_splits

    level = LEVELS.index("BabyAI-OpenRedDoor-v0")
    from agentenv_babyai.starts import level_duplicates

    found = level_duplicates(level)  # recomputed: 49 of its 500 train seeds
    assert len(found) == 49
    assert found == {k: v for k, v in TRAIN_TEST_DUPLICATES.items() if k % 40 == level}
    train = BabyAIEnv.splits["train"]
    info = BabyAIEnv.metadata()
    assert info["splits"]["train"] == [400, 20400] and info["split_excluded"]["train"] == sorted(TRAIN_TEST_DUPLICATES)
    for idx in found:
        assert idx not in train and BabyAIEnv.split_of(idx) is None and BabyAIEnv.serves(idx)
    assert len(train) == len(list(train)) == 20000 - len(TRAIN_TEST_DUPLICATES)
    assert list(info_splits(info)["train"]) == list(train) and not set(train) & set(TRAIN_TEST_DUPLICATES)
    assert BabyAIEnv.split_of(572) == "train"  # an OpenRedDoor seed of its own
    env = BabyAIEnv()
    test_start, train_start = env.reset(found[532]), env.reset(532)
    assert train_start == test_start  # the same task, still playable by index


@pytest.mark.parametrize("idx", [666, 557, 1034, 1197])
def test_expert_drops_elsewhere_when_the_bots_drop_cell_is_taken(env, idx):
    # the bot's drop cell held an object the expert had put down earlier: it turned left/right forever
    env.reset(idx)
    actions = []
    for _ in range(BabyAIEnv.expert_max_rounds):
        actions.append(env.expert_action().action)
        result = env.step(actions[-1])
        if result.done:
            break
    assert result.done and result.reward > 0, (idx, actions[-6:])


def test_a_blocked_step_beyond_a_door_leaves_the_agent_in_the_doorway_and_says_so(env):
    env.reset(557)
    first = env.step("toggle and go through blue door 1").observation.splitlines()[0]
    assert env.env.grid.get(*env.env.agent_pos).type == "door"
    assert first == "You opened the blue door 1 and stand in its doorway: the red ball 1 blocks the way beyond it."
    for action in ("turn left", "turn left", "move forward", "turn left", "turn left"):  # step back out
        env.step(action)
    blocked = env.step("go through blue door 1").observation.splitlines()[0]
    assert blocked == "You stand in the doorway of the blue door 1: the red ball 1 blocks the way beyond it."


def test_a_door_opening_that_ends_the_episode_says_opened_not_went_through(env):
    env.reset(12)  # open the red door
    result = env.step("toggle and go through red door 1")
    assert result.done and result.observation.startswith("You opened the red door 1. The task is completed.")


@pytest.mark.parametrize(
    ("idx", "action", "first_line"),
    [
        (1, "pick up red ball 1", "You went towards the red ball 1. The task is completed."),  # done on facing it
        (1440, "go to grey key 1", "You went towards the grey key 1. The task is completed."),  # passed the goal
        (89, "toggle and go through blue door 1", "You went towards the blue door 1. The task is completed."),
    ],
)
def test_an_action_the_episode_ended_part_way_through_says_how_far_it_got(env, idx, action, first_line):
    result = env.step(action) if env.reset(idx) else None
    assert result.done and result.observation.splitlines()[0] == first_line
    assert env.env.carrying is None


def test_an_action_cut_short_by_the_step_limit_says_so(env):
    env.reset(0)
    far = max((a for a in env.actions if a.startswith("go to")), key=lambda a: len(env.actions[a]))
    steps = len(env.actions[far])
    assert steps >= 2
    while env.env.max_steps - env.env.step_count >= steps:  # turning left and back keeps the plan
        env.step("turn left")
        env.step("turn right")
    result = env.step(far)
    assert result.done and result.observation.startswith(
        f"You went towards the {far.removeprefix('go to ')}. You ran out of steps: the task failed."
    )


def test_a_locked_door_out_of_reach_with_its_key_in_hand_says_there_is_no_path(env):
    env.reset(146)  # UnlockPickupDist: the expert fetches the green key, then the door is in view but unreachable
    while not (env.env.carrying is not None and env.env.carrying.type == "key"):
        env.step(env.expert_action().action)
    door = next(t for t in env.view.things if t.type == "door" and t.color == env.env.carrying.color)
    assert f"toggle and go through {door.name}" not in env.actions
    first = env.step(f"toggle and go through {door.name}").observation.splitlines()[0]
    assert first == f"Invalid action: there is no path you know to the {door.name}. Explore first."


def test_expert_facing_its_cell_without_a_way_to_act_moves_on_instead_of_turning(env):
    from agentenv_babyai.expert import Expert, KeyAction

    env.reset(0)
    env.step("go to grey ball 1")  # now facing it
    front = tuple(int(v) for v in env.env.front_pos)
    expert = Expert(env)
    # a key action that cannot be done from here (a ball does not toggle): distance 0, nothing listed for it
    expert.keys[:0] = [KeyAction("toggle", front, b"", (), "grey ball", why="I toggle the grey ball")]
    env._expert = expert
    move = env.expert_action()
    assert not move.action.startswith("turn") and expert.next_key >= 1


def test_an_index_it_does_not_play_is_refused_with_the_bound_it_has():
    """The refusal named the splits alone (train ends at 20399), while every index up to 999999 plays."""
    from agentenv.protocol import BadRequest
    from agentenv.session import LocalSession

    with LocalSession(BabyAIEnv, 0) as session:
        session.reset(999_999)
        with pytest.raises(BadRequest, match=r"task index 1000000 is not one babyai plays: it plays its splits "
                                             r"\(test 0..399, train 400..20399\) and every index up to 999999$"):
            session.reset(1_000_000)


@pytest.mark.parametrize("cls", [BabyAIEnv, BabyAIAgentGymEnv])
def test_an_episode_of_invalid_actions_ends_truncated(cls):
    """Invalid actions and blocked moves take no minigrid step, so an OpenEnv or RL client with no round limit
    of its own played on forever (244,458 steps in 2 minutes)."""
    e = cls()
    try:
        e.reset(0)
        results = [e.step("fly away") for _ in range(cls.max_steps)]
        assert not any(r.done for r in results[:-1])
        assert results[-1].truncated and not results[-1].terminated
        assert results[-1].observation.endswith(f"The episode ends: {cls.max_steps} actions used.")
    finally:
        e.close()
