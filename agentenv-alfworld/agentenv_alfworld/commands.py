"""ALFWorld's two command dialects, and an agent's command in the dialect of the game it plays.

alfworld 0.3 (AgentGym's pin, the grammar inside the original ``json_2.1.1`` game files, and the one
generated games carry) puts an object down with ``put X in/on Y``; alfworld 0.4 says ``move X to Y``.
Which one a game speaks is in its grammar.  An agent may use either (trajectories from both versions
replay): :func:`in_dialect` rewrites a put-down into the game's form.  Everything else is passed to the
engine as written, which answers anything that is not an admissible command with "Nothing happens."
"""

from __future__ import annotations

import re
from typing import Literal

Dialect = Literal["move", "put"]

#: a put-down in any form the two versions (and agents trained on them) write it
PUT_DOWN = re.compile(
    r"^(?:put|move|place)\s+(?P<object>.+?)\s+(?:in/on|into|onto|in|on|to)\s+(?P<receptacle>[^\s].*)$"
)
_SPACES = re.compile(r"\s+")


def dialect_of(grammar: str) -> Dialect:
    """The put-down form a game's grammar declares."""
    return "put" if 'template :: "put {o} in/on {r}"' in grammar else "move"


def put_down(object_name: str, receptacle: str, dialect: Dialect) -> str:
    return f"put {object_name} in/on {receptacle}" if dialect == "put" else f"move {object_name} to {receptacle}"


def normalise(command: str) -> str:
    """Lower case, single spaces, no trailing full stop: how the engine's commands are written."""
    return _SPACES.sub(" ", command).strip().rstrip(".").strip().lower()


def in_dialect(command: str, dialect: Dialect) -> str:
    """``command`` normalised, a put-down written in ``dialect``."""
    text = normalise(command)
    match = PUT_DOWN.match(text)
    if match is None:
        return text
    return put_down(match["object"], match["receptacle"], dialect)
