"""``babyai_agentgym``: BabyAI whose task ids name AgentGym's own tasks, with AgentGym's goal lines.

The index mapping is AgentGym's and ``babyai``'s (level ``idx % 40``, seed ``idx // 40``), but AgentGym ran
minigrid 2.3 (``minigrid<2.5.0``), whose tasks differ from minigrid 3's in three ways; this env plays them
as minigrid 2.3 made them (every start state of 4,000 tasks, 40 levels x seeds 0..99, checked equal to
minigrid 2.3.1's by ``benchmarks/agentgym_ids.py``):

- **GoToObjS6**: AgentGym's ``BabyAI-GoToObjS6-v0`` was registered (a bug minigrid later fixed as ``-v1``)
  as GoToObj in a room of size 4: the level minigrid 3 registers as ``BabyAI-GoToObjS4-v0``.
- **SynthS5R2, SynthLoc, SynthSeq**: minigrid 2.3 kept the locked room of the previous sample when a new
  sample added none (minigrid 3 clears it), and AgentGym reset each task twice with its seed on a fresh
  env, so the second sample saw the first's locked room.  A few missions of these levels depend on it
  (1 seed in 100 each); :class:`_KeepsLockedRoom` restores the old rule and each task is made that way.
- **Goal lines**: AgentGym wrote the mission with every ``then`` and ``after you`` replaced by ``and``
  (``go to the red ball, then open a door`` -> ``go to the red ball, and open a door``); the mission
  itself, which the episode is judged by, is unchanged.

Everything else (observations, actions, rewards, the expert) is ``babyai``'s: AgentGym's own wording of
observations is not reproduced.  The splits are AgentGym's published item lists (:mod:`.agentgym_ids`):
``test`` the 90 AgentEval items, ``train`` the 810 AgentTraj items.  ``POST /render`` answers as AgentGym's
did: the picture as a ``data:image/png;base64,...`` string.
"""

from __future__ import annotations

import base64
import importlib
from typing import Any, ClassVar

import gymnasium as gym

from agentenv.env import TaskRange, Wire

from .agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN
from .env import BabyAIEnv
from .levels import LEVELS, NUM_LEVELS

#: AgentGym's level ids, in its order (``all_levels``, keys 1..40)
AGENTGYM_LEVELS: tuple[str, ...] = tuple(level.replace("GoToObjS6-v1", "GoToObjS6-v0") for level in LEVELS)
#: the minigrid 3 id that makes each AgentGym level the way minigrid 2.3 made it
MINIGRID_ID: dict[str, str] = {level: level for level in AGENTGYM_LEVELS} | {
    "BabyAI-GoToObjS6-v0": "BabyAI-GoToObjS4-v0",
}


def agentgym_goal(mission: str) -> str:
    """AgentGym's goal line for a mission: every ``then`` and ``after you`` becomes ``and``."""
    return mission.replace("then", "and").replace("after you", "and")


class _KeepsLockedRoom:
    """minigrid 2.3's rule for ``locked_room``: set once when the env is made, then only by a sample that
    adds a locked room; minigrid 3 also clears it before every sample, which is ignored here."""

    @property
    def locked_room(self) -> Any:
        return self.__dict__.get("_locked_room")

    @locked_room.setter
    def locked_room(self, room: Any) -> None:
        if room is not None or "_locked_room" not in self.__dict__:
            self.__dict__["_locked_room"] = room


def make_level(level: str) -> Any:
    """A new (unwrapped) minigrid env of AgentGym's ``level``, following minigrid 2.3's locked-room rule."""
    spec = gym.spec(MINIGRID_ID[level])
    module, _, name = str(spec.entry_point).partition(":")
    base = getattr(importlib.import_module(module), name)
    return type(base.__name__, (_KeepsLockedRoom, base), {})(**spec.kwargs)


def _listed(ids: tuple[int, ...]) -> TaskRange:
    """The ids of a published list as a split: its range less every id not listed."""
    start, stop, kept = min(ids), max(ids) + 1, frozenset(ids)
    return TaskRange(start, stop, (i for i in range(start, stop) if i not in kept))


class BabyAIAgentGymEnv(BabyAIEnv):
    """BabyAI with AgentGym's tasks and goal lines; everything else is ``babyai``'s."""

    name: ClassVar[str] = "babyai_agentgym"
    splits: ClassVar[dict[str, range | TaskRange]] = {
        "test": _listed(AGENTEVAL_TEST),
        "train": _listed(AGENTTRAJ_TRAIN),
    }
    #: its own port, so that it runs beside ``babyai`` and answers AgentGym's clients at the root
    port: ClassVar[int] = 36012
    client: ClassVar[str | None] = None
    wire: ClassVar[Wire] = Wire(
        queries={"render": "render_data_url"},
        shapes=BabyAIEnv.wire.shapes,
    )

    @classmethod
    def level_of(cls, data_idx: int) -> tuple[str, int]:
        if data_idx < 0:
            raise ValueError(f"data_idx must be >= 0, got {data_idx}")
        return AGENTGYM_LEVELS[data_idx % NUM_LEVELS], data_idx // NUM_LEVELS

    def _level_at(self, level: str, seed: int) -> Any:
        """As AgentGym made a task: a new env, reset twice with the seed (the second reset is the task)."""
        if self.env is not None:
            self.env.close()
        env = make_level(level)
        env.reset(seed=seed)
        env.reset(seed=seed)
        return env

    def goal(self) -> str:
        return agentgym_goal(self.mission)

    def render_data_url(self) -> str:
        """AgentGym's ``POST /render`` answer: the grid as a PNG ``data:`` URL."""
        return "data:image/png;base64," + base64.b64encode(self.render_png()).decode("ascii")

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
        super().close()
