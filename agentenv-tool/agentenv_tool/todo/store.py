"""The to-do store: projects and their tasks, as Todoist keeps them, seeded per episode.

A store holds 5 projects and 15 tasks (AgentGym's size) with content, description (place and tips), due date,
duration, priority (1 normal .. 4 urgent) and completion.  Completed and deleted tasks leave the lists, as in
Todoist.  :meth:`TodoStore.state` is what a final state is compared on: the projects' order, colour, name and
favourite flag and the tasks' order, content, completion, priority and due date (completed tasks kept,
marked; deleted ones gone).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

COLORS = ("charcoal", "berry_red", "blue", "green", "orange", "violet", "teal")
PLACES = ("the library", "the community centre", "home", "the office", "the school gym", "the park",
          "the town hall", "the music room", "the lab", "the supermarket", "the garage", "the café on Main Street")
TIPS = ("Bring a notebook.", "Start early.", "Ask a friend to help.", "Check the checklist twice.",
        "Take breaks every hour.", "Keep the receipts.", "Charge the laptop first.", "Wear comfortable shoes.")
THEMES = {
    "Homework and Assignments": ("Solve algebra equations", "Conduct a chemistry experiment",
                                 "Read and summarize a history chapter", "Write an English essay",
                                 "Prepare for the geography quiz"),
    "Extracurricular Activities": ("Attend soccer practice", "Rehearse with the school band",
                                   "Attend debate club meeting", "Volunteer at the food bank", "Practice chess openings"),
    "Science Fair Project": ("Design and conduct a biology experiment", "Prepare presentation for science fair",
                             "Write a research paper on the experiment", "Build the display board",
                             "Collect measurement data"),
    "Household Chores": ("Clean the kitchen", "Do the laundry", "Tidy up the living room", "Water the plants",
                         "Take out the recycling"),
    "Picnic Preparation": ("Purchase picnic supplies", "Select picnic location and plan activities",
                           "Prepare sandwiches", "Invite friends", "Pack the picnic basket"),
    "Home Renovation": ("Paint the bedroom walls", "Replace the kitchen faucet", "Fix the squeaky door",
                        "Choose new curtains", "Install shelves in the study"),
    "Fitness Plan": ("Go for a 5 km run", "Attend yoga class", "Plan weekly meals", "Buy new running shoes",
                     "Track weight and sleep"),
    "Travel Planning": ("Book the flight tickets", "Reserve a hotel room", "Renew the passport",
                        "Plan the museum visits", "Buy travel insurance"),
    "Job Search": ("Update the resume", "Write a cover letter", "Apply to three companies",
                   "Prepare for the interview", "Ask for a reference letter"),
}


@dataclass
class Project:
    id: str
    name: str
    order: int
    color: str
    is_favorite: bool = False

    def shown(self) -> dict[str, Any]:
        return {"id": self.id, "order": self.order, "color": self.color, "name": self.name,
                "is_favorite": self.is_favorite}


@dataclass
class TodoTask:
    id: str
    project_id: str
    order: int
    content: str
    description: str
    due_date: str
    duration: int
    duration_unit: str
    priority: int
    is_completed: bool = False
    deleted: bool = False

    def shown(self) -> dict[str, Any]:
        return {"id": self.id, "order": self.order, "content": self.content, "is_completed": self.is_completed,
                "priority": self.priority, "due_date": self.due_date}


class TodoStore:
    """One user's projects and tasks."""

    def __init__(self, projects: list[Project], tasks: list[TodoTask]) -> None:
        self.projects = projects
        self.tasks = tasks

    @classmethod
    def seeded(cls, seed: str, today: date) -> TodoStore:
        """5 projects of 3 tasks each, due within the 4 weeks after ``today``, drawn from ``seed``."""
        rng = random.Random(seed)
        projects, tasks = [], []
        for order, name in enumerate(rng.sample(sorted(THEMES), 5), 1):
            project = Project(str(2_203_300_000 + rng.randrange(10**5) * 10 + order), name, order,
                              rng.choice(COLORS))
            projects.append(project)
            for task_order, content in enumerate(rng.sample(THEMES[name], 3), 1):
                tasks.append(TodoTask(
                    id=str(7_000_000_000 + rng.randrange(10**8)), project_id=project.id, order=task_order,
                    content=content, description=f"Place: {rng.choice(PLACES)}. Tips: {rng.choice(TIPS)}",
                    due_date=(today + timedelta(days=rng.randint(1, 28))).isoformat(),
                    duration=rng.choice((15, 30, 45, 60, 90, 120, 180)), duration_unit="minute",
                    priority=rng.randint(1, 4)))
        return cls(projects, tasks)

    def open_tasks(self, project_id: str | None = None) -> list[TodoTask]:
        return [t for t in self.tasks if not t.is_completed and not t.deleted
                and (project_id is None or t.project_id == project_id)]

    def state(self) -> dict[str, Any]:
        """What a final state is judged on (AgentGym's fields, without ids).  Completed tasks stay in it, marked
        (Todoist's API lists open tasks only, so AgentGym's states could not tell a completed task from a
        deleted one); deleted tasks leave it."""
        return {
            "projects": [{"order": p.order, "color": p.color, "name": p.name, "is_favorite": p.is_favorite}
                         for p in self.projects],
            "tasks": [{"order": t.order, "content": t.content, "is_completed": t.is_completed, "priority": t.priority,
                       "due_date": t.due_date} for p in self.projects for t in self.tasks
                      if t.project_id == p.id and not t.deleted],
        }
