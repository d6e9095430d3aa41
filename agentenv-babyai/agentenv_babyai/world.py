"""What the agent sees of a minigrid world, said in words, and the high-level actions it can take there.

A :class:`View` is computed from the agent's current 7x7 field of view (walls and closed doors block
sight: :class:`Sight`).  Paths for the high-level actions are planned by breadth-first search over the
cells the agent has *seen* so far in the episode (``seen``): a path never crosses a cell the agent has not
looked at; one search (:class:`Paths`) serves every object in view.
Each high-level action is a list of minigrid low-level actions.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from minigrid.core.actions import Actions
from minigrid.core.constants import DIR_TO_VEC

#: a conditional ``forward``: taken only if the cell ahead can be entered (the step after a door)
FORWARD_IF_FREE = -1
PICKABLE = ("key", "ball", "box")


@dataclass
class Thing:
    """A visible object: ``red ball 1`` (kind ids count per colour and type, nearest first)."""

    type: str
    color: str
    number: int
    pos: tuple[int, int]
    ahead: int
    right: int
    state: str = ""  # doors: open / closed / locked

    @property
    def name(self) -> str:
        return f"{self.color} {self.type} {self.number}"

    def where(self) -> str:
        """Position relative to the agent: ``2 steps ahead and 1 step to your left``."""
        parts = []
        if self.ahead:
            parts.append(f"{_steps(self.ahead)} ahead")
        if self.right:
            parts.append(f"{_steps(abs(self.right))} to your {'right' if self.right > 0 else 'left'}")
        if self.ahead == 1 and not self.right:
            return "right in front of you"
        return " and ".join(parts)


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def passable(cell) -> bool:
    return cell is None or (cell.type == "door" and cell.is_open) or cell.type in ("goal", "floor")


def door_state(door) -> str:
    return "locked" if door.is_locked else "open" if door.is_open else "closed"


@dataclass
class View:
    """The agent's surroundings, relative to its position and heading."""

    pos: tuple[int, int]
    dir: int
    things: list[Thing] = field(default_factory=list)
    walls: dict[str, int] = field(default_factory=dict)  # ahead / left / right -> distance to the first blocker
    blockers: dict[str, str] = field(default_factory=dict)  # ahead / left / right -> what blocks there

    def find(self, color: str, type_: str, number: int) -> Thing | None:
        for thing in self.things:
            if (thing.color, thing.type, thing.number) == (color, type_, number):
                return thing
        return None


#: (dx, dy) of each heading, as minigrid's ``DIR_TO_VEC`` (0: right, 1: down, 2: left, 3: up), in plain ints
DIRS: tuple[tuple[int, int], ...] = tuple((int(dx), int(dy)) for dx, dy in DIR_TO_VEC)


class Sight:
    """The cells the agent of ``env`` sees now: minigrid's ``gen_obs_grid`` visibility (walls and closed doors
    block sight), worked out on the world's own cells rather than on a rotated copy of its view.

    View coordinates are minigrid's: ``vi`` left to right, ``vj`` far to near, the agent at
    ``(size // 2, size - 1)``; :meth:`world` turns them into grid cells.
    """

    def __init__(self, env) -> None:
        self.size = size = env.agent_view_size
        self.pos = px, py = int(env.agent_pos[0]), int(env.agent_pos[1])
        self.f = fx, fy = DIRS[env.agent_dir]
        self.r = rx, ry = -fy, fx
        self.origin = (px + fx * (size - 1) - rx * (size // 2), py + fy * (size - 1) - ry * (size // 2))
        self.width, self.height, self.cells = env.width, env.height, env.grid.grid
        self.mask = self._all() if env.see_through_walls else self._visibility()

    def world(self, vi: int, vj: int) -> tuple[int, int]:
        (ox, oy), (fx, fy), (rx, ry) = self.origin, self.f, self.r
        return ox - fx * vj + rx * vi, oy - fy * vj + ry * vi

    def cell(self, x: int, y: int):
        return self.cells[y * self.width + x]

    def inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def in_view(self, x: int, y: int) -> bool:
        """Whether ``(x, y)`` lies in the agent's view square (minigrid's ``in_view``)."""
        (px, py), (fx, fy), (rx, ry) = self.pos, self.f, self.r
        vi = self.size // 2 + (x - px) * rx + (y - py) * ry
        vj = self.size - 1 - ((x - px) * fx + (y - py) * fy)
        return 0 <= vi < self.size and 0 <= vj < self.size

    def _all(self) -> list[list[bool]]:
        return [[True] * self.size for _ in range(self.size)]

    def _visibility(self) -> list[list[bool]]:
        """``mask[vi][vj]``: minigrid's ``Grid.process_vis`` on the view, a cell outside the grid a wall."""
        size = self.size

        def opaque(vi: int, vj: int) -> bool:
            x, y = self.world(vi, vj)
            if not self.inside(x, y):
                return True  # minigrid's view shows a wall there
            cell = self.cell(x, y)
            return cell is not None and not cell.see_behind()

        mask = [[False] * size for _ in range(size)]
        mask[size // 2][size - 1] = True
        for j in reversed(range(size)):
            for i in range(size - 1):
                if mask[i][j] and not opaque(i, j):
                    mask[i + 1][j] = True
                    if j > 0:
                        mask[i + 1][j - 1] = mask[i][j - 1] = True
            for i in reversed(range(1, size)):
                if mask[i][j] and not opaque(i, j):
                    mask[i - 1][j] = True
                    if j > 0:
                        mask[i - 1][j - 1] = mask[i][j - 1] = True
        return mask

    def seen_cells(self) -> list[tuple[int, int]]:
        """The grid cells in sight, by view row (far to near) then column (left to right)."""
        return [xy for vj in range(self.size) for vi in range(self.size)
                if self.mask[vi][vj] and self.inside(*(xy := self.world(vi, vj)))]


def mark_seen(env, seen: np.ndarray) -> Sight:
    """Mark in ``seen`` every cell the agent of ``env`` sees now."""
    sight = Sight(env)
    for x, y in sight.seen_cells():
        seen[x, y] = True
    return sight


def scan(env, seen: np.ndarray | None = None) -> View:
    """What the agent of ``env`` (an unwrapped minigrid env) sees now; marks it in ``seen``."""
    sight = Sight(env)
    (px, py), (fx, fy), (rx, ry) = sight.pos, sight.f, sight.r
    found = []
    for x, y in sight.seen_cells():
        if seen is not None:
            seen[x, y] = True
        if (x, y) == (px, py):
            continue
        cell = sight.cell(x, y)
        if cell is None or cell.type not in ("key", "ball", "box", "door"):
            continue
        ahead, right = (x - px) * fx + (y - py) * fy, (x - px) * rx + (y - py) * ry
        found.append((ahead, right, cell, (x, y)))
    found.sort(key=lambda t: (abs(t[0]) + abs(t[1]), t[0], t[1]))
    counts: dict[tuple[str, str], int] = {}
    things = []
    for ahead, right, cell, xy in found:
        key = (cell.color, cell.type)
        counts[key] = counts.get(key, 0) + 1
        state = door_state(cell) if cell.type == "door" else ""
        things.append(Thing(cell.type, cell.color, counts[key], xy, ahead, right, state))
    view = View((px, py), int(env.agent_dir), things)
    for side, (vx, vy) in (("ahead", (fx, fy)), ("left", (-rx, -ry)), ("right", (rx, ry))):
        distance, cell = 1, sight.cell(px + vx, py + vy)
        while passable(cell) and distance < sight.size:
            distance += 1
            cell = sight.cell(px + vx * distance, py + vy * distance)
        if not passable(cell) and sight.in_view(px + vx * distance, py + vy * distance):
            view.walls[side] = distance
            view.blockers[side] = "wall" if cell.type == "wall" else f"{cell.color} {cell.type}"
    return view


Pose = tuple[int, int, int]


class Paths:
    """Shortest lists of turns / forwards from the agent's pose, moving only through seen, enterable cells,
    for many goals from one breadth-first search.

    :meth:`to` gives the plan to the first of a goal's poses the search reaches, which is what a search for
    that goal alone gives: poses are reached in the same order (and by the same parents) whatever the goal,
    so the search just goes on from where the last goal left it."""

    def __init__(self, env, seen: np.ndarray) -> None:
        self.env, self.seen, self.cells, self.width = env, seen, env.grid.grid, env.width
        start = (int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))
        self.parents: dict[Pose, tuple[Pose, int] | None] = {start: None}  # in the order reached
        self.rank: dict[Pose, int] = {start: 0}
        self.queue = deque([start])

    def to(self, goal: list[Pose]) -> list[int] | None:
        """The plan to the first pose of ``goal`` reached, ``None`` when none can be."""
        wanted = set(goal)
        reached = [pose for pose in wanted if pose in self.rank]
        while not reached and self.queue:
            reached = [pose for pose in self._expand() if pose in wanted]
        if not reached:
            return None
        state = min(reached, key=self.rank.__getitem__)
        path = []
        while self.parents[state] is not None:
            state, action = self.parents[state]
            path.append(action)
        return path[::-1]

    def _expand(self) -> list[Pose]:
        state = x, y, d = self.queue.popleft()
        dx, dy = DIRS[d]
        new = []
        for action, nxt in ((Actions.forward, (x + dx, y + dy, d)), (Actions.left, (x, y, (d - 1) % 4)),
                            (Actions.right, (x, y, (d + 1) % 4))):
            if nxt in self.parents:
                continue
            if action == Actions.forward and not self._enterable(nxt[0], nxt[1]):
                continue
            self.parents[nxt] = (state, action)
            self.rank[nxt] = len(self.rank)
            self.queue.append(nxt)
            new.append(nxt)
        return new

    def _enterable(self, x: int, y: int) -> bool:
        env = self.env
        return 0 <= x < env.width and 0 <= y < env.height and bool(self.seen[x, y]) \
            and passable(self.cells[y * self.width + x])


def facing(target: tuple[int, int]) -> list[Pose]:
    """The poses next to ``target`` and looking at it."""
    tx, ty = target
    return [(tx - dx, ty - dy, d) for d, (dx, dy) in enumerate(DIRS)]


def standing_on(target: tuple[int, int]) -> list[Pose]:
    """The poses on ``target``."""
    return [(target[0], target[1], d) for d in range(4)]


def _turned(d: int, action: int) -> int:
    return (d - 1) % 4 if action == Actions.left else (d + 1) % 4


def end_pose(pos: tuple[int, int], d: int, plan: list[int]) -> tuple[int, int, int]:
    """Where a plan of turns and forwards leaves the agent (a conditional forward counts as taken)."""
    x, y = pos
    for action in plan:
        if action in (Actions.left, Actions.right):
            d = _turned(d, action)
        elif action in (Actions.forward, FORWARD_IF_FREE):
            dx, dy = DIR_TO_VEC[d]
            x, y = x + dx, y + dy
    return x, y, d
