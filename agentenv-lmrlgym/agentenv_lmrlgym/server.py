"""The LMRL-Gym server, Maze under ``/maze`` and Wordle under ``/wordle``:
``uvicorn agentenv_lmrlgym.server:app`` (or ``agentenv serve lmrlgym``)."""

from agentenv.server import create_app

from .maze import MazeEnv
from .wordle import WordleEnv

app = create_app([MazeEnv, WordleEnv])
