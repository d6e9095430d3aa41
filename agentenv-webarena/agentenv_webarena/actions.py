"""WebArena's action grammar, and finding the action in a model's reply.

A WebArena reply reasons, then ends with "In summary, the next action I will perform is ```click [1234]```":
the action is the first triple-backtick block after that phrase (or, without the phrase, the reply's first
block); a reply that is only an action (``click [12]``) is taken as it is.  The grammar:

    click [id]   hover [id]   type [id] [text] [0|1]   press [key_comb]   scroll [up|down]
    new_tab   tab_focus [index]   close_tab   goto [url]   go_back   go_forward   stop [answer]

``type`` presses Enter after the text unless its last field is ``[0]``.  Text after an action (a full stop, a
remark, a second action) is ignored, as WebArena's parser ignores it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentenv.react import match_first_line

SUMMARY = re.compile(r"in summary,? the next action i will perform is", re.IGNORECASE)
BLOCK = re.compile(r"```(.*?)```", re.DOTALL)

GRAMMAR = (
    "click [id], hover [id], type [id] [text] [0|1], press [key_comb], scroll [up|down], new_tab, "
    "tab_focus [tab_index], close_tab, goto [url], go_back, go_forward, stop [answer]"
)

_FORMS: dict[str, tuple[re.Pattern[str], ...]] = {
    "click": (re.compile(r"click\s*\[\s*(\d{1,9})\s*\]", re.I),),
    "hover": (re.compile(r"hover\s*\[\s*(\d{1,9})\s*\]", re.I),),
    "type": (
        re.compile(r"type\s*\[\s*(\d{1,9})\s*\]\s*\[(.*)\]\s*\[\s*([01])\s*\]", re.I | re.S),
        re.compile(r"type\s*\[\s*(\d{1,9})\s*\]\s*\[(.*)\]", re.I | re.S),
    ),
    "press": (re.compile(r"press\s*\[(.+)\]", re.I),),
    "scroll": (re.compile(r"scroll\s*\[?\s*(up|down)\s*\]?", re.I),),
    "new_tab": (re.compile(r"new_tab(?:\s*\[\s*\])?", re.I),),
    "tab_focus": (re.compile(r"tab_focus\s*\[\s*(\d{1,9})\s*\]", re.I),),
    "close_tab": (re.compile(r"close_tab(?:\s*\[\s*\])?", re.I),),
    "goto": (re.compile(r"goto\s*\[(.+)\]", re.I | re.S),),
    "go_back": (re.compile(r"go_back(?:\s*\[\s*\])?", re.I),),
    "go_forward": (re.compile(r"go_forward(?:\s*\[\s*\])?", re.I),),
    "stop": (re.compile(r"stop\s*\[(.*)\]", re.I | re.S), re.compile(r"stop\s*\Z", re.I)),
}
_USAGE = {
    "click": "click [id]", "hover": "hover [id]", "type": "type [id] [text] [0|1]", "press": "press [key_comb]",
    "scroll": "scroll [up|down]", "new_tab": "new_tab", "tab_focus": "tab_focus [tab_index]",
    "close_tab": "close_tab", "goto": "goto [url]", "go_back": "go_back", "go_forward": "go_forward",
    "stop": "stop [answer]",
}


@dataclass(frozen=True)
class Action:
    """One parsed action; only the fields of its kind are set."""

    kind: str
    element_id: int | None = None
    text: str = ""
    enter: bool = False
    key: str = ""
    direction: str = ""
    url: str = ""
    tab: int | None = None
    answer: str = ""

    def __str__(self) -> str:
        match self.kind:
            case "click" | "hover":
                return f"{self.kind} [{self.element_id}]"
            case "type":
                return f"type [{self.element_id}] [{self.text}] [{int(self.enter)}]"
            case "press":
                return f"press [{self.key}]"
            case "scroll":
                return f"scroll [{self.direction}]"
            case "tab_focus":
                return f"tab_focus [{self.tab}]"
            case "goto":
                return f"goto [{self.url}]"
            case "stop":
                return f"stop [{self.answer}]"
        return self.kind


@dataclass(frozen=True)
class InvalidAction:
    """Text that is no action of the grammar, and why."""

    reason: str


def find_action(reply: str) -> str:
    """The action text of a reply: its block after WebArena's summary phrase, its first block, or all of it."""
    summary = SUMMARY.search(reply)
    block = BLOCK.search(reply, summary.end()) if summary else None
    block = block or BLOCK.search(reply)
    if block:
        return block.group(1).strip()
    return reply.strip().strip("`").strip()


def parse_action(reply: str) -> Action | InvalidAction:
    """The action a reply asks for, or why there is none."""
    text = find_action(reply)
    if not text:
        return InvalidAction(f"no action found; give one in triple backticks, e.g. ```click [12]```. Actions: {GRAMMAR}")
    verb = re.match(r"[A-Za-z_]+", text)
    kind = verb.group(0).lower() if verb else ""
    if kind not in _FORMS:
        shown = text if len(text) <= 60 else text[:57] + "..."
        return InvalidAction(f'"{shown}" is not an action. Actions: {GRAMMAR}')
    for form in _FORMS[kind]:
        # WebArena's regexes stop at a line's end; an answer may run over several lines
        match = match_first_line(form, text)
        if match:
            return _build(kind, match.groups())
    return InvalidAction(f"malformed {kind} action; write it as {_USAGE[kind]}")


def _build(kind: str, groups: tuple[str, ...]) -> Action:
    match kind:
        case "click" | "hover":
            return Action(kind, element_id=int(groups[0]))
        case "type":
            enter = groups[2] != "0" if len(groups) > 2 else True
            return Action(kind, element_id=int(groups[0]), text=groups[1], enter=enter)
        case "press":
            return Action(kind, key=groups[0].strip())
        case "scroll":
            return Action(kind, direction=groups[0].lower())
        case "tab_focus":
            return Action(kind, tab=int(groups[0]))
        case "goto":
            return Action(kind, url=groups[0].strip())
        case "stop":
            return Action(kind, answer=groups[0].strip() if groups else "")
    return Action(kind)
