"""What the agent sees of a minigrid world, said in words, and the high-level actions it can take there.

A :class:`View` is computed from the agent's current 7x7 field of view (walls and closed doors block
sight).  Paths for the high-level actions are planned by breadth-first search over the cells the agent
has *seen* so far in the episode (``seen``): a path never crosses a cell the agent has not looked at.
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


def scan(env, seen: np.ndarray | None = None) -> View:
    """What the agent of ``env`` (an unwrapped minigrid env) sees now; marks it in ``seen``."""
    _, vis_mask = env.gen_obs_grid()
    size = env.agent_view_size
    pos = np.asarray(env.agent_pos)
    f, r = np.asarray(env.dir_vec), np.asarray(env.right_vec)
    top_left = pos + f * (size - 1) - r * (size // 2)
    found = []
    for vj in range(size):
        for vi in range(size):
            if not vis_mask[vi, vj]:
                continue
            x, y = top_left - f * vj + r * vi
            if not (0 <= x < env.width and 0 <= y < env.height):
                continue
            if seen is not None:
                seen[x, y] = True
            if (x, y) == tuple(pos):
                continue
            cell = env.grid.get(x, y)
            if cell is None or cell.type not in ("key", "ball", "box", "door"):
                continue
            rel = np.array((x, y)) - pos
            found.append((int(rel @ f), int(rel @ r), cell, (int(x), int(y))))
    found.sort(key=lambda t: (abs(t[0]) + abs(t[1]), t[0], t[1]))
    counts: dict[tuple[str, str], int] = {}
    things = []
    for ahead, right, cell, xy in found:
        key = (cell.color, cell.type)
        counts[key] = counts.get(key, 0) + 1
        state = door_state(cell) if cell.type == "door" else ""
        things.append(Thing(cell.type, cell.color, counts[key], xy, ahead, right, state))
    view = View((int(pos[0]), int(pos[1])), int(env.agent_dir), things)
    for side, vec in (("ahead", f), ("left", -r), ("right", r)):
        distance, cell = 1, env.grid.get(*(pos + vec))
        while passable(cell) and distance < size:
            distance += 1
            cell = env.grid.get(*(pos + vec * distance))
        if not passable(cell) and env.in_view(*(pos + vec * distance)):
            view.walls[side] = distance
            view.blockers[side] = "wall" if cell.type == "wall" else f"{cell.color} {cell.type}"
    return view


def _turned(d: int, action: int) -> int:
    return (d - 1) % 4 if action == Actions.left else (d + 1) % 4


def plan_path(env, seen: np.ndarray, goal) -> list[int] | None:
    """Shortest list of turns / forwards from the agent's pose to a pose where ``goal(pos, dir)`` holds,
    moving only through seen, enterable cells; ``None`` when there is no such path."""
    start = (int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))
    parents: dict[tuple[int, int, int], tuple[tuple[int, int, int], int] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        x, y, d = state
        if goal((x, y), d):
            path = []
            while parents[state] is not None:
                state, action = parents[state]
                path.append(action)
            return path[::-1]
        dx, dy = DIR_TO_VEC[d]
        moves = [(Actions.forward, (x + dx, y + dy, d)), (Actions.left, (x, y, (d - 1) % 4)),
                 (Actions.right, (x, y, (d + 1) % 4))]
        for action, nxt in moves:
            if nxt in parents:
                continue
            if action == Actions.forward:
                nx, ny = nxt[0], nxt[1]
                if not (0 <= nx < env.width and 0 <= ny < env.height) or not seen[nx, ny]:
                    continue
                if not passable(env.grid.get(nx, ny)):
                    continue
            parents[nxt] = (state, action)
            queue.append(nxt)
    return None


def facing(target: tuple[int, int]):
    """Goal test for :func:`plan_path`: next to ``target`` and looking at it."""
    tx, ty = target

    def goal(pos, d):
        dx, dy = DIR_TO_VEC[d]
        return (pos[0] + dx, pos[1] + dy) == (tx, ty)

    return goal


def standing_on(target: tuple[int, int]):
    return lambda pos, d: tuple(pos) == tuple(target)


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
