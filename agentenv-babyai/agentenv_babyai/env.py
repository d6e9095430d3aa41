"""BabyAI as text: minigrid's BabyAI levels, described in words, played with high-level actions.

Each observation names what the agent sees (objects and doors relative to it, the nearest wall in
three directions, what it carries) and lists the actions available now.  High-level actions
(``go to``, ``pick up``, ``go through``, ``toggle and go through``) run as several minigrid steps along a
path planned over the cells seen so far.  Reward and score are minigrid's: ``1 - 0.9 * steps /
max_steps`` when the mission is completed, else 0.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import gymnasium as gym
import minigrid  # noqa: F401  (registers the BabyAI-* ids)
import numpy as np
from minigrid.core.actions import Actions
from minigrid.envs.babyai.core import roomgrid_level

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, TaskRange, Wire

from .duplicates import TRAIN_TEST_DUPLICATES
from .levels import MAX_TASKS, level_of, short_name
from .render import png_bytes
from .world import (
    FORWARD_IF_FREE,
    PICKABLE,
    Paths,
    Thing,
    View,
    facing,
    mark_seen,
    passable,
    scan,
    standing_on,
)

log = logging.getLogger(__name__)
# minigrid prints every rejected level sample ("Sampling rejected: unreachable object ...") to stdout,
# where it breaks up evaluation progress bars; a module global named print shadows the builtin there, so
# the lines go to the debug log instead (thread-safe, unlike redirecting sys.stdout around reset)
roomgrid_level.print = lambda *args: log.debug(" ".join(map(str, args)))

TASK_TEXT = """\
You are an exploration master who wants to finish every goal you are given. Every round I will give \
you an observation, and you have to respond with an action and your thought based on the observation \
to finish the given task. You are placed in a room and you need to accomplish the given goal with \
actions.

You can use the following actions:
- turn right
- turn left
- move forward
- go to <obj> <id>
- pick up <obj> <id>
- go through <door> <id>: <door> must be an open door.
- toggle and go through <door> <id>: <door> can be a closed door or a locked door. If you want to open \
a locked door, you need to carry a key that is of the same color as the locked door.
- toggle: there is a closed or locked door right in front of you and you can toggle it.
- drop: drop the object you carry in the cell right in front of you.
- check available actions

Objects are named by colour, type and a number, e.g. "red ball 1" or "blue door 2"; the available \
actions are listed in every observation."""

_SPACES = re.compile(r"\s+")
_NAMED = re.compile(
    r"^(go to|pick up|go through|toggle and go through) (?:the |a )?([a-z]+) (?:(open|closed|locked) )?"
    r"([a-z]+)(?: (\d{1,9}))?$"  # bounded: int() refuses numbers over 4,300 digits
)


def normalise_action(text: str, things: Sequence[Thing] = ()) -> str:
    """Lower-case, single spaces, no quotes / brackets / final full stop; AgentGym's ``pickup X`` and
    door names with a state become this env's spelling.  AgentGym numbers doors per colour *and* state, so
    ``yellow open door 1`` is the first open yellow door among ``things`` (the doors in view), named here as
    that door is (``yellow door 2`` when a closed one is nearer)."""
    text = _SPACES.sub(" ", (text or "").lower().strip().strip("\"'`[]").strip().rstrip(".").strip())
    text = re.sub(r"^pickup\b", "pick up", text)
    match = _NAMED.match(text)
    if match:
        verb, color, state, type_, number = match.groups()
        number = int(number or 1)
        if state:  # a door of that state in view, else the name stays unknown (not another door's)
            same = [t for t in things if (t.color, t.type, t.state) == (color, type_, state)]
            if not 1 <= number <= len(same):  # door 0 is no door (same[-1] was the last one)
                return f"{verb} {color} {state} {type_} {number}"
            number = same[number - 1].number
        text = f"{verb} {color} {type_} {number}"
    return text


class BabyAIEnv(EpisodicEnv):
    """One BabyAI episode at a time (a minigrid env made once per level, re-seeded on reset)."""

    name: ClassVar[str] = "babyai"
    #: test: the first 400 tasks (10 seeds of every level); train: the next 20,000 (seeds 10..509) less the
    #: 51 whose start state repeats a test task's (they still play, as every index does)
    splits: ClassVar[dict[str, range | TaskRange]] = {
        "test": range(0, 400),
        "train": TaskRange(400, 20400, TRAIN_TEST_DUPLICATES),
    }
    #: minigrid pays ``1 - 0.9 * steps / max_steps`` (at least 0.1) for a completed mission and 0
    #: otherwise, so any score above 0.05 is a success
    success_score: ClassVar[float] = 0.05
    #: AgentEvol keeps BabyAI trajectories with reward > 0 (AgentGym's setting)
    keep_threshold: ClassVar[float] = 0.0
    max_rounds: ClassVar[int] = 20  # AgentGym's evaluation setting
    #: long missions (BossLevel, UnlockToUnlock ...) take the expert up to ~50 text actions
    expert_max_rounds: ClassVar[int | None] = 64
    #: text actions per episode: a blocked move or an invalid action takes no minigrid step, so without it an
    #: agent with no round limit of its own (an OpenEnv or RL client) never reached an end
    max_steps: ClassVar[int | None] = 128
    #: the expert's first call on a task whose bot gives up runs its 20,000 bounded searches: 25-30 s on a
    #: quiet 2-core machine (test task 246, train 566 and 1406 of 2,400 measured), ~50 s under load, which
    #: came within the kit's 60 s and lost the session; no other BabyAI call takes a second
    call_deadline_s: ClassVar[float] = 180.0
    #: steps and resets are pure Python under the GIL, a fraction of a millisecond (resets: median 1.3 ms, at
    #: most 17 ms over the 400 test tasks): run on the event loop, as a worker thread gains nothing for them and
    #: cost ~0.45 ms of CPU a request at 64 clients (about half the steps/s); the expert and the render query
    #: still run in a thread (the kit never runs them inline)
    blocking: ClassVar[bool] = False
    task_text: ClassVar[str] = TASK_TEXT
    port: ClassVar[int] = 36002
    client: ClassVar[str] = "agentenv_babyai.client:BabyAIClient"
    wire: ClassVar[Wire] = Wire(
        queries={"render": "render_png"},
        shapes={
            "create": ("id",),
            "reset": ("observation", "reward", "score", "deleted", "done"),
            "step": ("observation", "reward", "score", "done"),
        },
    )

    def __init__(self) -> None:
        super().__init__()
        self._envs: dict[str, gym.Env] = {}
        self.env = None  # the unwrapped minigrid env of the current task
        self.level = ""
        self.seen = np.zeros((0, 0), dtype=bool)
        self.view: View | None = None
        self.actions: dict[str, list[int]] = {}
        self.mission = ""
        self._expert = None
        self._cut = ""

    # --- tasks ------------------------------------------------------------------------------------
    @classmethod
    def serves(cls, data_idx: int) -> bool:
        """Every index of AgentGym's mapping up to seed :data:`~.levels.MAX_SEED` (the splits' seeds and
        far beyond: new held-out sets), not only those inside a split."""
        return 0 <= data_idx < MAX_TASKS

    @classmethod
    def served_beyond_splits(cls) -> str:
        return f"every index up to {MAX_TASKS - 1}"

    @classmethod
    def level_of(cls, data_idx: int) -> tuple[str, int]:
        """``(level id, seed)`` of task ``data_idx``."""
        return level_of(data_idx)

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """The level's short name, known from the index alone (so ``--sample`` stratifies by level)."""
        return short_name(cls.level_of(data_idx)[0])

    def start(self, data_idx: int) -> str:
        level, seed = self.level_of(data_idx)
        self.env = self._level_at(level, seed)
        # minigrid works out its image observation on every step (the most costly part of it); nothing here
        # reads it: the text comes from scan().  Its reset has run, so its env checker has seen one.
        self.env.gen_obs = _no_image
        self.level = level
        self.seen = np.zeros((self.env.width, self.env.height), dtype=bool)
        self.mission = self.env.mission
        self._expert = None
        self._look()
        return f"Your goal: {self.goal()}\n{self._describe()}"

    def _level_at(self, level: str, seed: int):
        """The (unwrapped) minigrid env of ``level``, reset to ``seed``: one env per level, re-seeded."""
        if level not in self._envs:
            self._envs[level] = gym.make(level)
        wrapped = self._envs[level]
        wrapped.reset(seed=seed)
        return wrapped.unwrapped

    def goal(self) -> str:
        """The goal line's text: the mission."""
        return self.mission

    # --- acting -------------------------------------------------------------------------------------
    def act(self, action: str) -> StepResult:
        command = normalise_action(action, self.view.things if self.view else ())
        valid = command in self.actions
        reward, terminated, truncated = 0.0, False, False
        if command == "check available actions":
            text = "You can take the following actions: " + ", ".join(self.actions) + "."
        elif command in self.actions:
            reward, terminated, truncated = self._run(self.actions[command])
            text = self._result(command)
            if terminated or truncated:
                if reward > 0:
                    text += " The task is completed."
                elif truncated:
                    text += " You ran out of steps: the task failed."
                else:
                    text += " The task failed."
        else:
            text = "Invalid action: " + self._why_not(command, action)
        info = {"action_is_valid": valid, "minigrid_steps": int(self.env.step_count)}
        # truncated: minigrid's own step budget ran out
        return StepResult(f"{text}\n{self._describe()}", reward, terminated, info=info, truncated=truncated)

    def _run(self, plan: list[int]) -> tuple[float, bool, bool]:
        reward, terminated, truncated = 0.0, False, False
        self._cut = ""  # why the plan stopped early: "blocked" (a step past a door) or "ended"
        for i, low in enumerate(plan):
            if i:  # every cell seen on the way counts as seen (the last pose's, by _look)
                mark_seen(self.env, self.seen)
            if low == FORWARD_IF_FREE:
                if not passable(self.env.grid.get(*self.env.front_pos)):
                    self._cut = "blocked"
                    break
                low = Actions.forward
            _, r, terminated, truncated, _ = self.env.step(low)
            reward += float(r)
            if terminated or truncated:
                self._cut = "ended" if i < len(plan) - 1 else ""
                break
        self._look()
        return reward, terminated, truncated

    def _result(self, command: str) -> str:
        if command.startswith(("turn", "move")):
            return f"You {command.replace('move', 'moved').replace('turn', 'turned')}."
        if command == "toggle":
            return "You toggled what is in front of you."
        if command == "drop":
            return "You dropped what you were carrying."
        if self._cut == "ended" and command.startswith(("go to", "pick up")):
            # the episode ended on the way (the mission done in passing, or out of steps)
            return f"You went towards the {command.removeprefix('go to ').removeprefix('pick up ')}."
        if command.startswith("pick up"):
            return f"You picked up the {command.removeprefix('pick up ').rsplit(' ', 1)[0]}."
        if command.startswith("go to"):
            return f"You went to the {command.removeprefix('go to ')}."
        if self._cut:
            return self._door_result(command)
        return f"You {command.replace('go through', 'went through').replace('toggle and', 'toggled and')}."

    def _door_result(self, command: str) -> str:
        """What a ``go through`` / ``toggle and go through`` that stopped short did."""
        env = self.env
        name = command.removeprefix("toggle and ").removeprefix("go through ")
        toggled = command.startswith("toggle")
        here = env.grid.get(*env.agent_pos)
        if self._cut == "ended":
            opened = toggled and any(
                cell is not None and cell.type == "door" and getattr(cell, "is_open", False)
                for cell in (env.grid.get(*env.front_pos), here)
            )
            return f"You opened the {name}." if opened else f"You went towards the {name}."
        front = env.grid.get(*env.front_pos)
        blocker = next((f"the {t.name}" for t in self.view.things if t.pos == tuple(env.front_pos)),
                       "a wall" if front is None or front.type == "wall" else f"a {front.color} {front.type}")
        if here is not None and here.type == "door":
            did = f"You opened the {name} and stand in its doorway" if toggled else \
                f"You stand in the doorway of the {name}"
            return f"{did}: {blocker} blocks the way beyond it."
        return f"You {'toggled' if toggled else 'went to'} the {name}, but {blocker} blocks the way."

    def _why_not(self, command: str, raw: str) -> str:
        match = _NAMED.match(command)
        if not command:
            return "the action is empty. Choose one of the available actions."
        if not match:
            return f'"{raw.strip()[:80]}" is not an action here. Choose one of the available actions.'
        verb, color, state, type_, number = match.groups()
        thing = self.view.find(color, type_, int(number or 1)) if self.view and not state else None
        if thing is None:
            named = f"{color} {state} {type_}" if state else f"{color} {type_}"
            return f"you cannot see a {named} {number or 1}. Choose one of the available actions."
        carrying = self.env.carrying
        if verb == "pick up" and thing.type not in PICKABLE:
            return f"you cannot pick up the {thing.name}."
        if verb == "pick up" and carrying is not None:
            return f"you cannot pick up the {thing.name}: you are already carrying a {carrying.color} {carrying.type}; drop it first."
        if verb.startswith(("go through", "toggle")) and thing.type != "door":
            return f"the {thing.name} is not a door."
        if verb == "go through" and thing.state != "open":
            return f"the {thing.name} is {thing.state}; toggle it first (toggle and go through)."
        if verb == "toggle and go through" and thing.state == "open":
            return f"the {thing.name} is already open; go through it."
        has_key = carrying is not None and carrying.type == "key" and carrying.color == thing.color
        if verb == "toggle and go through" and thing.state == "locked" and not has_key:
            return f"the {thing.name} is locked; you need to carry a {thing.color} key."
        if verb == "go to" and self.actions.get(command) is None and thing.ahead == 1 and not thing.right:
            return f"you are already facing the {thing.name}."
        return f"there is no path you know to the {thing.name}. Explore first."

    # --- views --------------------------------------------------------------------------------------
    def _look(self) -> None:
        """Refresh the view and the actions available from it."""
        env = self.env
        self.view = view = scan(env, self.seen)
        actions: dict[str, list[int]] = {"turn left": [Actions.left], "turn right": [Actions.right]}
        front = env.grid.get(*env.front_pos)
        if passable(front):
            actions["move forward"] = [Actions.forward]
        carrying = env.carrying
        paths = Paths(env, self.seen)
        for thing in view.things:
            to_face = paths.to(facing(thing.pos))
            if to_face is None:
                continue
            if to_face:
                actions[f"go to {thing.name}"] = to_face
            if thing.type in PICKABLE and carrying is None:
                actions[f"pick up {thing.name}"] = to_face + [Actions.pickup]
            if thing.type != "door":
                continue
            if thing.state == "open":
                onto = paths.to(standing_on(thing.pos))
                if onto is not None:
                    actions[f"go through {thing.name}"] = onto + [FORWARD_IF_FREE]
            elif thing.state == "closed" or (
                carrying is not None and carrying.type == "key" and carrying.color == thing.color
            ):
                actions[f"toggle and go through {thing.name}"] = to_face + [
                    Actions.toggle, FORWARD_IF_FREE, FORWARD_IF_FREE]
        if front is not None and (
            front.type == "box"
            or (front.type == "door" and (not front.is_locked or (
                carrying is not None and carrying.type == "key" and carrying.color == front.color)))
        ):
            actions["toggle"] = [Actions.toggle]
        if carrying is not None and front is None:
            actions["drop"] = [Actions.drop]
        actions["check available actions"] = []
        self.actions = actions

    def _describe(self) -> str:
        view, env = self.view, self.env
        lines = []
        if view.things:
            seen = []
            for t in view.things:
                state = f" ({t.state})" if t.state else ""
                seen.append(f"a {t.name}{state}, {t.where()}")
            lines.append("You see " + "; ".join(seen) + ".")
        else:
            lines.append("You see no objects.")
        if view.walls:
            parts = []
            for side in ("ahead", "left", "right"):
                if side in view.walls:
                    where = "ahead" if side == "ahead" else f"to your {side}"
                    parts.append(f"a {view.blockers[side]} {_n(view.walls[side])} {where}")
            lines.append("There is " + ", ".join(parts) + ".")
        carrying = env.carrying
        lines.append(f"You are carrying a {carrying.color} {carrying.type}." if carrying
                     else "You are not carrying anything.")
        lines.append("Available actions: [" + ", ".join(f'"{a}"' for a in self.actions) + "]")
        return "\n".join(lines)

    def available_actions(self) -> list[str]:
        return list(self.actions)

    def expert_action(self) -> ExpertAction:
        from .expert import Expert

        if self._expert is None:
            self._expert = Expert(self)
        return self._expert.next_action()

    def task_type(self) -> str:
        return short_name(self.level) if self.level else self.name

    def detail(self) -> dict[str, Any]:
        env = self.env
        return super().detail() | {
            "level": self.level,
            "seed": self.level_of(self.data_idx)[1] if self.data_idx is not None else None,
            "mission": self.mission,
            "goal": self.goal() if self.env else None,
            "agent_pos": [int(v) for v in env.agent_pos] if env else None,
            "agent_dir": int(env.agent_dir) if env else None,
            "carrying": f"{env.carrying.color} {env.carrying.type}" if env and env.carrying else None,
            "minigrid_steps": int(env.step_count) if env else 0,
            "max_minigrid_steps": int(env.max_steps) if env else 0,
        }

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        return {"deleted": False} if kind in ("create", "reset") else {}

    def render_png(self) -> bytes:
        """The whole grid as a PNG image (agent's view highlighted)."""
        if self.env is None:
            raise RuntimeError("reset first")
        return png_bytes(self.env.get_frame(highlight=True, tile_size=16))

    def close(self) -> None:
        for wrapped in list(self._envs.values()):  # a copy: a reset the server's deadline cut may still add one
            wrapped.close()
        self._envs.clear()
        self.env = None


def _no_image(*args: Any, **kwargs: Any) -> None:
    """Stands in for minigrid's ``gen_obs`` (see ``BabyAIEnv.start``)."""
    return None


def _n(distance: int) -> str:
    return "1 step" if distance == 1 else f"{distance} steps"
