"""The TODO tools: AgentGym's (Todoist's) names, arguments and answer shapes over one episode's store."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal, Union

from pydantic import Field, StrictBool

from ..base import ToolBackend
from ..tools import Day, Id, ToolError, parse_day, tool
from .store import Project, TodoStore, TodoTask

Favourite = Annotated[Union[StrictBool, Literal["True", "False", "true", "false"]],  # noqa: UP007
                      Field(json_schema_extra={"label": "'True' | 'False'"})]


class TodoBackend(ToolBackend):
    """A user's to-do store, their date and city."""

    def __init__(self, store: TodoStore, today: date, location: str) -> None:
        self.store = store
        self.today = today
        self.location = location

    def _project(self, project_id: str) -> Project:
        found = next((p for p in self.store.projects if p.id == str(project_id).strip()), None)
        if found is None:
            raise ToolError(f"Project {str(project_id)[:40]} does not exist; get_projects lists the projects' ids.")
        return found

    def _task(self, task_id: str) -> TodoTask:
        found = next((t for t in self.store.open_tasks() if t.id == str(task_id).strip()), None)
        if found is None:
            raise ToolError(f"Task {str(task_id)[:40]} does not exist; get_tasks lists a project's tasks and ids.")
        return found

    @tool("Get the user's current date.", "the date, YYYY-MM-DD.")
    def get_user_current_date(self) -> str:
        return self.today.isoformat()

    @tool("Get the user's current city.", "the city's name.")
    def get_user_current_location(self) -> str:
        return self.location

    @tool("Get all projects in the account.", "[{id, order, color, name, is_favorite}].")
    def get_projects(self) -> list[dict[str, Any]]:
        return [p.shown() for p in self.store.projects]

    @tool("Update a project: mark it as favourite or not.", "{message, project}.")
    def update_project(self, project_id: Id, is_favorite: Favourite) -> dict[str, Any]:
        project = self._project(project_id)
        project.is_favorite = is_favorite is True or str(is_favorite).lower() == "true"
        return {"message": "Update the project successfully.", "project": project.shown()}

    @tool("Get all open tasks of a project.", "[{id, order, content, is_completed, priority (1 normal .. 4 urgent), "
          "due_date}].")
    def get_tasks(self, project_id: Id) -> list[dict[str, Any]]:
        project = self._project(project_id)
        return [t.shown() for t in self.store.open_tasks(project.id)]

    @tool("Get the description of a task (its place and tips).", "{id, content, description}.")
    def get_task_description(self, task_id: Id) -> dict[str, Any]:
        task = self._task(task_id)
        return {"id": task.id, "content": task.content, "description": task.description}

    @tool("Get the duration of a task.", "{id, content, duration: 'amount(unit)'}.")
    def get_task_duration(self, task_id: Id) -> dict[str, Any]:
        task = self._task(task_id)
        return {"id": task.id, "content": task.content, "duration": f"{task.duration}({task.duration_unit})"}

    @tool("Mark a task as completed.", "{message, task}.")
    def complete_task(self, task_id: Id) -> dict[str, Any]:
        task = self._task(task_id)
        task.is_completed = True
        shown = task.shown()
        del shown["is_completed"]
        return {"message": "Complete task successfully.", "task": shown}

    @tool("Update a task's due date.", "{message, task}.")
    def update_task(self, task_id: Id, due_date: Day):
        task = self._task(task_id)
        task.due_date = parse_day(due_date, "due_date").isoformat()
        return {"message": "Update the task successfully", "task": task.shown()}

    @tool("Delete a task.", "{message, task}.")
    def delete_task(self, task_id: Id) -> dict[str, Any]:
        task = self._task(task_id)
        task.deleted = True
        return {"message": "Delete the task successfully.", "task": task.shown()}


def clean(result: Any) -> Any:
    """A result as AgentBoard's TODO progress records it: without ids."""
    if isinstance(result, list):
        return [{k: v for k, v in item.items() if k != "id"} if isinstance(item, dict) else item for item in result]
    if isinstance(result, dict):
        return {k: ({kk: vv for kk, vv in v.items() if kk != "id"} if k in ("task", "project") else v)
                for k, v in result.items() if k != "id"}
    return result
