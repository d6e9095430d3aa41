"""The TextCraft server: ``uvicorn agentenv_textcraft.server:app`` (or ``agentenv serve textcraft``)."""

from agentenv.server import create_app

from .env import TextCraftEnv

app = create_app([TextCraftEnv])
