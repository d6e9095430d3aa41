"""ScienceWorld for AgentGym: one simulator JVM per session, AgentGym's task index, gold-path expert."""

from .engine import Engine
from .env import SciWorldEnv
from .tasks import Task, task_at

__all__ = ["Engine", "SciWorldEnv", "Task", "task_at"]
