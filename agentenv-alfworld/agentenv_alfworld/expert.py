"""The expert: ALFWorld's handcoded expert, kept in step with the episode, with Fast Downward as a fallback.

ALFWorld's ``HandCodedTWAgent`` searches like a person would: it visits the receptacles where the object
usually is, opens them, takes it, brings it to the appliance and the goal receptacle.  It tracks the
episode itself, so it sees every state the episode passes through (also the agent's own moves), and after
each one proposes the next command.  Three adaptations, none of which changes what it decides:

- **dialects**: it proposes put-downs as ``move X to Y`` (alfworld 0.4) and checks the admissible commands in
  that form, but recognises a put-down it made by the word ``put`` (0.3's form).  It is shown the
  admissible commands in 0.4's form and told the last command in 0.3's, whatever the game speaks; its
  proposal is given back in the game's dialect;
- **randomness**: it breaks ties and gets unstuck with the module-level ``random``; each episode gives it a
  generator of its own, seeded by the task index, so an expert trajectory is reproducible;
- **fallback**: when it gives up (its own timeout or failure, or a crash of its heuristics) or proposes a
  command that is not admissible, the next command comes from Fast Downward's plan from the current state
  (the engine's planner, which knows where everything is);
- **budget**: it searches receptacle by receptacle, opening and closing each, and in a big kitchen that can
  run past AgentGym's 50 actions; from the episode's :data:`PLANNER_AFTER`-th action on, the planner
  finishes the task (no action in ALFWorld is irreversible, and a plan from any state is short).

The thought beside each command says why, from the task's goal and what the agent holds.
"""

from __future__ import annotations

import random
import re
import threading
from pathlib import Path

from .commands import Dialect, in_dialect
from .engine import GameState
from .tasks import Goal

#: actions after which the planner finishes an episode the handcoded expert has not (plans take at most
#: about a dozen actions: well within the 50 an episode has)
PLANNER_AFTER = 30
#: the handcoded expert draws from the module-level ``random``: one episode's generator at a time
_RANDOM_LOCK = threading.Lock()
_NUMBERED = re.compile(r"^(?P<kind>[a-z]+) \d+$")

APPLIANCE_VERBS = {
    "pick_clean_then_place_in_recep": ("clean", "sinkbasin"),
    "pick_heat_then_place_in_recep": ("heat", "microwave"),
    "pick_cool_then_place_in_recep": ("cool", "fridge"),
}
STATE_WORDS = {"clean": "clean", "heat": "hot", "cool": "cool"}


class Expert:
    """ALFWorld's handcoded expert following one episode of one game."""

    def __init__(self, game_file: Path, first: GameState, dialect: Dialect, seed: int) -> None:
        from alfworld.agents.expert import HandCodedTWAgent

        self.dialect = dialect
        self._rng = random.Random(seed)
        self._agent = HandCodedTWAgent(max_steps=200)
        self._agent.reset(str(game_file))  # reads traj_data.json beside the game file
        self._agent.observe(first.feedback)
        #: the handcoded expert's next command (game dialect), ``None`` once it has given up
        self.proposal: str | None = "look"  # its first move, as ALFWorld's AlfredExpert wrapper has it
        self.gave_up = False

    def observe(self, command: str, state: GameState) -> None:
        """The episode took ``command`` (as sent to the engine) and reached ``state``."""
        if self.gave_up:
            return
        view = {
            "feedback": state.feedback,
            "facts": state.raw["facts"],
            "won": state.won,
            "admissible_commands": [in_dialect(c, "move") for c in state.admissible_commands],
        }
        try:
            with _RANDOM_LOCK:
                saved = random.getstate()
                random.setstate(self._rng.getstate())
                try:
                    proposal = self._agent.act(view, 0, state.won, in_dialect(command, "put"))
                finally:
                    self._rng.setstate(random.getstate())
                    random.setstate(saved)
        except Exception:  # its timeout, its failure, or an error in its heuristics: the planner takes over
            self.gave_up, self.proposal = True, None
            return
        proposal = in_dialect(proposal, self.dialect)
        self.proposal = proposal if proposal in state.admissible_commands else None


def holding(state: GameState) -> str | None:
    """The object the agent carries (``mug 1``), if any."""
    for fact in state.raw["facts"]:
        if fact.name == "holds":
            return fact.names[1].strip()
    return None


def kind(name: str) -> str:
    """``cabinet 3`` -> ``cabinet``."""
    match = _NUMBERED.match(name)
    return match["kind"] if match else name


def plural(noun: str) -> str:
    """ALFRED's object names in the plural: ``box`` -> ``boxes``, ``potato`` -> ``potatoes``."""
    if noun.endswith("s") and not noun.endswith("ss"):  # already plural: blinds, boots
        return noun
    if noun.endswith(("ss", "x", "ch", "sh", "o")):
        return noun + "es"
    if noun.endswith("knife"):
        return noun[:-2] + "ves"
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    return noun + "s"


def explain(command: str, goal: Goal, state: GameState) -> str:
    """Why the expert takes ``command`` now, in a sentence or two."""
    obj = goal.object_target.lower()
    parent = goal.parent_target.lower()
    lamp = goal.toggle_target.lower()
    carried = holding(state)
    carrying_target = carried is not None and kind(carried) == obj
    appliance = APPLIANCE_VERBS.get(goal.task_type)
    words = command.split()
    verb = words[0] if words else ""
    if command.startswith("go to "):
        place = command[len("go to ") :]
        if carried is not None and not carrying_target:
            return f"I am holding the {carried}, which the task does not need; I take it back to the {place}."
        if not carrying_target:
            return f"First I need to find a {obj}. It could be at the {place}, so I go there and look."
        if appliance and kind(place) == appliance[1]:
            return f"I have the {carried}. To make it {STATE_WORDS[appliance[0]]} I go to the {place}."
        if lamp:
            return f"I have the {carried}. Now I look for the {lamp} to examine it under its light: I check the {place}."
        if kind(place) == parent:
            return f"I have the {carried}; the task wants it in the {parent}, so I go to the {place}."
        return f"I have the {carried} and look for the {parent}; I try the {place}."
    if verb == "open":
        place = command[5:]
        if carrying_target and kind(place) == parent:
            return f"The {place} is closed; I open it to put the {carried} in it."
        return f"The {place} is closed. I open it to see what is inside."
    if verb == "close":
        return f"I leave the {command[6:]} as I found it and close it."
    if verb == "take":
        taken, _, place = command[5:].partition(" from ")
        return f"Here is {taken}, a {kind(taken)} the task needs. I take it from the {place}."
    if verb in STATE_WORDS:
        target, _, appliance_name = command[len(verb) + 1 :].partition(" with ")
        return f"The task wants the {kind(target)} {STATE_WORDS[verb]}: I {verb} the {target} with the {appliance_name}."
    if verb in ("move", "put"):
        match = re.match(r"^(?:move|put) (.+?) (?:to|in/on) (.+)$", command)
        if match:
            placed, place = match.groups()
            if goal.task_type == "pick_two_obj_and_place":
                return f"I put the {placed} in/on the {place}; the task wants two {plural(obj)} there."
            return f"I put the {placed} in/on the {place}, as the task asks."
    if verb == "use":
        return f"I hold the {obj}; I turn on the {command[4:]} to look at it under the light."
    if verb == "examine":
        return f"I examine the {command[8:]} to see what is there."
    if command == "look":
        return "I look around to see where I am."
    if command == "inventory":
        return "I check what I am carrying."
    return f"I try {command}."

