"""WebArena for agentenv: a real browser (Playwright driving Debian's Chromium) over bundled self-hosted
sites, WebArena's observations, actions and evaluators, and WebArena's own task configs when a user has
the real sites."""

from .actions import Action, InvalidAction, parse_action
from .configs import read_configs
from .env import WebArenaEnv
from .evaluators import evaluate

__all__ = ["Action", "InvalidAction", "WebArenaEnv", "evaluate", "parse_action", "read_configs"]
