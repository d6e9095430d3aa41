"""The ScienceWorld server: ``uvicorn agentenv_sciworld.server:app`` (or ``agentenv serve sciworld``)."""

from agentenv.server import create_app

from .env import SciWorldEnv

app = create_app([SciWorldEnv])
