"""Task records in AgentGym's format, and the original task files a user points the servers at.

A record (one JSON line of AgentGym's ``Toolusage/data/<env>.jsonl``)::

    {"id", "goal", "subgoals", "additional_info": {"answer", "init_config", "goal_type", "tool"}, "difficulty"}

(Academia's and Sheet's lines also carry ``"task"``.)  The tasks generated here are records of the same shape.

Original files load when ``AGENTENV_<ENV>_TASKS`` names one (e.g. ``AGENTENV_WEATHER_TASKS=weather.jsonl``) or
``AGENTENV_TOOL_DATA`` names a folder holding ``<env>.jsonl`` (AgentGym's ``Toolusage/data``).  Their tasks are
served from index :data:`ORIGINAL_BASE` on, as the split ``agentgym``.  Their gold answers came from live
services (open-meteo, TMDB, Todoist, Google Sheets) and do not match the local worlds.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: the first task index of a loaded original file
ORIGINAL_BASE = 100_000


class AdditionalInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    answer: Any = None
    init_config: dict[str, Any] | None = None
    goal_type: int = 0
    tool: str = ""


class TaskRecord(BaseModel):
    """One goal with its gold answer and subgoals, in AgentGym's field names."""

    model_config = ConfigDict(extra="allow")

    id: int
    goal: str
    subgoals: Any = Field(default_factory=list)
    additional_info: AdditionalInfo = Field(default_factory=AdditionalInfo)
    difficulty: str = "hard"

    @property
    def answer(self) -> Any:
        return self.additional_info.answer

    @property
    def init_config(self) -> dict[str, Any]:
        return self.additional_info.init_config or {}

    def to_json(self) -> str:
        return json.dumps(self.model_dump(exclude_none=False), ensure_ascii=False)


class RecordFileError(ValueError):
    """A task file that cannot be read as records; the message names the file and line."""


def load_records(path: str | Path) -> list[TaskRecord]:
    """The records of a JSON-lines file (blank lines skipped); a bad line is an error naming it."""
    records = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                records.append(TaskRecord.model_validate_json(line))
            except ValidationError as exc:
                problem = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in problem["loc"]) or "line"
                raise RecordFileError(f"{path}, line {number}: {where}: {problem['msg']}") from None
    return records


def original_file(env: str) -> Path | None:
    """The original task file the environment variables name for ``env``, if any."""
    named = os.environ.get(f"AGENTENV_{env.upper()}_TASKS")
    if named:
        return Path(named)
    folder = os.environ.get("AGENTENV_TOOL_DATA")
    if folder and (Path(folder) / f"{env}.jsonl").is_file():
        return Path(folder) / f"{env}.jsonl"
    return None


@cache
def original_records(env: str) -> tuple[TaskRecord, ...]:
    """The loaded original records of ``env`` (none when no file is named)."""
    path = original_file(env)
    return tuple(load_records(path)) if path else ()
