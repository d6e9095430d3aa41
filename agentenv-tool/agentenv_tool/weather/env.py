"""Weather: answer questions about past, present and forecast weather of real cities with weather tools."""

from __future__ import annotations

from datetime import date
from typing import Any, ClassVar

from ..base import Task, ToolBackend, ToolEnv, instruction_text
from ..tools import Toolbox
from . import world
from .backend import WeatherBackend, clean
from .tasks import weather_task

INTRO = (
    "You are a weather assistant. Answer the user's question about the weather with the weather tools: they "
    "know the user's current date and city, find places' coordinates, and give daily temperature, rain, snow "
    "and air quality for the days before today (history), today (current) and the days after it (forecast)."
)


class WeatherEnv(ToolEnv):
    name: ClassVar[str] = "weather"
    train_size: ClassVar[int] = 400
    test_size: ClassVar[int] = 100
    splits: ClassVar[dict[str, range]] = ToolEnv.splits_for("weather", 400, 100)
    max_rounds: ClassVar[int] = 10  # AgentGym's evaluation setting; the longest plan has 7 calls
    places: ClassVar[bool] = True
    toolbox: ClassVar[Toolbox] = Toolbox.of(WeatherBackend)
    task_text: ClassVar[str] = instruction_text(INTRO, toolbox)

    @classmethod
    def generate(cls, idx: int) -> Task:
        return weather_task(idx)

    @classmethod
    def warm(cls) -> None:
        world.geocode("")  # builds the index of every city by name

    def open(self, task: Task) -> ToolBackend:
        config = task.record.init_config
        today = date.fromisoformat(config.get("current_date") or "2023-06-15")
        return WeatherBackend(today, config.get("current_location") or "New York")

    def clean(self, tool_name: str, result: Any) -> Any:
        return clean(result)
