"""The expert: minigrid's ``BabyAIBot`` decides *what* to do, a text-action navigator decides *how*.

The bot plays the episode to the end on a copy of the world (low-level actions, exploring as it goes).
From its run we keep the **key actions**: every pickup, drop, unlock or box opening, every toggle that
advances the mission, and every move that completes a ``go to`` part of the mission, each with the cell
the agent faces when doing it and the state of the world / mission afterwards.  Opening and closing
unlocked doors is left out (the navigator opens doors on its way), and so is the bot's exploration.

Each call of :meth:`Expert.next_action` looks at the real episode, skips the key actions already done,
and chooses one *text* action for the next one: the key action itself when the agent faces its cell
(``pick up X`` also walks there), otherwise the available navigation action (``go to``, ``go through``,
``toggle and go through``, ``move forward``, turns) that leaves the agent closest, by true shortest
path, to facing that cell.  This compresses the bot's runs of low-level moves into a few text actions.

Two levels the bot cannot solve get a small fix before it runs: in KeyInBox the key hides in a box (the
box is opened first), and in PutNextS7N4Carrying the agent starts out carrying the object to move (the
bot's "go and pick it up" steps are dropped).
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass

from minigrid.core.actions import Actions
from minigrid.core.constants import DIR_TO_VEC, OBJECT_TO_IDX
from minigrid.envs.babyai.core.verifier import OpenInstr, PutNextInstr, SeqInstr
from minigrid.utils.baby_ai_bot import BabyAIBot

from agentenv.env import ExpertAction

from .world import end_pose, passable

#: low-level steps the bot may take on its copy of the world before we give up on it
BOT_STEP_LIMIT = 3000
#: breadth-first searches the bot may run (guards against its rare endless replanning loops)
BOT_SEARCH_LIMIT = 20000
_DOOR = OBJECT_TO_IDX["door"]


class _BoundedBot(BabyAIBot):
    def _breadth_first_search(self, initial_states, accept_fn, ignore_blockers):
        if self.bfs_counter > BOT_SEARCH_LIMIT:
            raise RuntimeError("the BabyAI bot is replanning in circles")
        return super()._breadth_first_search(initial_states, accept_fn, ignore_blockers)


@dataclass
class KeyAction:
    kind: str  # pickup / drop / toggle / reach
    front: tuple[int, int]  # the cell the agent faces when doing it
    world_after: bytes
    progress_after: tuple
    obj: str = ""  # "red key" etc.: what is picked up / dropped / toggled / reached
    why: str = ""
    final: bool = False  # it completes the mission (so it is never "already done")
    free_hands: bool = False  # a drop only to free the hands: any harmless cell will do


def world_signature(env) -> bytes:
    """The world without the agent: grid contents (unlocked doors open or closed alike) + what it carries."""
    grid = env.grid.encode()
    doors = grid[:, :, 0] == _DOOR
    state = grid[:, :, 2]
    state[doors & (state == 1)] = 0
    carrying = env.carrying
    held = b"" if carrying is None else f"{carrying.color} {carrying.type}".encode()
    return grid.tobytes() + held


def progress(instr) -> tuple:
    """How far the mission's sequence parts are (``a_done`` / ``b_done`` of every ``then``/``and``/``after``)."""
    if isinstance(instr, SeqInstr):
        return (instr.a_done == "success", instr.b_done == "success", progress(instr.instr_a),
                progress(instr.instr_b))
    return ()


def _instrs(instr):
    yield instr
    if isinstance(instr, SeqInstr):
        yield from _instrs(instr.instr_a)
        yield from _instrs(instr.instr_b)


def _name(cell) -> str:
    return f"{cell.color} {cell.type}" if cell is not None else "empty cell"


def bot_key_actions(env) -> list[KeyAction]:
    """Run the BabyAI bot on a copy of ``env`` (unwrapped, just reset) and keep its key actions."""
    sim = copy.deepcopy(env)
    keys: list[KeyAction] = []
    # KeyInBox: the key for a locked door lies in a box, which the bot refuses to open
    for x in range(sim.width):
        for y in range(sim.height):
            cell = sim.grid.get(x, y)
            if cell is not None and cell.type == "box" and cell.contains is not None and cell.contains.type == "key":
                color = cell.contains.color
                loose = any(o is not None and o.type == "key" and o.color == color for o in sim.grid.grid)
                if not loose:
                    cell.toggle(sim, (x, y))
                    keys.append(KeyAction("toggle", (x, y), world_signature(sim), progress(sim.instrs),
                                          _name(cell), f"the {color} key I need is inside the {_name(cell)}"))
    bot = _BoundedBot(sim)
    # PutNext...Carrying: the agent starts with the object to move, so skip "go to it, pick it up"
    if sim.carrying is not None and isinstance(sim.instrs, PutNextInstr) and len(bot.stack) >= 2:
        if any(o is sim.carrying for o in sim.instrs.desc_move.obj_set):
            del bot.stack[-2:]
    try:
        action = bot.replan()
        for _ in range(BOT_STEP_LIMIT):
            front = tuple(int(v) for v in sim.front_pos)
            front_cell = sim.grid.get(*front)
            carried = sim.carrying
            world, prog = world_signature(sim), progress(sim.instrs)
            _, reward, terminated, truncated, _ = sim.step(action)
            new_world, new_prog = world_signature(sim), progress(sim.instrs)
            if action in (Actions.pickup, Actions.drop, Actions.toggle):
                if new_world != world or new_prog != prog or terminated:
                    obj = _name(front_cell) if action != Actions.drop else _name(carried)
                    if action == Actions.pickup:
                        obj = _name(sim.carrying)
                    keys.append(KeyAction(Actions(action).name, front, new_world, new_prog, obj,
                                          final=terminated and reward > 0))
            elif new_prog != prog or (terminated and reward > 0):
                front = tuple(int(v) for v in sim.front_pos)
                keys.append(KeyAction("reach", front, new_world, new_prog, _name(sim.grid.get(*front)),
                                      final=terminated and reward > 0))
            if terminated or truncated:
                break
            action = bot.replan()
    except Exception:  # the bot gave up (e.g. it met a box it will not open): keep what it planned so far
        pass
    keys = [k for i, k in enumerate(keys) if not _needless_drop(keys, i)]
    for i, key in enumerate(keys):
        if key.kind == "drop" and not key.final:
            key.free_hands = key.progress_after == (keys[i - 1].progress_after if i else progress(env.instrs))
    _explain(keys, env)
    return keys


def _needless_drop(keys: list[KeyAction], i: int) -> bool:
    """A drop that neither advances the mission nor frees the hands for a later pickup."""
    key = keys[i]
    if key.kind != "drop" or key.final:
        return False
    before = keys[i - 1].progress_after if i else None
    if i and key.progress_after != before:
        return False
    return not any(k.kind == "pickup" for k in keys[i + 1:])


def _explain(keys: list[KeyAction], env) -> None:
    """Give every key action its reason, for the expert's thoughts."""
    mission = env.mission
    for i, key in enumerate(keys):
        if key.why:
            continue
        color, _, type_ = key.obj.partition(" ")
        in_mission = type_ in mission and (color in mission or f"a {type_}" in mission or f"the {type_}" in mission)
        if key.kind == "pickup":
            unlocks = any(k.kind == "toggle" and k.obj == f"{color} door" for k in keys[i + 1:])
            if type_ == "key" and unlocks:
                key.why = f"I need the {key.obj} to unlock the {color} door"
            elif in_mission:
                key.why = f"the goal involves the {key.obj}"
            else:
                key.why = f"the {key.obj} is in my way, so I move it"
        elif key.kind == "drop":
            key.why = (f"the goal asks me to put the {key.obj} there" if "put" in mission and in_mission
                       else f"I no longer need the {key.obj}, so I put it down out of the way")
        elif key.kind == "toggle":
            key.why = (f"the goal asks me to open the {key.obj}" if type_ == "door" and "open" in mission
                       else f"I open the {key.obj}")
        else:
            key.why = f"the goal asks me to go to the {key.obj}"


class Expert:
    """Follows the bot's key actions in the real episode of a :class:`~agentenv_babyai.env.BabyAIEnv`."""

    def __init__(self, text_env) -> None:
        self.text = text_env
        self.keys = bot_key_actions(text_env.env)
        self.next_key = 0
        self._skips = 0  # key actions given up on (bounds the recursion of next_action)
        self.strict_open = any(isinstance(i, OpenInstr) and i.strict for i in _instrs(text_env.env.instrs))

    def next_action(self) -> ExpertAction:
        env = self.text.env
        while self.next_key < len(self.keys) and self._done(self.keys[self.next_key]):
            self.next_key += 1
        if self.next_key >= len(self.keys):
            return ExpertAction("I do not know how to finish this mission; I check what I can do.",
                                "check available actions")
        key = self.keys[self.next_key]
        actions = self.text.actions
        front = tuple(int(v) for v in env.front_pos)
        goal = key.why[0].upper() + key.why[1:]
        if key.kind == "drop" and key.free_hands and "drop" in actions and self._harmless_drop(front):
            return ExpertAction(f"{goal}. The cell in front of me is free and blocks no way, so I drop it here.",
                                "drop")
        if key.kind == "pickup":
            key.front = self._locate(key)
        if key.kind == "drop" and env.grid.get(*key.front) is not None:
            key.front = self._drop_cell(key)  # the bot's cell is taken (often by an earlier drop of ours)
        target = self._thing_at(key.front)
        if key.kind == "pickup" and target and f"pick up {target.name}" in actions:
            return ExpertAction(f"{goal}. It is {target.where()}, so I pick it up.", f"pick up {target.name}")
        if key.kind == "toggle" and target and target.type == "door" and not self.strict_open:
            through = f"toggle and go through {target.name}"
            if through in actions:
                return ExpertAction(f"{goal}. It is {target.where()}, so I open it and go through.", through)
        if front == key.front and key.kind in ("drop", "toggle") and key.kind in actions:
            verb = "put it down here" if key.kind == "drop" else "toggle it"
            return ExpertAction(f"{goal}. It is right in front of me, so I {verb}.", key.kind)
        if front == key.front and self._skips < len(self.keys):
            # facing the cell and still unable to act: turning away and back would repeat forever
            self._skips += 1
            self.next_key += 1
            return self.next_action()
        return self._navigate(key, goal, target)

    def _done(self, key: KeyAction) -> bool:
        """Whether the real episode already did ``key`` (checked on the cell it acts on, so that a
        skipped step elsewhere does not hide it)."""
        env = self.text.env
        if key.final or progress(env.instrs) != key.progress_after:
            return False
        cell = env.grid.get(*key.front)
        if key.kind == "pickup":
            return _name(env.carrying) == key.obj if env.carrying else False
        if key.kind == "drop":
            if key.free_hands:
                return env.carrying is None or _name(env.carrying) != key.obj
            return cell is not None and _name(cell) == key.obj
        if key.kind == "toggle":
            return cell is None or (cell.type == "door" and cell.is_open) or _name(cell) != key.obj
        return key.progress_after != ()

    def _locate(self, key: KeyAction) -> tuple[int, int]:
        """Where the object to pick up lies now (it may have been put down elsewhere than the bot did)."""
        env = self.text.env
        if _name(env.grid.get(*key.front)) == key.obj:
            return key.front
        ax, ay = int(env.agent_pos[0]), int(env.agent_pos[1])
        spots = [(abs(x - ax) + abs(y - ay), (x, y)) for x in range(env.width) for y in range(env.height)
                 if _name(env.grid.get(x, y)) == key.obj]
        return min(spots)[1] if spots else key.front

    def _drop_cell(self, key: KeyAction) -> tuple[int, int]:
        """The nearest reachable empty cell that serves a drop whose cell is taken: for a put-next one, a
        cell beside the object to put it next to; otherwise a harmless one (see :meth:`_harmless_drop`)."""
        env = self.text.env
        beside = self._put_next_cells()
        fits = beside.__contains__ if beside is not None and not key.free_hands else self._harmless_drop
        agent = (int(env.agent_pos[0]), int(env.agent_pos[1]))
        reach = self._reach()
        best = None
        for (x, y, d), steps in reach.items():
            dx, dy = DIR_TO_VEC[d]
            cell = (x + dx, y + dy)
            if cell == agent or not (0 <= cell[0] < env.width and 0 <= cell[1] < env.height):
                continue
            if env.grid.get(*cell) is None and (best is None or steps < best[0]) and fits(cell):
                best = (steps, cell)
        return best[1] if best else key.front

    def _put_next_cells(self) -> set[tuple[int, int]] | None:
        """Cells beside the fixed object of a put-next instruction whose object the agent carries."""
        env = self.text.env
        for instr in _instrs(env.instrs):
            if isinstance(instr, PutNextInstr) and any(o is env.carrying for o in instr.desc_move.obj_set):
                return {(x + dx, y + dy) for x, y in instr.desc_fixed.obj_poss
                        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))}
        return None

    def _harmless_drop(self, cell: tuple[int, int]) -> bool:
        """An empty cell whose neighbourhood stays connected with an object in it, and not by a door."""
        env = self.text.env
        if env.grid.get(*cell) is not None:
            return False
        x, y = cell
        ring = [(-1, -1), (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0)]
        agent = (int(env.agent_pos[0]), int(env.agent_pos[1]))
        free = []
        for dx, dy in ring:
            near = env.grid.get(x + dx, y + dy)
            if near is not None and near.type == "door":
                return False
            free.append((x + dx, y + dy) == agent or near is None)
        changes = sum(free[i] != free[(i + 1) % 8] for i in range(8))
        objects_cut = any(not free[i] and env.grid.get(x + ring[i][0], y + ring[i][1]).type != "wall"
                          and not free[(i + 1) % 8] and not free[i - 1] for i in range(8))
        return changes <= 2 and not objects_cut

    def _thing_at(self, pos):
        for thing in self.text.view.things:
            if thing.pos == tuple(pos):
                return thing
        return None

    def _navigate(self, key: KeyAction, goal: str, target) -> ExpertAction:
        env = self.text.env
        distance = self._distances(key.front)
        here = (int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))
        best = None
        for name, plan in self.text.actions.items():
            if not name.startswith(("go to", "go through", "toggle and go through", "move forward", "turn")):
                continue
            if name.startswith("toggle and") and self.strict_open:
                continue  # opening the wrong door fails a strict "open" mission
            score = distance.get(end_pose(here[:2], here[2], plan), 10**6)
            if best is None or (score, len(plan)) < best[0]:
                best = ((score, len(plan)), name)
        current = distance.get(here, 10**6)
        if best is None or best[0][0] >= current:
            name = self._low_level_move(distance, here)
        else:
            name = best[1]
        if target is not None:
            reason = f"{goal}. The {target.name} is {target.where()}"
        else:
            reason = f"{goal}. It is not in sight yet"
        if name.startswith("go to") and target is not None and name == f"go to {target.name}":
            return ExpertAction(f"{reason}, so I go to it.", name)
        return ExpertAction(f"{reason}; I {name} to get closer.", name)

    def _low_level_move(self, distance, here) -> str:
        env = self.text.env
        x, y, d = here
        dx, dy = DIR_TO_VEC[d]
        current = distance.get(here, 10**6)
        ahead = env.grid.get(x + dx, y + dy)
        if distance.get((x + dx, y + dy, d), 10**6) < current:
            if "move forward" in self.text.actions:
                return "move forward"
            if ahead is not None and ahead.type == "door" and "toggle" in self.text.actions:
                return "toggle"
        left, right = (x, y, (d - 1) % 4), (x, y, (d + 1) % 4)
        return "turn left" if distance.get(left, 10**6) <= distance.get(right, 10**6) else "turn right"

    def _standable(self, x: int, y: int) -> bool:
        """Whether the agent can stand on ``(x, y)`` (closed doors count; locked ones with their key)."""
        env = self.text.env
        if not (0 <= x < env.width and 0 <= y < env.height):
            return False
        if (x, y) == (int(env.agent_pos[0]), int(env.agent_pos[1])):
            return True
        cell = env.grid.get(x, y)
        if passable(cell):
            return True
        if cell.type != "door":
            return False
        carrying = env.carrying
        return not cell.is_locked or (carrying is not None and carrying.type == "key"
                                      and carrying.color == cell.color)

    def _reach(self) -> dict[tuple[int, int, int], int]:
        """Low-level steps from the agent's pose to every pose, over the true grid."""
        env = self.text.env
        return self._pose_steps([(int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))])

    def _distances(self, target: tuple[int, int]) -> dict[tuple[int, int, int], int]:
        """Low-level steps from every pose to one facing ``target``, over the true grid (closed doors
        count as passable; locked ones only with their key in hand)."""
        tx, ty = target
        facing = [(tx - dx, ty - dy, d) for d, (dx, dy) in enumerate(DIR_TO_VEC)]
        return self._pose_steps([pose for pose in facing if self._standable(pose[0], pose[1])], backward=True)

    def _pose_steps(
        self, starts: list[tuple[int, int, int]], backward: bool = False
    ) -> dict[tuple[int, int, int], int]:
        """Breadth-first low-level steps (turn left or right, or forward onto a standable cell) from
        ``starts`` to every pose; ``backward`` counts the steps from every pose to ``starts`` instead."""
        sign = -1 if backward else 1  # turning is its own reverse; a step forward reverses to one back
        steps = dict.fromkeys(starts, 0)
        queue = deque(starts)
        while queue:
            x, y, d = queue.popleft()
            dx, dy = DIR_TO_VEC[d]
            nexts = [(x, y, (d + 1) % 4), (x, y, (d - 1) % 4)]
            if self._standable(x + sign * dx, y + sign * dy):
                nexts.append((x + sign * dx, y + sign * dy, d))
            for pose in nexts:
                if pose not in steps:
                    steps[pose] = steps[(x, y, d)] + 1
                    queue.append(pose)
        return steps

