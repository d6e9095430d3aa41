"""LMRL-Gym's Maze and Wordle for AgentGym, served together as the "lmrlgym" server."""

from .maze import MazeEnv
from .wordle import WordleEnv

__all__ = ["MazeEnv", "WordleEnv"]
