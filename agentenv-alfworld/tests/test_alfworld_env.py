"""ALFWorld in process: observations as AgentGym serves them, both command dialects, the expert, the engine's
library pool, and ALFWorld's own loader and expert on the generated games."""

import json
import random
from concurrent.futures import ThreadPoolExecutor

from agentenv_alfworld import AlfWorldEnv, GeneratedGames, tasks
from agentenv_alfworld.commands import in_dialect
from agentenv_alfworld.engine import LIBRARIES
from agentenv_alfworld.env import agentgym_observation, first_observation

PLACE = 2426  # a test_seen pick_and_place_simple task


def _index_of(task_type: str, split: str = "test_seen") -> int:
    return next(i for i in tasks.SPLITS[split] if tasks.task_type_of(i) == task_type)


def test_observations_are_agentgyms(env):
    first = env.reset(PLACE)
    assert not first.startswith("-= Welcome")  # the banner is dropped
    room, task = first.split("\n")
    assert room.startswith("You are in the middle of a room. Looking quickly around you, you see a ")
    assert task == f"Your task is to: {tasks.task(PLACE).description}."
    assert env.task_type() == "pick_and_place_simple"
    assert agentgym_observation("You arrive at loc 12. On the desk 1, you see a pen 2.") == "On the desk 1, you see a pen 2."
    assert first_observation("-= Welcome to TextWorld, ALFRED! =-\n\nA room.\n\nYour task is to: x.") == "A room.\nYour task is to: x."


def test_an_impossible_command_changes_nothing(env):
    env.reset(PLACE)
    before = env.available_actions()
    for command in ("take unicorn 1 from moon 1", "dance", "", "go to"):
        result = env.step(command)
        assert result.observation == "Nothing happens." and result.reward == 0 and not result.done
    assert env.available_actions() == before and env.steps == 4


def _play_plan_with_last_command(env: AlfWorldEnv, rewrite) -> float:
    plan = env.engine.plan()
    for command in plan[:-1]:
        env.step(command)
    result = env.step(rewrite(plan[-1]))
    assert result.terminated
    return result.reward


def test_both_dialects_put_things_down_in_a_generated_game(env):
    """Generated games speak alfworld 0.3.3, AgentGym's pin (``put X in/on Y``, no ``help``); 0.4's
    ``move X to Y`` works too; the arrival line "You arrive at loc N." is stripped."""
    env.reset(PLACE)
    assert env.engine.dialect == "put"
    assert "help" not in env.available_actions() and not any(a.startswith("move ") for a in env.available_actions())
    plan = env.engine.plan()
    assert plan[-1].startswith("put ") and " in/on " in plan[-1]
    arrival = env.step(plan[0])
    assert arrival.observation.startswith(("On the", "The ")), arrival.observation  # not "You arrive at loc N."
    env.reset(PLACE)
    assert _play_plan_with_last_command(env, lambda c: in_dialect(c, "move").upper()) == 1.0
    env.reset(PLACE)
    assert _play_plan_with_last_command(env, lambda c: c.replace(" in/on ", " on ")) == 1.0


def test_both_dialects_put_things_down_in_a_04_game(tmp_path, as_alfworld_04):
    """A game written with alfworld 0.4's grammar lists ``move X to Y`` and takes ``put X in/on Y`` as well."""
    games = GeneratedGames(tmp_path)
    game_file = games.game_file(PLACE)
    game_file.write_text(json.dumps(as_alfworld_04(json.loads(game_file.read_text()), tasks.task(PLACE).description)))
    env = AlfWorldEnv(games)
    try:
        env.reset(PLACE)
        assert env.engine.dialect == "move" and "help" in env.available_actions()
        plan = env.engine.plan()
        assert plan[-1].startswith("move ") and " to " in plan[-1]
        env.reset(PLACE)
        assert _play_plan_with_last_command(env, lambda c: in_dialect(c, "put")) == 1.0
        env.reset(PLACE)
        while not env.done:  # the expert plays in the game's dialect
            move = env.expert_action()
            assert not move.action.startswith("put ")
            env.step(move.action)
        assert env.score == 1.0
    finally:
        env.close()


def test_the_expert_is_reproducible_and_explains_itself(env):
    index = _index_of("pick_cool_then_place_in_recep")
    runs = []
    for _ in range(2):
        env.reset(index)
        moves = []
        while not env.done:
            move = env.expert_action()
            assert move.thought and move.thought != move.action
            moves.append(move.action)
            env.step(move.action)
        assert env.score == 1.0
        runs.append(moves)
    assert runs[0] == runs[1]
    assert any(m.startswith("cool ") for m in runs[0])


def test_the_planner_finishes_what_the_handcoded_expert_has_not(env):
    """After 30 actions (here wasted by an agent) the planner finishes within the 50-action budget; and
    when the handcoded expert gives up, the planner's next command is the expert's."""
    from agentenv_alfworld.expert import PLANNER_AFTER

    env.reset(_index_of("pick_cool_then_place_in_recep", "test_unseen"))
    for _ in range(PLANNER_AFTER):
        env.step("inventory")
    while not env.done:
        move = env.expert_action()
        assert move.action in env.available_actions()
        env.step(move.action)
    assert env.score == 1.0 and env.steps <= AlfWorldEnv.max_steps
    env.reset(PLACE)
    env.expert.gave_up, env.expert.proposal = True, None
    assert env.expert_action().action == env.engine.plan()[0]


def test_games_step_from_several_threads_at_once(env):
    """TextWorld's parsers are module-level state: sessions stepping in parallel threads (as a server runs
    them) must each get their own game's answers."""
    envs = [env, AlfWorldEnv(), AlfWorldEnv()]
    try:
        for e in envs:
            e.reset(PLACE)
        commands = env.available_actions()
        plans = [commands[:4], commands[-4:], commands[len(commands) // 2 :][:4]]
        expected = []
        for e, plan in zip(envs, plans, strict=True):
            expected.append([e.step(c).observation for c in plan])
            e.reset(PLACE)

        def play(pair) -> list[str]:
            e, plan = pair
            return [e.step(c).observation for c in plan]

        with ThreadPoolExecutor(len(envs)) as pool:
            played = list(pool.map(play, zip(envs, plans, strict=True)))
        assert played == expected and len({tuple(p) for p in expected}) == len(expected)
    finally:
        for e in envs[1:]:
            e.close()


def test_a_closed_engine_goes_back_to_the_pool():
    env = AlfWorldEnv()
    env.reset(PLACE)
    free = len(LIBRARIES)
    env.close()
    env.close()  # twice is a no-op
    assert len(LIBRARIES) == free + 1
    again = AlfWorldEnv()  # reuses the returned copy of Fast Downward's library
    try:
        assert len(LIBRARIES) == free
        assert again.reset(PLACE).startswith("You are in the middle of a room.")
    finally:
        again.close()


def test_textworlds_interned_objects_are_let_go_and_a_live_game_plays_on(env, monkeypatch):
    """TextWorld's intern cache (~1 MiB a new game, never emptied by TextWorld) is emptied at a load past its
    limit; a game in play across that plays exactly as it does without it."""
    from agentenv_alfworld import engine
    from mementos import core

    def expert_episode(between_steps) -> list[str]:
        seen = [env.reset(PLACE)]
        while not env.done:
            between_steps()
            seen.append(env.step(env.expert_action().action).observation)
        assert env.score == 1.0
        return seen

    expected = expert_episode(lambda: None)
    other = AlfWorldEnv()
    held = list(core._memento_cache.values())
    monkeypatch.setattr(engine, "INTERNED_KEPT", 0)
    try:
        # another game loaded at every step of this one: each load empties the cache first
        assert expert_episode(lambda: other.reset(_index_of("pick_heat_then_place_in_recep"))) == expected
    finally:
        other.close()
    assert held and not {id(o) for o in held} & {id(o) for o in core._memento_cache.values()}


def test_alfworlds_own_loader_finds_the_games_and_its_expert_solves_them(tmp_path):
    """The stock ``AlfredTWEnv`` collects the generated games (one of each type), and its ``is_solvable``
    (ALFWorld's handcoded expert in ALFWorld's own wrappers, unadapted) solves a heating and a lamp task."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import (
        AlfredDemangler,
        AlfredExpert,
        AlfredExpertType,
        AlfredInfos,
        AlfredTWEnv,
    )

    games = GeneratedGames(tmp_path)
    indices = [_index_of(t) for t in tasks.TASK_TYPES]
    games.generate(indices)
    config = {
        "env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 2, 3, 4, 5, 6]},
        "dataset": {"eval_id_data_path": str(games.data / "valid_seen"), "num_eval_games": -1},
    }
    found = AlfredTWEnv(config, train_eval="eval_in_distribution").game_files
    assert sorted(found) == sorted(str(games.game_file(i)) for i in indices)
    infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True, extras=["gamefile", "expert_plan"])
    loader = AlfredTWEnv.__new__(AlfredTWEnv)  # is_solvable needs no configuration
    for index in (indices[1], indices[3]):
        # the handcoded expert picks among like objects with the global random and gives up past 150 steps:
        # unseeded, it ran out of steps on the heating game in about one run of several
        random.seed(index)
        env = textworld.start(
            str(games.game_file(index)),
            infos,
            wrappers=[AlfredDemangler(), AlfredInfos, AlfredExpert(expert_type=AlfredExpertType.HANDCODED)],
        )
        trajectory = loader.is_solvable(env, str(games.game_file(index)), random_perturb=False)
        assert trajectory, tasks.task_type_of(index)


def test_remembered_translations_and_parses_are_the_engines_own(env):
    """The engine's two memoised functions give what the originals give (and a parse is a fresh copy)."""
    import fast_downward
    from agentenv_alfworld import pddl
    from textworld.envs.pddl import textgen

    env.reset(PLACE)  # installs the memos
    problem = pddl.problem(tasks.task(PLACE))
    for optimize in (False, True):
        _, remembered = fast_downward.pddl2sas(pddl.domain(), problem, optimize=optimize)
        _, fresh = fast_downward.pddl2sas.uncached(pddl.domain(), problem, optimize=optimize)
        assert remembered == fresh
    template = "go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]"
    first, second = textgen._parse_and_convert(template), textgen._parse_and_convert(template)
    assert repr(first) == repr(second) == repr(textgen._parse_and_convert.uncached(template, rule_name="symbols"))
    assert first[0] is not second[0]


def test_the_experts_thoughts_write_plurals_as_english_does():
    from agentenv_alfworld.expert import plural

    assert [plural(w) for w in ("tissuebox", "potato", "butterknife", "watch", "pen", "boots")] == [
        "tissueboxes", "potatoes", "butterknives", "watches", "pens", "boots"]
