"""The environment-server kit: an :class:`~agentenv.env.Environment` class becomes a FastAPI app."""

from .app import create_app
from .launcher import CannotServe, ServerProcesses, serve

__all__ = ["CannotServe", "ServerProcesses", "create_app", "serve"]
