"""The tool action format: ``tool_name with Action Input: {json object}``.

The kit hands an env what follows a reply's last ``Action:`` line, so a reply ending in
``Action: get_user_current_date with Action Input: {}`` arrives as ``get_user_current_date with Action Input: {}``.
This module also takes the marker itself, ``Action Input:`` on a line of its own, code fences around the JSON
and a bare tool name (a call without arguments).  The input is read as JSON (``json.JSONDecoder``), never
evaluated; text after a complete JSON object is ignored (models often append a made-up observation).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: how an action must look, quoted in every format error
ACTION_FORM = 'tool_name with Action Input: {"argument": value, ...}'

_CALL = re.compile(
    r"^\s*(?:action\s*:\s*)?`?(?P<tool>[A-Za-z_][A-Za-z0-9_]*)`?\s*(?:with\s+)?action[ _]input\s*:\s*(?P<input>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_BARE = re.compile(r"^\s*(?:action\s*:\s*)?`?(?P<tool>[A-Za-z_][A-Za-z0-9_]*)`?\s*(?:\(\s*\))?\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*")


@dataclass(frozen=True)
class ToolCall:
    """A parsed action: the tool's name and its arguments, as JSON gave them (validated later)."""

    tool: str
    arguments: dict[str, Any]


class ActionFormatError(ValueError):
    """An action that is not ``tool_name with Action Input: {json object}``; the message says why."""


def parse_action(text: str) -> ToolCall:
    """The tool call an action writes, or :class:`ActionFormatError` saying what is wrong with it."""
    match = _CALL.match(text)
    if match is None:
        bare = _BARE.match(text)
        if bare is not None:  # a tool that takes no argument, named alone
            return ToolCall(bare.group("tool"), {})
        shown = " ".join(text.split())[:80]
        raise ActionFormatError(
            f'Format error: "{shown}" is not a tool call. Write the action as {ACTION_FORM}'
        )
    tool, raw = match.group("tool"), match.group("input").strip()
    raw = _FENCE.sub("", raw).strip().strip("`").strip()
    if not raw:
        return ToolCall(tool, {})
    try:
        value, _end = json.JSONDecoder().raw_decode(raw)
    except json.JSONDecodeError as exc:
        raise ActionFormatError(
            f"The Action Input of {tool} is not valid JSON ({exc.msg} at character {exc.pos}). "
            f'Give a JSON object with double-quoted names and strings, e.g. {{"name": "Paris"}}.'
        ) from None
    except RecursionError:
        raise ActionFormatError(f"The Action Input of {tool} is nested too deeply.") from None
    except ValueError:  # JSON Python will not read, such as an integer of more than 4,300 digits
        raise ActionFormatError(f"The Action Input of {tool} holds a number too long to read.") from None
    if not isinstance(value, dict):
        raise ActionFormatError(
            f"The Action Input of {tool} must be a JSON object of named arguments, not {type(value).__name__} "
            f"(write {{}} for a tool without arguments)."
        )
    return ToolCall(tool, value)


def format_action(tool: str, arguments: dict[str, Any]) -> str:
    """The action text that calls ``tool`` with ``arguments`` (what the experts write)."""
    return f"{tool} with Action Input: {json.dumps(arguments, ensure_ascii=False)}"
