"""ALFWorld for AgentGym: household tasks on ALFWorld's own engine, with games generated here (or the
original games when ALFWorld's data is present)."""

from .env import AlfWorldEnv
from .games import GeneratedGames, OriginalGames, game_library
from .tasks import SPLITS, TASK_TYPES, Task, task

__all__ = ["SPLITS", "TASK_TYPES", "AlfWorldEnv", "GeneratedGames", "OriginalGames", "Task", "game_library", "task"]
