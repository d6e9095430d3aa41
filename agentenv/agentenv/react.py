"""ReAct replies: ``Thought: ... Action: ...`` — parse one, or write one."""

from __future__ import annotations

import re

# A marker starts a line; markdown around it (``**Action:**``, ``### Action:``) is allowed.  Only horizontal
# whitespace may precede it, and markdown on either side of the word only as a group that needs one
# character: ``^\s*``, or two whitespace runs with an optional one between them, would rescan a long run
# of whitespace from each of its positions, quadratic time on a reply of many newlines or spaces (a
# server's event loop blocked for seconds).
_LINE_START = r"^[^\S\n]*(?:[*_#>]+[^\S\n]*)?"
_WORD_END = r"[^\S\n]*(?:[*_]+[^\S\n]*)?:[*_]*\s*"


def _marker(word: str) -> re.Pattern[str]:
    return re.compile(_LINE_START + word + _WORD_END, re.IGNORECASE | re.MULTILINE)


#: the marker before a ReAct reply's action (its last match in a reply, up to a made-up observation)
ACTION_MARKER = _marker("Action")
_THOUGHT = _marker("Thought")
_OBSERVATION = _marker("Observation")


def parse_react(text: str) -> tuple[str, str]:
    """Split a reply into ``(thought, action)``.

    The action is what follows the last ``Action:`` marker, stripped; a reply without a marker is taken
    as a bare action.  A reasoning model's ``<think>...</think>`` is not part of the reply, and neither is
    an ``Observation:`` line after an action (the model writing the environment's answer itself).  Nothing
    here ever raises: an empty reply gives an empty action, which the env answers with an "invalid action"
    observation.
    """
    text = reply_text(text)
    last = _last_action_marker(text)
    if last is None:
        return "", text.strip()
    head, action = text[: last.start()], text[last.end() :]
    thought = _THOUGHT.sub("", head, count=1).strip()
    return thought, action.strip()


#: a reply with none of these characters is a bare action as it stands: every marker needs a colon, a
#: reasoning block or ``</s>`` a ``<``, and the markup :func:`unwrap_action` removes a backtick or a quote
_PLAIN_ACTION = re.compile(r'[^:<`"]*')


def extract_action(text: str) -> str:
    """The action of a reply (bare action or whole ReAct reply): :func:`parse_react`'s, without the thought,
    and without markup wrapped around the whole of it (:func:`unwrap_action`)."""
    if text and _PLAIN_ACTION.fullmatch(text):  # the usual bare action ("move up"): a server parses one every step
        return text.strip()
    return unwrap_action(parse_react(text)[1])


_FENCE = re.compile(r"\A```[\w+-]*[^\S\n]*\n(.*?)\n?```\Z", re.DOTALL)


def unwrap_action(action: str) -> str:
    """``action`` without what a model wraps around the whole of it: a code fence (its language label too),
    one pair of backticks or of double quotes, or a lone closing quote or fence (of quotes or a fence around
    the whole reply).  An action with quotes or backticks of its own (JSON, SQL) is left as it is."""
    if (fenced := _FENCE.match(action)) is not None:
        action = fenced.group(1).strip()
    if action.endswith("```") and action.count("```") == 1:
        action = action[:-3].rstrip()
    for mark in ("`", '"'):
        if len(action) > 2 and action[0] == action[-1] == mark and action.count(mark) == 2:
            action = action[1:-1].strip()
    if action.endswith('"') and action.count('"') == 1:
        action = action[:-1].rstrip()
    return action


def match_first_line(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern`` at the start of ``text``'s first line, what follows ignored (as the original envs' parsers,
    unanchored ``re.match`` calls, ignore it), else over the whole text (an action that spans lines)."""
    return pattern.match(text.split("\n", 1)[0]) or pattern.fullmatch(text)


def reply_text(text: str | None) -> str:
    """A reply without its reasoning block and without what follows the first ``Observation:`` line after an
    action (after the ``Action:`` marker, or after the first text of a bare action).  A ``<think>`` left open (the reply was cut off while reasoning) takes the rest of the reply; a
    lone ``</think>`` (templates that open the block in the prompt) ends the reasoning before it.  A final
    ``</s>`` written out as text (Llama-2's end of turn, which AgentGym's clients strip) is no part of it."""
    text = (text or "").rstrip()
    text = text.removesuffix("</s>")
    opened, closed = text.find("<think>"), text.rfind("</think>")
    if closed >= 0:
        text = (text[:opened] if 0 <= opened < closed else "") + text[closed + len("</think>") :]
    if (opened := text.find("<think>")) >= 0:
        text = text[:opened]
    first = ACTION_MARKER.search(text)
    if first is not None:
        made_up = _OBSERVATION.search(text, first.end())
    else:  # a bare action (AgentGym's clients send what follows the marker): after some action text
        made_up = _OBSERVATION.search(text)
        if made_up is not None and not text[: made_up.start()].strip():
            made_up = None
    if made_up is not None:
        text = text[: made_up.start()]
    return text


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
