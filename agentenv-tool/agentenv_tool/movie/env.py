"""Movie: answer questions about films and the people who made them with film-database tools."""

from __future__ import annotations

from typing import Any, ClassVar

from ..base import Task, ToolBackend, ToolEnv, instruction_text
from ..tools import Toolbox
from .backend import MovieBackend, clean
from .tasks import movie_task
from .world import film_database

INTRO = (
    "You are a movie assistant. Answer the user's question with the film-database tools: search movies and "
    "people by name to get their ids, then look up details, cast, crew, companies, countries, keywords, "
    "alternative titles, translations and people's details and external ids."
)


class MovieEnv(ToolEnv):
    name: ClassVar[str] = "movie"
    train_size: ClassVar[int] = 240
    test_size: ClassVar[int] = 60
    splits: ClassVar[dict[str, range]] = ToolEnv.splits_for("movie", 240, 60)
    max_rounds: ClassVar[int] = 12  # AgentGym's evaluation setting; the longest plan has 5 calls
    toolbox: ClassVar[Toolbox] = Toolbox.of(MovieBackend)
    task_text: ClassVar[str] = instruction_text(INTRO, toolbox)

    @classmethod
    def generate(cls, idx: int) -> Task:
        return movie_task(idx)

    @classmethod
    def warm(cls) -> None:
        film_database()

    def open(self, task: Task) -> ToolBackend:
        return MovieBackend(film_database())

    def clean(self, tool_name: str, result: Any) -> Any:
        return clean(result)
