"""The BabyAI text env in-process: task mapping, observations, actions, illegal input, the expert."""

import pytest
from agentenv_babyai import LEVELS, BabyAIEnv, level_of
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


@pytest.mark.parametrize("action", ["", "dance", "go to purple key 9", "go through red ball 1", "drop"])
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
    assert normalise_action('"toggle and go through red closed door 2"') == "toggle and go through red door 2"
    assert normalise_action("go to the red ball") == "go to red ball 1"


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
