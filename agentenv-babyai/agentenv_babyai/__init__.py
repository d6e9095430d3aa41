"""BabyAI for AgentGym: minigrid's BabyAI levels as text, with high-level actions and the BabyAI bot as expert."""

from .env import BabyAIEnv
from .levels import LEVELS, level_of

__all__ = ["LEVELS", "BabyAIEnv", "level_of"]
