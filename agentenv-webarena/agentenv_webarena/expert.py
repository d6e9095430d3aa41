"""The scripted expert of the bundled tasks.

Each bundled task carries a plan (its config's ``expert`` field): steps that name elements by role and
name, as a person reads the page, never by id:

    {"thought": "...", "click": {"role": "link", "name": "Kitchen"}}
    {"thought": "...", "type": {"role": "searchbox", "name": "Search"}, "text": "chef knife", "enter": true}
    {"thought": "...", "goto": "__SHOPPING__/wishlist"}
    {"thought": "...", "tab_focus": 1}
    {"thought": "...", "stop": "$23.47"}

The expert turns the next step into an action on the current observation (finding the element's id
there, or scrolling down to it when observations show only the viewport).  It moves on to the following
step once that action has been taken, so it explains an episode it drives from the start; it does not
re-plan from states its plan never visits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .accessibility import Tree
from .actions import parse_action


@dataclass(frozen=True)
class ExpertMove:
    thought: str
    action: str


class Expert:
    """Follows one plan over an episode."""

    def __init__(self, plan: list[dict[str, Any]]) -> None:
        self.plan = plan
        self.position = 0
        #: the action proposed for the current step (the step counts as done when it is taken)
        self.proposed: str | None = None

    def next_move(self, tree: Tree, viewport_only: bool) -> ExpertMove:
        if self.position >= len(self.plan):
            return ExpertMove("My plan is finished without a stop; I stop here.", "stop []")
        step = self.plan[self.position]
        thought = step.get("thought", "")
        action = self._action(step, tree)
        if action is None:
            if viewport_only:
                action = "scroll [down]"
                thought = f"{thought} The element I need is further down the page, so I scroll down first."
                self.proposed = None  # scrolling does not finish the step
                return ExpertMove(thought.strip(), action)
            target = step.get("click") or step.get("type")
            return ExpertMove(f"I cannot find the {target['role']} {target['name']!r} I planned to use; I give up.",
                              "stop [N/A]")
        self.proposed = str(parse_action(action))  # as the env writes the action it takes
        return ExpertMove(thought, action)

    def _action(self, step: dict[str, Any], tree: Tree) -> str | None:
        if "click" in step:
            found = tree.find(step["click"]["role"], step["click"]["name"], step["click"].get("nth", 0))
            return None if found is None else f"click [{found}]"
        if "type" in step:
            found = tree.find(step["type"]["role"], step["type"]["name"], step["type"].get("nth", 0))
            enter = 1 if step.get("enter", False) else 0
            return None if found is None else f"type [{found}] [{step['text']}] [{enter}]"
        if "goto" in step:
            return f"goto [{step['goto']}]"
        if "tab_focus" in step:
            return f"tab_focus [{step['tab_focus']}]"
        if "stop" in step:
            return f"stop [{step['stop']}]"
        raise ValueError(f"a plan step without an action: {step}")

    def taken(self, action: str) -> None:
        """Tell the expert which action the episode took (advances the plan if it was the proposed one)."""
        if self.proposed is not None and action == self.proposed:
            self.position += 1
            self.proposed = None
