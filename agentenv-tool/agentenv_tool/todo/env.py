"""TODO: answer questions about a to-do list and change it (complete, reschedule, delete tasks; favourite projects)."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any, ClassVar

from agentenv.env import Wire

from ..base import TOOL_WIRE, Task, ToolBackend, ToolEnv, gold_answer, instruction_text
from ..matching import same_answer
from ..tools import Toolbox
from .backend import TodoBackend, clean
from .store import TodoStore
from .tasks import todo_task

INTRO = (
    "You are a to-do list assistant. Answer the user's question about their projects and tasks, or carry out "
    "what they ask (complete, reschedule or delete tasks, mark projects as favourites) with the to-do tools. "
    "Get a project's id from get_projects and a task's id from get_tasks. When the question is answered or the "
    'operations are done, call finish with the answer, or with "done" after operations.'
)


class TodoEnv(ToolEnv):
    name: ClassVar[str] = "todo"
    train_size: ClassVar[int] = 160
    test_size: ClassVar[int] = 40
    splits: ClassVar[dict[str, range]] = ToolEnv.splits_for("todo", 160, 40)
    max_rounds: ClassVar[int] = 15  # AgentGym's evaluation setting; the longest plan has 7 calls
    toolbox: ClassVar[Toolbox] = Toolbox.of(TodoBackend)
    task_text: ClassVar[str] = instruction_text(INTRO, toolbox)
    #: AgentGym's TODO server ends an episode with a reward of 1 or 0: success, not the progress
    wire: ClassVar[Wire] = dataclasses.replace(TOOL_WIRE, step_reward="score_then_success")

    @classmethod
    def generate(cls, idx: int) -> Task:
        return todo_task(idx)

    def open(self, task: Task) -> ToolBackend:
        config = task.record.init_config
        today = date.fromisoformat(config.get("current_date") or "2015-05-31")
        store = TodoStore.seeded(config.get("store_seed") or f"agentgym:{task.record.id}", today)
        return TodoBackend(store, today, config.get("current_location") or "New York")

    def clean(self, tool_name: str, result: Any) -> Any:
        return clean(result)

    def judge(self, answer: Any) -> bool:
        """The answer is right and the store is in the target state (unchanged, for a question)."""
        target = self.task.record.answer
        state_ok = not isinstance(target, dict) or self.backend.store.state() == target
        return state_ok and same_answer(answer, gold_answer(self.task.record))
