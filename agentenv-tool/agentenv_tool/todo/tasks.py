"""TODO goals in the styles of AgentGym's: questions about the store and operations on it, with expert plans.

Each task seeds its own store (``init_config.store_seed``); the plan runs on a scratch copy, whose final
state is the target (``additional_info.answer``, AgentGym's place for it).  Operation goals are answered
``done``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from functools import lru_cache

from ..base import PlanBuilder, Task, task_rng
from ..records import AdditionalInfo, TaskRecord
from .backend import TodoBackend, clean
from .store import TodoStore, TodoTask

CITIES = ("New York", "London", "Toronto", "Sydney", "Berlin", "Madrid", "Tokyo", "Chicago")


class Goal:
    def __init__(self, rng: random.Random, store: TodoStore, today: date, city: str) -> None:
        self.rng, self.store, self.today = rng, store, today
        self.plan = PlanBuilder(TodoBackend(store, today, city), lambda _tool, result: clean(result))
        self.projects: list[dict] | None = None

    def task(self) -> TodoTask:
        return self.rng.choice(self.store.open_tasks())

    def project_name(self, task: TodoTask) -> str:
        return next(p.name for p in self.store.projects if p.id == task.project_id)

    def tasks_of(self, project_name: str, why: str) -> list[dict]:
        if self.projects is None:
            self.projects = self.plan.call(f"{why} Tasks are listed per project, so I first get the projects and "
                                           "their ids.", "get_projects")
        project = next(p for p in self.projects if p["name"] == project_name)
        return self.plan.call(f"{project_name} has id {project['id']}; I list its tasks.", "get_tasks",
                              project_id=project["id"])

    def find(self, task: TodoTask, why: str) -> dict:
        listed = self.tasks_of(self.project_name(task), why)
        return next(t for t in listed if t["content"] == task.content)


def due_date_of(g: Goal):
    task = g.task()
    shown = g.find(task, f"I need the due date of {task.content}.")
    return (f"When is the due date of {task.content} in {g.project_name(task)}? Please provide the answer in the "
            "YYYY-MM-DD format.", "easy", shown["due_date"], f"{task.content} is due on {shown['due_date']}.")


def which_first(g: Goal):
    a, b = g.rng.sample(g.store.open_tasks(), 2)
    if a.due_date == b.due_date:
        return None
    due = {t.content: g.find(t, f"I need the due dates of {a.content} and {b.content}.")["due_date"] for t in (a, b)}
    first = min(due, key=due.get)
    return (f"Which task should I do first to avoid missing the deadline? {a.content} or {b.content}?", "medium",
            first, f"The due dates are {due}; {first} is due first.")


def tasks_before(g: Goal):
    task = g.task()
    project = g.project_name(task)
    cutoff = date.fromisoformat(task.due_date) + timedelta(days=1)
    listed = g.tasks_of(project, f"I need the due dates of the tasks in {project}.")
    before = sorted(t["content"] for t in listed if t["due_date"] < cutoff.isoformat())
    return (f"What tasks should I complete before {cutoff} in the {project} project? Please answer in the form of a "
            "list ['task1', 'task2', ...].", "medium", before, f"The tasks due before {cutoff} are {before}.")


def task_place(g: Goal):
    task = g.task()
    shown = g.find(task, f"The place of {task.content} is in its description.")
    description = g.plan.call(f"{task.content} has id {shown['id']}; I read its description.",
                              "get_task_description", task_id=shown["id"])["description"]
    place = description.split("Place: ", 1)[1].split(". Tips:", 1)[0]
    return (f"Where will the task {task.content} take place? Please answer with the place as a string.", "medium",
            place, f"The description says: {description}")


def task_duration(g: Goal):
    task = g.task()
    shown = g.find(task, f"I need the duration of {task.content}.")
    duration = g.plan.call(f"{task.content} has id {shown['id']}; I fetch its duration.", "get_task_duration",
                           task_id=shown["id"])["duration"]
    return (f"How long will the task {task.content} take? Please answer in the format 'amount(unit)', e.g. "
            "'30(minute)'.", "medium", duration, f"Its duration is {duration}.")


def count_tasks(g: Goal):
    # across every project: each project holds three tasks, so a count of one project's tasks is always 3
    cutoff = g.today + timedelta(days=g.rng.randint(5, 24))
    due = 0
    for project in g.store.projects:
        listed = g.tasks_of(project.name, "I need the due dates of the tasks in every project.")
        due += sum(t["due_date"] < cutoff.isoformat() for t in listed)
    return (f"How many of my tasks, in all projects, are due before {cutoff}? Please give me a numerical value as an "
            "answer.", "hard", due, f"{due} tasks are due before {cutoff}.")


def top_priority(g: Goal):
    project = g.rng.choice(g.store.projects).name
    listed = g.tasks_of(project, f"I need the priorities of the tasks in {project}.")
    best = max(t["priority"] for t in listed)
    top = [t["content"] for t in listed if t["priority"] == best]
    if len(top) > 1:
        return None
    return (f"Which task in the {project} project has the highest priority? Please answer with the task's name.",
            "medium", top[0], f"The highest priority is {best}, held by {top[0]}.")


def complete(g: Goal):
    task = g.task()
    shown = g.find(task, f"To complete {task.content} I need its id.")
    g.plan.call(f"{task.content} has id {shown['id']}; I mark it as completed.", "complete_task", task_id=shown["id"])
    return (f"I have completed the task {task.content}, please mark it as completed.", "easy", "done",
            "The task is completed.")


def reschedule(g: Goal):
    task = g.task()
    new_due = (date.fromisoformat(task.due_date) + timedelta(days=g.rng.randint(2, 14))).isoformat()
    shown = g.find(task, f"To change the due date of {task.content} I need its id.")
    g.plan.call(f"{task.content} has id {shown['id']}; I set its due date to {new_due}.", "update_task",
                task_id=shown["id"], due_date=new_due)
    return (f"It is hard for me to finish the task {task.content} in time, please extend its due date to {new_due}.",
            "easy", "done", "The due date is updated.")


def postpone(g: Goal):
    task = g.task()
    days = g.rng.randint(2, 7)
    shown = g.find(task, f"To postpone {task.content} I need its id and current due date.")
    new_due = (date.fromisoformat(shown["due_date"]) + timedelta(days=days)).isoformat()
    g.plan.call(f"{task.content} is due on {shown['due_date']}; {days} days later is {new_due}.", "update_task",
                task_id=shown["id"], due_date=new_due)
    return (f"Please postpone the task {task.content} by {days} days.", "medium", "done", "The task is postponed.")


def delete(g: Goal):
    task = g.task()
    shown = g.find(task, f"To delete {task.content} I need its id.")
    g.plan.call(f"{task.content} has id {shown['id']}; I delete it.", "delete_task", task_id=shown["id"])
    return (f"I no longer need the task {task.content}, please delete it.", "easy", "done", "The task is deleted.")


def favourite(g: Goal):
    project = g.rng.choice(g.store.projects)
    projects = g.plan.call(f"To mark {project.name} as a favourite I need its id.", "get_projects")
    project_id = next(p["id"] for p in projects if p["name"] == project.name)
    g.plan.call(f"{project.name} has id {project_id}; I mark it as a favourite.", "update_project",
                project_id=project_id, is_favorite="True")
    return (f"Please mark the {project.name} project as a favourite.", "easy", "done", "The project is a favourite.")


def complete_due_soon(g: Goal):
    project = g.rng.choice(g.store.projects).name
    today = date.fromisoformat(g.plan.call("The goal is about days from today, so I get the current date.",
                                           "get_user_current_date"))
    cutoff = (today + timedelta(days=g.rng.randint(7, 14))).isoformat()
    listed = g.tasks_of(project, f"I need the tasks of {project} due before {cutoff}.")
    due = [t for t in listed if t["due_date"] < cutoff]
    if not due:
        return None
    for t in due:
        g.plan.call(f"{t['content']} is due on {t['due_date']}, before {cutoff}; I complete it.", "complete_task",
                    task_id=t["id"])
    days = (date.fromisoformat(cutoff) - today).days
    return (f"I have finished every task of the {project} project that is due within the next {days - 1} days "
            f"(before {cutoff}). Please mark them as completed.", "hard", "done", "Those tasks are completed.")


KINDS: dict[str, Callable] = {
    "due_date_of": due_date_of, "which_first": which_first, "tasks_before": tasks_before, "task_place": task_place,
    "task_duration": task_duration, "count_tasks": count_tasks, "top_priority": top_priority, "complete": complete,
    "reschedule": reschedule, "postpone": postpone, "delete": delete, "favourite": favourite,
    "complete_due_soon": complete_due_soon,
}
OPERATIONS = {"complete", "reschedule", "postpone", "delete", "favourite", "complete_due_soon"}


@lru_cache(maxsize=4096)
def todo_task(idx: int) -> Task:
    """Generated TODO task ``idx``."""
    rng = task_rng("todo", idx)
    while True:
        today = date(2015, 1, 1) + timedelta(days=rng.randrange(10 * 365))
        city, seed, kind = rng.choice(CITIES), f"todo-store:{idx}:{rng.random()}", rng.choice(sorted(KINDS))
        goal = Goal(rng, TodoStore.seeded(seed, today), today, city)
        written = KINDS[kind](goal)
        if written is not None:
            break
    text, difficulty, answer, last_thought = written
    plan, subgoals = goal.plan.finish(f"{last_thought} I call finish.", answer)
    config = {"current_date": today.isoformat(), "current_location": city, "store_seed": seed}
    record = TaskRecord(id=idx, goal=text, subgoals=subgoals, difficulty=difficulty,
                        additional_info=AdditionalInfo(answer=goal.store.state(), init_config=config,
                                                       goal_type=1 if kind in OPERATIONS else 0, tool="todo"))
    return Task(record, plan, kind)
