"""Academia: answer questions about papers and authors with tools over a citation graph and a co-author graph."""

from __future__ import annotations

from typing import ClassVar

from ..base import Task, ToolBackend, ToolEnv, instruction_text
from ..tools import Toolbox
from .backend import AcademiaBackend
from .tasks import academia_task
from .world import academia

INTRO = (
    "You are an academic search assistant. Answer the user's question with tools over two graphs: PaperNet "
    "(papers, keyed by title, each linked to the papers citing it) and AuthorNet (authors, keyed by name, each "
    "linked to their collaborators). Load a graph before you query it."
)


class AcademiaEnv(ToolEnv):
    name: ClassVar[str] = "academia"
    train_size: ClassVar[int] = 160
    test_size: ClassVar[int] = 40
    splits: ClassVar[dict[str, range]] = ToolEnv.splits_for("academia", 160, 40)
    max_rounds: ClassVar[int] = 12  # AgentGym's evaluation setting; the longest plan has 11 calls
    toolbox: ClassVar[Toolbox] = Toolbox.of(AcademiaBackend)
    task_text: ClassVar[str] = instruction_text(INTRO, toolbox)

    @classmethod
    def generate(cls, idx: int) -> Task:
        return academia_task(idx)

    @classmethod
    def warm(cls) -> None:
        academia()

    def open(self, task: Task) -> ToolBackend:
        return AcademiaBackend(academia())
