"""Maze layouts: LMRL-Gym's fixed double-T maze, seeded procedural mazes, and shortest paths.

Positions are ``(row, column)`` in the grid, walls included, exactly as LMRL-Gym writes them
("Your current position is at position 5, 3"): moving down adds 1 to the row, moving right adds 1 to
the column.  Every maze is surrounded by walls, so a move never leaves the grid.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

Position = tuple[int, int]

#: action -> (row delta, column delta)
MOVES: dict[str, Position] = {
    "move up": (-1, 0),
    "move down": (1, 0),
    "move left": (0, -1),
    "move right": (0, 1),
}

#: LMRL-Gym's double-T maze (13 x 10, from mazelab): ``#`` wall, ``.`` open.  Goal at (8, 6).
DOUBLE_T_LAYOUT: tuple[str, ...] = (
    "#############",
    "#.....#.....#",
    "###.#####.###",
    "###.#####.###",
    "###.#####.###",
    "###.......###",
    "######.######",
    "######.######",
    "######.######",
    "#############",
)
DOUBLE_T_GOAL: Position = (8, 6)

#: AgentGym's 26 start positions for ``/maze/reset {game}``, in its order: every open square of the
#: double-T maze, the goal itself last (game 25).
DOUBLE_T_STARTS: tuple[Position, ...] = (
    (1, 1), (1, 2), (1, 3), (1, 4), (1, 5),
    (1, 7), (1, 8), (1, 9), (1, 10), (1, 11),
    (2, 3), (3, 3), (4, 3),
    (5, 3), (5, 4), (5, 5), (5, 6), (6, 6), (7, 6),
    (5, 7), (5, 8), (5, 9),
    (4, 9), (3, 9), (2, 9),
    (8, 6),
)  # fmt: skip

#: shortest-path lengths a procedural task's start is drawn from (the expert needs at most 14 moves)
PROCEDURAL_DISTANCES = range(4, 15)


@dataclass(frozen=True)
class Maze:
    """A grid with a goal and a start square."""

    layout: tuple[str, ...]
    goal: Position
    start: Position
    kind: str  # "double_t" or "procedural"

    def is_wall(self, pos: Position) -> bool:
        r, c = pos
        return self.layout[r][c] == "#"

    def neighbour(self, pos: Position, move: str) -> Position:
        dr, dc = MOVES[move]
        return pos[0] + dr, pos[1] + dc

    def open_moves(self, pos: Position) -> list[str]:
        """The moves that do not run into a wall, in ``MOVES`` order."""
        return [m for m in MOVES if not self.is_wall(self.neighbour(pos, m))]

    def render(self, position: Position | None = None) -> str:
        """The grid as text: ``#`` wall, ``.`` open, ``G`` goal, ``A`` the given position."""
        rows = [list(row) for row in self.layout]
        rows[self.goal[0]][self.goal[1]] = "G"
        if position is not None:
            rows[position[0]][position[1]] = "A"
        return "\n".join("".join(row) for row in rows)


def shortest_path(maze: Maze, start: Position) -> list[str]:
    """The moves of a shortest path from ``start`` to the goal (BFS; ties broken in ``MOVES`` order).

    From the goal itself the path is empty.
    """
    parent: dict[Position, tuple[Position, str] | None] = {maze.goal: None}
    queue = deque([maze.goal])
    # search backwards from the goal, so the path from any square can be read off the parents
    reverse = {
        "move up": "move down",
        "move down": "move up",
        "move left": "move right",
        "move right": "move left",
    }
    while queue:
        pos = queue.popleft()
        for move in MOVES:
            nxt = maze.neighbour(pos, move)
            if nxt not in parent and not maze.is_wall(nxt):
                parent[nxt] = (pos, reverse[move])
                queue.append(nxt)
    if start not in parent:
        raise ValueError(f"no path from {start} to the goal {maze.goal}")
    path, pos = [], start
    while parent[pos] is not None:
        pos, move = parent[pos]
        path.append(move)
    return path


def distances_to(layout: tuple[str, ...], goal: Position) -> dict[Position, int]:
    """BFS distance of every reachable open square to ``goal``."""
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES.values():
            nxt = (r + dr, c + dc)
            if nxt not in dist and layout[nxt[0]][nxt[1]] != "#":
                dist[nxt] = dist[(r, c)] + 1
                queue.append(nxt)
    return dist


def double_t_maze(game: int) -> Maze:
    """The fixed double-T maze started at AgentGym's ``game``-th start position (0..25)."""
    if not 0 <= game < len(DOUBLE_T_STARTS):
        raise ValueError(f"the double-T maze has {len(DOUBLE_T_STARTS)} start positions, not game {game}")
    return Maze(DOUBLE_T_LAYOUT, DOUBLE_T_GOAL, DOUBLE_T_STARTS[game], "double_t")


def procedural_maze(seed: int) -> Maze:
    """A solvable maze generated deterministically from ``seed``.

    A perfect maze (randomised depth-first search over a grid of 3-5 x 4-6 rooms, every room reachable)
    with a few extra openings so there are loops, then a random goal and a start whose shortest path
    is 4-14 moves.  Grids are 7-11 rows by 9-13 columns, the double-T maze's size.
    """
    rng = random.Random(seed)
    rooms_h, rooms_w = rng.randint(3, 5), rng.randint(4, 6)
    height, width = 2 * rooms_h + 1, 2 * rooms_w + 1
    grid = [["#"] * width for _ in range(height)]
    start_room = (rng.randrange(rooms_h), rng.randrange(rooms_w))
    seen = {start_room}
    stack = [start_room]
    grid[2 * start_room[0] + 1][2 * start_room[1] + 1] = "."
    while stack:
        r, c = stack[-1]
        options = [
            (r + dr, c + dc)
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= r + dr < rooms_h and 0 <= c + dc < rooms_w and (r + dr, c + dc) not in seen
        ]
        if not options:
            stack.pop()
            continue
        nr, nc = rng.choice(options)
        grid[r + nr + 1][c + nc + 1] = "."  # the wall between the two rooms
        grid[2 * nr + 1][2 * nc + 1] = "."
        seen.add((nr, nc))
        stack.append((nr, nc))
    # open a few inner walls between two rooms to make loops
    inner = [
        (r, c)
        for r in range(1, height - 1)
        for c in range(1, width - 1)
        if grid[r][c] == "#" and ((r % 2 == 1 and c % 2 == 0) or (r % 2 == 0 and c % 2 == 1))
    ]
    for r, c in rng.sample(inner, min(len(inner), rng.randint(0, rooms_h * rooms_w // 5))):
        grid[r][c] = "."
    layout = tuple("".join(row) for row in grid)

    open_squares = [(r, c) for r in range(height) for c in range(width) if layout[r][c] == "."]
    goal = rng.choice(open_squares)
    dist = distances_to(layout, goal)
    starts = sorted(p for p, d in dist.items() if d in PROCEDURAL_DISTANCES)
    if not starts:  # a small maze whose squares all lie close to the goal: take the farthest one
        far = max(dist.values())
        starts = sorted(p for p, d in dist.items() if d == far)
    return Maze(layout, goal, rng.choice(starts), "procedural")
