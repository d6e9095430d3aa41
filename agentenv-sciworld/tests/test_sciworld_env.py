"""SciWorldEnv in-process on a real JVM: bad actions, ambiguity, expert recovery, failure, closing."""

import pytest
from agentenv_sciworld import SciWorldEnv
from agentenv_sciworld.env import UNKNOWN_ACTION
from agentenv_sciworld.expert import option_number, option_text, options
from agentenv_sciworld.processes import java_children
from agentenv_sciworld.tasks import data_idx_of

FIND_LIVING = data_idx_of("find-living-thing", 225)  # a test variation; its gold path is ~16 actions


def test_reset_gives_task_and_room_and_the_same_task_again(env):
    first = env.reset(FIND_LIVING)
    assert first.startswith("Your task is to find a(n) living thing.")
    assert "This room is called the art studio" in first
    assert env.observation() == first and env.task_type() == "find-living-thing"
    assert env.wire_extras("reset") == {
        "task_name": "find-living-thing",
        "var_num": 225,
        "task_description": env.task_description,
        "deleted": False,
        "score": 0.0,  # what the start state already earns (AgentGym's reset answered it)
    }
    # same task and objects; the simulator may list a room's objects in another order
    assert sorted(env.reset(FIND_LIVING).splitlines()) == sorted(first.splitlines())


@pytest.mark.parametrize("action", ["", "   ", "xyzzy plugh", "go to", "open", "🙂 open door", "x" * 5000])
def test_garbled_actions_get_a_clear_answer_and_no_reward(env, action):
    env.reset(FIND_LIVING)
    result = env.step(action)
    assert result.observation.startswith(UNKNOWN_ACTION)
    assert (result.reward, result.score, result.done) == (0.0, 0.0, False)
    assert env.step("open door to hallway").observation == "The door is now open."  # still working


def test_a_full_stop_after_an_action_is_no_part_of_it(env):
    """'open door to hallway.' (how a model ends a sentence) was refused whole by the simulator's parser."""
    env.reset(FIND_LIVING)
    assert env.step("open door to hallway.").observation == "The door is now open."


def test_expert_recovers_from_detour_and_ambiguity(env):
    env.reset(FIND_LIVING)
    for action in ("open door to hallway", "go to hallway", "open door to kitchen", "go to kitchen"):
        env.step(action)
    ambiguous = env.step("look at door").observation  # three doors lead out of the kitchen
    assert ambiguous.startswith("Ambiguous request") and "0:" in ambiguous
    move = env.expert_action()
    assert move.action == "0" and "option 0" in move.thought
    assert not env.step(move.action).observation.startswith("Ambiguous")
    thoughts = set()
    while not env.done:
        move = env.expert_action()
        thoughts.add(move.thought)
        env.step(move.action)
    assert env.score == 100.0 and env.is_success(env.score) and not env.failed
    assert len(thoughts) > 5
    assert len(env.history) < env.max_rounds


TO_KITCHEN = ("open door to hallway", "go to hallway", "open door to kitchen", "go to kitchen")


def _world(env):
    """What the agent could see of the world now (free actions: no simulated time passes)."""
    return sorted(env.engine.look().splitlines()), env.engine.inventory(), env.score, env.done


# The simulator numbers an "Ambiguous request" prompt's options in a different order on each load (about
# one order in three repeats), and the first expert call reloads the task and replays the episode: each
# test repeats its scenario so that replaying answers by number would be caught.
REPEATS = 5


def test_expert_replay_keeps_the_option_an_earlier_answer_chose(env):
    for _ in range(REPEATS):
        env.reset(FIND_LIVING)
        for action in TO_KITCHEN:
            env.step(action)
        prompt = env.step("open door").observation  # three doors lead out of the kitchen
        chosen = option_text(prompt, "0")
        assert chosen and chosen.startswith("open door between")
        observation = env.step("0").observation
        before = _world(env)
        env.expert_action()  # reloads the task with its gold path and replays the five actions
        assert _world(env) == before, f"the replay opened another door than {chosen!r}"
        assert env.observation() == observation and len(env.history) == 6


def test_pending_ambiguity_keeps_the_numbering_the_agent_saw_after_an_expert_reload(env):
    for _ in range(REPEATS):
        env.reset(FIND_LIVING)
        for action in TO_KITCHEN:
            env.step(action)
        prompt = env.step("open door").observation
        env.expert_action()  # the reload replays "open door": the simulator's prompt is a new one
        assert env.observation() == prompt
        bathroom = next(text for _, text in options(prompt) if "bathroom" in text)
        env.step(option_number(prompt, bathroom))  # the agent answers by the prompt it was shown
        look = env.engine.look()
        assert "A door to the bathroom (that is open)" in look
        assert "A door to the outside (that is closed)" in look


def test_failing_the_task_ends_with_score_zero(env):
    env.reset(FIND_LIVING)
    result = env.step("focus on air")  # air is not a living thing
    assert result.done and result.score == 0.0 and result.info["failed"]
    assert env.step("look around").observation.startswith("The episode is over")


def test_queries_and_available_actions(env):
    env.reset(FIND_LIVING)
    hint = env.action_hint()
    assert "focus on OBJ" in hint["possible_actions"] and "art studio" in hint["possible_objects"]
    assert "Sequential Subgoals" in env.goals()["goals"]
    valid = env.available_actions()
    assert "open door" in valid and "look around" in valid


def test_close_ends_the_jvm():
    before = set(java_children())
    env = SciWorldEnv()
    assert env.pid in set(java_children()) - before
    env.reset(FIND_LIVING)
    env.close()
    assert env.engine.process.poll() is not None
    assert set(java_children()) == before
    env.close()  # idempotent


def test_a_jvm_whose_gateway_fails_to_connect_is_ended(monkeypatch):
    from agentenv_sciworld import engine

    def refuses(*args, **kwargs):
        raise ConnectionRefusedError("the gateway did not answer")

    before = set(java_children())
    monkeypatch.setattr(engine, "JavaGateway", refuses)
    with pytest.raises(ConnectionRefusedError):
        engine.Engine()
    assert set(java_children()) == before  # the JVM launched for it is gone


def test_an_answer_among_options_that_read_alike_goes_to_the_simulator_as_numbered(env):
    """Three options read 'pick up wood cup (in art studio)': the agent's '2' was sent as '0' (the first that
    reads so), so it could never pick the cup it numbered; with no replay between, the number is the agent's."""
    env.reset(FIND_LIVING)
    prompt = env.step("pick up wood cup").observation
    texts = [text for _, text in options(prompt)]
    assert len(texts) == 3 and len(set(texts)) == 1, prompt
    sent, step = [], env.engine.step
    env.engine.step = lambda action: (sent.append(action), step(action))[1]
    assert env.step("2").observation == "You move the wood cup to the inventory."
    assert sent == ["2"]


def test_a_task_that_starts_with_points_scores_them_from_its_reset(env):
    """measure-melting-point-known-substance (variation 2) starts at 4 points: /detail said 0, and an action
    answered without the simulator (over MAX_ACTION_CHARS) scored 0 until the next one said 4 again."""
    env.reset(51)
    assert env.wire_extras("reset")["score"] == env.detail()["score"] == 4.0
    result = env.step("x" * 600)
    assert (result.reward, result.score) == (0.0, 4.0)
    assert env.step("look around").reward == 0.0
