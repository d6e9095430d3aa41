"""Maze (LMRL-Gym): walk a grid maze to the goal with ``move up/down/left/right``.

Tasks 0-25 are LMRL-Gym's fixed double-T maze from AgentGym's 26 start positions (the test split);
tasks 1000-2999 are seeded procedural mazes (the train split) and 3000-3199 procedural mazes held out
from training (the test_procedural split).  Each observation says where the goal
is, where the agent is and which neighbouring squares are walls, in LMRL-Gym's words.  Reward 1 and
``done`` when a move ends on the goal; the episode ends unsolved after :attr:`MazeEnv.max_steps` actions.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire

from .mazes import DOUBLE_T_STARTS, MOVES, Maze, Position, double_t_maze, procedural_maze, shortest_path

#: how LMRL-Gym names the square next to the agent, in the order it lists walls
WALL_WORDS: dict[str, str] = {
    "move right": "to your right",
    "move left": "to your left",
    "move up": "above you",
    "move down": "below you",
}

TASK_TEXT = """\
You are an expert maze solver. Your objective is to reach the goal in as few steps as possible. At each \
step you will be given where the goal is, your current position, and the walls that surround you.
Positions are written "row, column": when you move down you increase the row by 1, when you move right \
you increase the column by 1. Moving into a wall leaves you where you are.
Here is an example:
environment: The goal is at position 8, 6. Your current position is at position 5, 5. There are walls \
above you, below you.
action: move right
environment: The goal is at position 8, 6. Your current position is at position 5, 6. There is a wall \
above you.
action: move down
environment: The goal is at position 8, 6. Your current position is at position 6, 6. There are walls \
to your right, to your left.
Your possible actions are "move up", "move down", "move left", "move right". When you reach the goal \
the environment answers "Success"."""

_SPACES = re.compile(r"\s+")


def parse_move(text: str) -> str | None:
    """``"move up"`` etc. for a move written as ``move up``, ``Move Up.``, ``"up"``; None otherwise."""
    words = _SPACES.sub(" ", text.strip().strip("\"'`.!").lower())
    if words in MOVES:
        return words
    if f"move {words}" in MOVES:
        return f"move {words}"
    return None


def describe_walls(maze: Maze, pos: Position) -> str:
    walls = [words for move, words in WALL_WORDS.items() if maze.is_wall(maze.neighbour(pos, move))]
    if not walls:
        return "There are no walls near you."
    if len(walls) == 1:
        return f"There is a wall {walls[0]}."
    return f"There are walls {', '.join(walls)}."


def describe(maze: Maze, pos: Position) -> str:
    """LMRL-Gym's fully observed maze observation."""
    return (
        f"The goal is at position {maze.goal[0]}, {maze.goal[1]}. "
        f"Your current position is at position {pos[0]}, {pos[1]}. {describe_walls(maze, pos)}"
    )


def _runs(path: list[str]) -> str:
    """``['move right', 'move right', 'move down']`` -> ``'2 right, then 1 down'``."""
    runs: list[list[Any]] = []
    for move in path:
        direction = move.removeprefix("move ")
        if runs and runs[-1][0] == direction:
            runs[-1][1] += 1
        else:
            runs.append([direction, 1])
    parts = [f"{n} {direction}" for direction, n in runs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", then " + parts[-1]


class MazeEnv(EpisodicEnv):
    """One maze episode at a time."""

    name: ClassVar[str] = "maze"
    #: test: the 26 double-T starts (AgentGym's ``game`` 0-25); train: procedural mazes by seed;
    #: test_procedural: held-out procedural mazes (none equals a train task; 3 share a train grid)
    splits: ClassVar[dict[str, range]] = {
        "test": range(0, 26),
        "train": range(1000, 3000),
        "test_procedural": range(3000, 3200),
    }
    #: AgentGym's evaluation setting; the longest shortest path is 12 moves (double-T) / 14 (procedural)
    max_rounds: ClassVar[int] = 15
    #: actions per episode before it ends unsolved (LMRL-Gym's limit)
    max_steps: ClassVar[int] = 50
    task_text: ClassVar[str] = TASK_TEXT
    port: ClassVar[int] = 36001
    server: ClassVar[str] = "lmrlgym"
    wire: ClassVar[Wire] = Wire(
        reset_field="game",
        shapes={"create": ("id",), "reset": ("observation",), "step": ("observation", "reward", "done")},
    )
    blocking: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.maze: Maze | None = None
        self.position: Position = (0, 0)

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """``double_t`` or ``procedural``, known from the index (so ``--sample`` stratifies by it)."""
        return "double_t" if data_idx < len(DOUBLE_T_STARTS) else "procedural"

    def start(self, data_idx: int) -> str:
        self.maze = double_t_maze(data_idx) if data_idx < len(DOUBLE_T_STARTS) else procedural_maze(data_idx)
        self.position = self.maze.start
        return describe(self.maze, self.position)

    def act(self, action: str) -> StepResult:
        maze = self.maze
        move = parse_move(action)
        if move is None:
            text = (
                f'Invalid action: "{action.strip()[:80]}" is not a move. Use "move up", "move down", '
                f'"move left" or "move right". {describe(maze, self.position)}'
            )
        else:
            target = maze.neighbour(self.position, move)
            if maze.is_wall(target):
                # as in LMRL-Gym the agent stays put; on the goal square (game 25) that still ends on the goal
                text = f"You cannot {move}: there is a wall {WALL_WORDS[move]}. {describe(maze, self.position)}"
            else:
                self.position = target
                text = describe(maze, self.position)
            if self.position == maze.goal:
                return StepResult("Success", 1.0, terminated=True, info={"steps": self.steps})
        return StepResult(text, info={"steps": self.steps})

    def available_actions(self) -> list[str]:
        """The moves that do not run into a wall from the current square."""
        return self.maze.open_moves(self.position) if self.maze else []

    @classmethod
    def all_actions(cls) -> list[str]:
        """The four moves, in the order AgentGym's ``GET /maze/available_actions`` (no session) lists them."""
        return ["move left", "move right", "move up", "move down"]

    def expert_action(self) -> ExpertAction:
        maze = self.maze
        (r, c), (gr, gc) = self.position, maze.goal
        path = shortest_path(maze, self.position)
        if not path:  # standing on the goal (game 25): a move into a wall keeps us there
            walls = [m for m in MOVES if maze.is_wall(maze.neighbour(self.position, m))]
            move = walls[0] if walls else "move up"
            return ExpertAction(
                f"I am already on the goal at position {gr}, {gc}; the task ends when a move leaves me on "
                f"it. There is a wall {WALL_WORDS[move].replace('you', 'me')}, so I {move} and stay on the goal.",
                move,
            )
        count = f"{len(path)} move" + ("s" if len(path) > 1 else "")
        return ExpertAction(
            f"The goal is at position {gr}, {gc} and I am at position {r}, {c}. The shortest path is "
            f"{count}: {_runs(path)}. So I {path[0]}.",
            path[0],
        )

    def task_type(self) -> str:
        return self.maze.kind if self.maze else self.name

    def detail(self) -> dict[str, Any]:
        maze = self.maze
        return super().detail() | {
            "maze_name": "double_t_maze" if maze and maze.kind == "double_t" else "procedural",
            "map": maze.render(self.position) if maze else None,
            "goal_position": list(maze.goal) if maze else None,
            "init_position": list(maze.start) if maze else None,
            "position": list(self.position) if maze else None,
        }
