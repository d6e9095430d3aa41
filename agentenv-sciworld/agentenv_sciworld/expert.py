"""The ScienceWorld expert: the engine's gold action sequence, followed step by step, with a reason per action.

ScienceWorld computes a gold path when a task is loaded with ``generateGoldPath=True``.  The expert keeps
a cursor in it: an action the episode takes that equals the next gold action moves the cursor on, any
other action leaves it where it is (so after a detour the expert proposes the same gold action again).
When the simulator answers a numbered "Ambiguous request" prompt, the expert picks the option that reads
like the gold action it just proposed, else option 0 (ScienceWorld's own convention).

Thoughts are written from the action's verb, its objects and the task description, e.g. "To boil water I
need the metal pot, so I pick it up."
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AMBIGUOUS = "Ambiguous request"
_OPTION = re.compile(r"^(\d+):\s*(.+)$", re.MULTILINE)


def normalise(action: str) -> str:
    return " ".join(action.lower().split())


def is_ambiguous(observation: str) -> bool:
    return observation.lstrip().startswith(AMBIGUOUS)


def options(prompt: str) -> list[tuple[str, str]]:
    """The ``(number, text)`` options of an "Ambiguous request" prompt, in its order."""
    return [(number, text.strip()) for number, text in _OPTION.findall(prompt)]


def option_text(prompt: str, number: str) -> str | None:
    """The text of option ``number`` in an "Ambiguous request" prompt (``None`` if it has none)."""
    number = number.strip()
    return next((text for n, text in options(prompt) if n == number), None)


def option_number(prompt: str, text: str) -> str | None:
    """The number of the (first) option of an "Ambiguous request" prompt that reads ``text`` (options
    that read the same cannot be told apart)."""
    for number, option in options(prompt):
        if normalise(option) == normalise(text):
            return number
    return None


def choose_option(observation: str, intended: str | None) -> str:
    """The number to answer an "Ambiguous request" prompt with: the option equal to ``intended`` if one
    is, else ``"0"``."""
    if intended and (number := option_number(observation, intended)) is not None:
        return number
    listed = options(observation)
    return listed[0][0] if listed else "0"


def goal_of(task_description: str) -> str:
    """The task's goal as a phrase: ``"Your task is to boil water. ..."`` -> ``"boil water"``."""
    first = task_description.strip().split(". ")[0].rstrip(".")
    goal = re.sub(r"^your task is to\s+", "", first, flags=re.IGNORECASE)
    return goal or "finish the task"


@dataclass
class GoldPath:
    """A gold action sequence and how far the episode has followed it."""

    actions: list[str]
    cursor: int = 0
    #: the gold action whose ambiguity prompt is pending, if any
    pending: str | None = field(default=None)

    def record(self, action: str, observation: str) -> None:
        """Account for an action the episode took and the observation it got."""
        if self.cursor < len(self.actions) and normalise(action) == normalise(self.actions[self.cursor]):
            self.pending = self.actions[self.cursor] if is_ambiguous(observation) else None
            self.cursor += 1
        elif not is_ambiguous(observation):
            self.pending = None

    @property
    def finished(self) -> bool:
        return self.cursor >= len(self.actions)

    def next_action(self, observation: str) -> tuple[str, str | None]:
        """``(action, gold action it serves)``: a number for a pending ambiguity prompt, else the next
        gold action (``"look around"`` once the path is used up)."""
        if is_ambiguous(observation):
            return choose_option(observation, self.pending), self.pending
        if self.finished:
            return "look around", None
        return self.actions[self.cursor], self.actions[self.cursor]


def _split(rest: str, *separators: str) -> tuple[str, str]:
    for sep in separators:
        head, found, tail = rest.partition(f" {sep} ")
        if found:
            return head, tail
    return rest, ""


def explain(action: str, task_description: str, *, first: bool = False, served: str | None = None) -> str:
    """A one- or two-sentence reason for ``action`` in a task with ``task_description``."""
    goal = goal_of(task_description)
    words = normalise(action)
    verb, _, rest = words.partition(" ")
    if words.isdigit():
        what = f" ({served})" if served else ""
        text = f"The simulator asks which of several matching objects I mean{what}; option {words} is the one I want."
    elif words == "look around":
        text = "I look around to see what this room holds and which exits it has."
    elif words in ("inventory", "task"):
        text = (
            "I check my inventory."
            if words == "inventory"
            else "I re-read the task to make sure of the goal."
        )
    elif verb in ("wait", "wait1") or re.fullmatch(r"wait\d+", verb):
        text = "Everything is set up; the process needs time, so I wait and then check again."
    elif words.startswith("look at ") or verb == "examine":
        obj = words.removeprefix("look at ").removeprefix("examine ")
        text = f"I examine the {obj} to check its current state."
    elif words.startswith("look in "):
        text = f"I look inside the {words.removeprefix('look in ')} to see what it contains."
    elif words.startswith("go to "):
        text = f"To {goal}, I need to be in the {words.removeprefix('go to ')}, so I go there."
    elif words.startswith("open door to "):
        text = f"The {words.removeprefix('open door to ')} is behind a closed door; I open it so I can go through."
    elif verb == "open":
        text = f"I open the {rest} to get at what is inside."
    elif verb == "close":
        text = f"I close the {rest}."
    elif words.startswith("pick up "):
        text = f"To {goal} I need the {words.removeprefix('pick up ')}, so I pick it up."
    elif words.startswith("put down ") or verb == "drop":
        obj = words.removeprefix("put down ").removeprefix("drop ")
        text = f"I no longer need to carry the {obj}, so I put it down."
    elif words.startswith("focus on "):
        text = (
            f"My task is to {goal}. The {words.removeprefix('focus on ')} is the object this is about, so I "
            "focus on it (focusing on a wrong object would fail the task)."
        )
    elif verb == "move":
        obj, dest = _split(rest, "to", "in")
        text = (
            f"I move the {obj} to the {dest} so it is where the task needs it."
            if dest
            else f"I move the {obj}."
        )
    elif verb in ("pour", "dunk"):
        obj, dest = _split(rest, "in", "into")
        text = f"I {verb} the {obj} into the {dest}."
    elif verb == "mix":
        text = f"The ingredients are together in the {rest}; I mix them to see what they make."
    elif verb == "activate":
        text = f"I turn on the {rest} so it starts working."
    elif verb == "deactivate":
        text = f"I turn off the {rest}; it has done its job."
    elif verb == "connect":
        a, b = _split(rest, "to")
        text = f"To complete the electrical circuit, I connect the {a} to the {b}."
    elif verb == "disconnect":
        text = f"I disconnect the {rest} from the circuit."
    elif verb == "use":
        tool, target = _split(rest, "on")
        purpose = " to read its temperature" if "thermometer" in tool else ""
        text = f"I use the {tool} on the {target}{purpose}." if target else f"I use the {tool}."
    elif verb == "read":
        text = f"I read the {rest}; it may tell me something the task needs."
    elif verb in ("eat", "flush"):
        text = f"I {verb} the {rest}."
    else:
        text = f"This is the next step towards the goal: {goal}."
    if first:
        text = f"My task is to {goal}. " + text if not text.startswith("My task") else text
    return text
