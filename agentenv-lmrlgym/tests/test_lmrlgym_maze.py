"""Maze in-process: the fixed double-T maze, procedural mazes, illegal actions, the step cap, the expert."""

import pytest
from agentenv_lmrlgym import MazeEnv
from agentenv_lmrlgym.maze import parse_move
from agentenv_lmrlgym.mazes import (
    DOUBLE_T_GOAL,
    DOUBLE_T_LAYOUT,
    DOUBLE_T_STARTS,
    MOVES,
    PROCEDURAL_DISTANCES,
    distances_to,
    procedural_maze,
    shortest_path,
)


def play_expert(env: MazeEnv, data_idx: int) -> tuple[float, int, list[str]]:
    env.reset(data_idx)
    thoughts = []
    for rounds in range(1, MazeEnv.max_rounds + 1):
        move = env.expert_action()
        assert move.action in env.available_actions() or env.position == env.maze.goal
        thoughts.append(move.thought)
        result = env.step(move.action)
        if result.done:
            return result.reward, rounds, thoughts
    return 0.0, MazeEnv.max_rounds, thoughts


def test_double_t_layout_and_starts():
    open_squares = {(r, c) for r, row in enumerate(DOUBLE_T_LAYOUT) for c, ch in enumerate(row) if ch == "."}
    assert len(DOUBLE_T_LAYOUT) == 10 and {len(row) for row in DOUBLE_T_LAYOUT} == {13}
    # AgentGym's 26 starts are exactly the open squares, the goal last
    assert len(DOUBLE_T_STARTS) == 26 and set(DOUBLE_T_STARTS) == open_squares
    assert DOUBLE_T_STARTS[-1] == DOUBLE_T_GOAL == (8, 6)
    dist = distances_to(DOUBLE_T_LAYOUT, DOUBLE_T_GOAL)
    assert max(dist.values()) == 12 < MazeEnv.max_rounds  # the expert fits in AgentGym's 15 rounds
    assert MazeEnv.splits["test"] == range(0, 26)


def test_reset_is_deterministic_and_lmrl_worded():
    env = MazeEnv()
    first = env.reset(13)
    assert first == (
        "The goal is at position 8, 6. Your current position is at position 5, 3. "
        "There are walls to your left, below you."
    )
    assert env.task_type() == "double_t"
    assert env.reset(1234) == MazeEnv().reset(1234)
    assert env.task_type() == "procedural"
    assert env.reset(13) == first


def test_procedural_mazes_are_seeded_and_solvable():
    for seed in range(1000, 3000, 10):
        maze = procedural_maze(seed)
        assert maze == procedural_maze(seed)
        path = shortest_path(maze, maze.start)
        assert len(path) in PROCEDURAL_DISTANCES
        assert all(row[0] == row[-1] == "#" for row in maze.layout)
        assert set(maze.layout[0]) == set(maze.layout[-1]) == {"#"}
    assert procedural_maze(1000).layout != procedural_maze(1001).layout


def test_held_out_procedural_split_shares_no_task_with_train():
    def task(seed):
        maze = procedural_maze(seed)
        return maze.layout, maze.goal, maze.start

    train = {task(seed) for seed in MazeEnv.splits["train"]}
    held_out = [task(seed) for seed in MazeEnv.splits["test_procedural"]]
    assert len(held_out) == 200 and not train.intersection(held_out)
    assert MazeEnv.split_of(3000) == "test_procedural" and MazeEnv.split_of(2999) == "train"


def test_moves_walls_and_garbled_actions():
    env = MazeEnv()
    env.reset(13)  # (5, 3): walls left and below
    assert env.available_actions() == ["move up", "move right"]
    bump = env.step("move left")
    assert (bump.reward, bump.done) == (0.0, False)
    assert bump.observation.startswith("You cannot move left: there is a wall to your left.")
    assert "Your current position is at position 5, 3." in bump.observation
    garbled = env.step("dance wildly")
    assert (garbled.reward, garbled.done) == (0.0, False)
    assert garbled.observation.startswith('Invalid action: "dance wildly" is not a move.')
    assert env.step("").observation.startswith("Invalid action")
    moved = env.step("Move Right.")  # case, punctuation and bare directions are tolerated
    assert "Your current position is at position 5, 4." in moved.observation
    assert "position 5, 5." in env.step("right").observation
    assert [parse_move(t) for t in ("UP", '"move down"', "move  left", "go right")] == [
        "move up",
        "move down",
        "move left",
        None,
    ]


def test_reaching_the_goal_ends_with_reward_one():
    env = MazeEnv()
    env.reset(18)  # (7, 6), one above the goal
    result = env.step("move down")
    assert (result.observation, result.reward, result.done, result.score) == ("Success", 1.0, True, 1.0)
    after = env.step("move up")
    assert after.done and after.reward == 0.0 and after.score == 1.0


def test_game_25_starts_on_the_goal():
    env = MazeEnv()
    env.reset(25)
    assert env.step("jump").reward == 0.0  # no move, no success
    move = env.expert_action()
    assert move.action == "move down" and "already on the goal" in move.thought
    assert env.step(move.action).reward == 1.0


def test_step_cap_ends_the_episode_unsolved():
    env = MazeEnv()
    env.reset(0)
    for _ in range(MazeEnv.max_steps - 1):
        assert not env.step("move up").done
    last = env.step("move up")
    assert last.done and last.truncated and not last.terminated and last.reward == 0.0 and last.score == 0.0
    assert last.observation.endswith("The episode ends: 50 actions used.")


def test_expert_solves_every_fixed_start_within_max_rounds():
    env = MazeEnv()
    for idx in MazeEnv.splits["test"]:
        reward, rounds, thoughts = play_expert(env, idx)
        assert reward == 1.0, idx
        assert rounds == max(1, len(shortest_path(env.maze, env.maze.start)))
    env.reset(0)
    thought = env.expert_action().thought
    assert thought == (
        "The goal is at position 8, 6 and I am at position 1, 1. The shortest path is 12 moves: "
        "2 right, 4 down, 3 right, then 3 down. So I move right."
    )


def test_expert_solves_procedural_mazes():
    env = MazeEnv()
    for idx in range(1000, 3000, 40):
        reward, rounds, _ = play_expert(env, idx)
        assert reward == 1.0 and rounds <= 14, idx


def test_reset_rejects_negative_indices():
    with pytest.raises(ValueError):
        MazeEnv().reset(-1)


def test_expert_recovers_after_detours():
    env = MazeEnv()
    env.reset(16)  # (5, 6): the goal is 3 moves down
    env.step("move left")
    env.step("move left")
    assert env.expert_action().action == "move right"
    assert set(MOVES) >= set(env.available_actions())
