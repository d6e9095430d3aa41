"""ReAct replies: ``Thought: ... Action: ...`` — parse one, or write one."""

from __future__ import annotations

import re

#: the marker before a ReAct reply's action (its last match in a reply); it starts a line.  Only
#: horizontal whitespace may precede it: ``^\s*`` would rescan every run of newlines from each of its
#: lines, quadratic time on a reply of many newlines (a server's event loop blocked for seconds).
ACTION_MARKER = re.compile(r"^[^\S\n]*Action[^\S\n]*:\s*", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^[^\S\n]*Thought[^\S\n]*:\s*", re.IGNORECASE | re.MULTILINE)


def parse_react(text: str) -> tuple[str, str]:
    """Split a reply into ``(thought, action)``.

    The action is what follows the last ``Action:`` marker, stripped; a reply without a marker is taken
    as a bare action.  Nothing here ever raises: an empty reply gives an empty action, which the env
    answers with an "invalid action" observation.
    """
    text = text or ""
    last = _last_action_marker(text)
    if last is None:
        return "", text.strip()
    head, action = text[: last.start()], text[last.end() :]
    thought = _THOUGHT.sub("", head, count=1).strip()
    return thought, action.strip()


def extract_action(text: str) -> str:
    """The action of a reply (bare action or whole ReAct reply): :func:`parse_react`'s, without the thought."""
    text = text or ""
    last = _last_action_marker(text)
    return (text if last is None else text[last.end() :]).strip()


def _last_action_marker(text: str) -> re.Match[str] | None:
    last = None
    for last in ACTION_MARKER.finditer(text):  # noqa: B007 - the last one is wanted
        pass
    return last


def format_react(thought: str, action: str) -> str:
    """Write a reply in the AgentTraj ReAct layout."""
    return f"Thought:\n{thought}\n\nAction:\n{action}"


def reply_format(action_prompt: str = "your next action") -> str:
    """The tail every environment's instruction ends with: the ReAct layout a reply must follow."""
    return f'Reply strictly in this format:\n"Thought:\nyour thoughts.\n\nAction:\n{action_prompt}"'
