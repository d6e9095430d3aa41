"""``sciworld_agentgym``: ScienceWorld with AgentGym's own task ids.

AgentGym numbers the ``(task, variation)`` pairs **task after task**: the tasks in ``tasks.json`` order
(less the 7 task ids it leaves out, as :mod:`.tasks` does), and each task's variations in order 0, 1, 2, ...
So id 0 is boil variation 0, id 29 boil variation 29, id 30 melt variation 0, and so on to 4,638.  This
project's ``sciworld`` lays the same 4,639 pairs out by ScienceWorld's variation splits instead (see
:mod:`.tasks`), so an AgentGym id such as ``sciworld_606`` names another task there.  Here every id names
AgentGym's task: AgentEval's test items, AgentTraj's trajectories and the paper's figures all mean the same
tasks as this env's ``data_idx``.

The splits are AgentGym's published item lists (:mod:`.agentgym_ids`): ``test`` the 200 AgentEval items,
``train`` the 2,120 AgentTraj items less the 61 that are also AgentEval test items.  Any id 0..4,638 plays.
The variation counts are ScienceWorld's (the same in ``scienceworld`` 1.1.3, AgentGym's time, and 1.2.3).
"""

from __future__ import annotations

from functools import cache
from typing import ClassVar

from agentenv.env import TaskRange

from .agentgym_ids import AGENTEVAL_TEST, AGENTTRAJ_TRAIN
from .env import SciWorldEnv
from .tasks import TASK_TYPES, Task, TaskType


def _block(task_type: TaskType, variation: int) -> str:
    """ScienceWorld's split of a variation: ``train``, ``dev`` or ``test``."""
    return next(block for block in ("train", "dev", "test") if variation in getattr(task_type, block))


@cache
def index() -> tuple[tuple[TaskType, int], ...]:
    """Every ``(task type, variation)`` in AgentGym's order (4,639 entries)."""
    return tuple((t, v) for t in TASK_TYPES for v in range(t.variations))


def task_at(data_idx: int) -> Task:
    """The task AgentGym's id ``data_idx`` names (an IndexError outside ``0 .. 4638``)."""
    entries = index()
    if not 0 <= data_idx < len(entries):
        raise IndexError(f"sciworld_agentgym task index {data_idx} is outside 0..{len(entries) - 1}")
    task_type, variation = entries[data_idx]
    return Task(data_idx, task_type.task_id, task_type.name, variation, _block(task_type, variation))


def data_idx_of(task_name: str, variation: int) -> int:
    """AgentGym's id of a ``(task name, variation)`` pair (a KeyError for an excluded or unknown one)."""
    for i, (t, v) in enumerate(index()):
        if t.name == task_name and v == variation:
            return i
    raise KeyError(f"({task_name!r}, {variation}) is not in AgentGym's sciworld index")


def _listed(ids: frozenset[int]) -> TaskRange:
    """The ids of a published list as a split: its range less every id not listed."""
    start, stop = min(ids), max(ids) + 1
    return TaskRange(start, stop, (i for i in range(start, stop) if i not in ids))


class SciWorldAgentGymEnv(SciWorldEnv):
    """ScienceWorld whose ``data_idx`` is AgentGym's id; everything else is ``sciworld``'s."""

    name: ClassVar[str] = "sciworld_agentgym"
    #: AgentEval's test items, and AgentTraj's training items that are not test items
    splits: ClassVar[dict[str, range | TaskRange]] = {
        "test": _listed(frozenset(AGENTEVAL_TEST)),
        "train": _listed(frozenset(AGENTTRAJ_TRAIN) - frozenset(AGENTEVAL_TEST)),
    }
    #: its own port, so that it runs beside ``sciworld`` and answers AgentGym's clients at the root
    port: ClassVar[int] = 36014
    client: ClassVar[str | None] = None

    @classmethod
    def task_of(cls, data_idx: int) -> Task:
        return task_at(data_idx)

    @classmethod
    def serves(cls, data_idx: int) -> bool:
        """Every id AgentGym serves: 0 .. 4,638, listed in a split or not."""
        return 0 <= data_idx < len(index())

    @classmethod
    def served_beyond_splits(cls) -> str:
        return f"every id up to {len(index()) - 1}"
