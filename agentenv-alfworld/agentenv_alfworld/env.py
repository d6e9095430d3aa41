"""ALFWorld: household tasks in text (put a clean mug in the coffee machine, look at a book under the desk
lamp ...), played on ALFWorld's own engine: TextWorld's PDDL environment with ALFWorld's domain, grammar and
handcoded expert.

Task ``idx`` is a game file from :func:`~agentenv_alfworld.games.game_library`: a game generated here (see
:mod:`.tasks`), or ALFWorld's original game when its data is present.  Observations are the engine's, as
AgentGym serves them: the welcome banner dropped from the first, "You arrive at loc N. " stripped from the
others.  Commands are the engine's admissible commands (``available_actions``); a put-down may be written in
either version's dialect (``put X in/on Y`` or ``move X to Y``), anything else that is not admissible is
answered "Nothing happens.", reward 0.  Reward 1 and the end of the episode when the goal holds.

Each instance (one server session) holds one TextWorld game with its own copy of Fast Downward's library,
returned to a pool by :meth:`AlfWorldEnv.close`.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire

from .commands import in_dialect
from .engine import GameEngine, GameState
from .expert import PLANNER_AFTER, Expert, explain
from .games import GameLibrary, game_library
from .tasks import SPLITS, TASK_TYPES, Goal

TASK_TEXT = """\
You are in a household, and you must complete a task by interacting with what is there: receptacles \
(cabinets, drawers, countertops, a fridge, a microwave ...) and the objects in them. The first observation \
describes the room and states your task.
Each round you see an observation and reply with one action. The actions are:
- go to [receptacle]: go to a receptacle, e.g. "go to cabinet 1"
- open [receptacle] / close [receptacle]
- take [object] from [receptacle]: pick up an object, e.g. "take mug 1 from countertop 2" (one at a time)
- put [object] in/on [receptacle]: put down the object you hold, e.g. "put mug 1 in/on coffeemachine 1"
- heat [object] with [microwave], cool [object] with [fridge], clean [object] with [sinkbasin]
- use [object]: switch on a lamp; examine [object or receptacle]; inventory; look
Use the names exactly as the observations write them. An action that is not possible is answered \
"Nothing happens."."""

_ARRIVAL = re.compile(r"^You arrive at loc \d+\. ")
TASK_LINE = "Your task is to: "


def agentgym_observation(feedback: str) -> str:
    """A step's feedback as AgentGym serves it: ALFWorld 0.3's "You arrive at loc N. " stripped."""
    return _ARRIVAL.sub("", feedback)


def first_observation(feedback: str) -> str:
    """The game's intro without its welcome banner (AgentGym: the paragraphs after the first, one per line)."""
    return "\n".join(feedback.split("\n\n")[1:])


class AlfWorldEnv(EpisodicEnv):
    """One ALFWorld game at a time on this instance's own TextWorld engine."""

    name: ClassVar[str] = "alfworld"
    #: train 0-2419 and test 2420-2619 as AgentGym numbers them; the test split's first half is played in
    #: training's floor plans (``test_seen``), its second half in floor plans training never uses
    #: (``test_unseen``): see docs/envs/alfworld.md
    splits: ClassVar[dict[str, range]] = dict(SPLITS)
    max_rounds: ClassVar[int] = 30  # AgentGym's evaluation setting
    #: AgentGym's episode length: the server ends an episode unsolved after 50 actions
    max_steps: ClassVar[int] = 50
    #: the handcoded expert searches receptacle by receptacle: it gets the whole episode
    expert_max_rounds: ClassVar[int | None] = 50
    task_text: ClassVar[str] = TASK_TEXT
    port: ClassVar[int] = 36006
    wire: ClassVar[Wire] = Wire(
        reset_field="game",
        shapes={
            "create": ("id",),
            "reset": ("id", "observation", "available_actions", "task_type"),
            "step": ("observation", "reward", "available_actions", "done"),
        },
    )
    blocking: ClassVar[bool] = True
    #: a live session holds a TextWorld game (a few MiB resident) and a copy of Fast Downward's library, a
    #: 33 MB file in the temporary folder (RAM where /tmp is a tmpfs): docs/benchmarks.md, ALFWorld
    max_sessions: ClassVar[int | None] = 64
    #: a process runs one engine call at a time (see :mod:`.engine`): a call may wait behind many others
    call_deadline_s: ClassVar[float] = 300.0

    def __init__(self, games: GameLibrary | None = None) -> None:
        super().__init__()
        self.games = games or game_library()
        self.engine = GameEngine()
        self.state: GameState | None = None
        self.goal: Goal | None = None
        self.task_description = ""
        self.expert: Expert | None = None

    # --- tasks ------------------------------------------------------------------------------------
    def start(self, data_idx: int) -> str:
        game_file = self.games.game_file(data_idx)
        if self.engine.game_file == game_file:
            state = self.engine.restart()
        else:
            state = self.engine.load(game_file)
        self.state = state
        self.goal = read_goal(game_file)
        self.task_description = state.feedback.rpartition(TASK_LINE)[2].strip().removesuffix(".")
        self.expert = Expert(game_file, state, self.engine.dialect, seed=data_idx)
        return first_observation(state.feedback)

    # --- acting -------------------------------------------------------------------------------------
    def act(self, action: str) -> StepResult:
        command = in_dialect(action, self.engine.dialect)
        state = self.engine.step(command)
        self.state = state
        if self.expert is not None:
            self.expert.observe(command, state)
        won = state.won
        return StepResult(agentgym_observation(state.feedback), 1.0 if won else 0.0, terminated=won)

    def expert_action(self) -> ExpertAction:
        assert self.state is not None and self.goal is not None and self.expert is not None
        command = self.expert.proposal
        if command is None or self.steps >= PLANNER_AFTER:  # the planner finishes (see .expert)
            plan = self.engine.plan()
            command = plan[0] if plan else "look"
        return ExpertAction(explain(command, self.goal, self.state), command)

    # --- views --------------------------------------------------------------------------------------
    def available_actions(self) -> list[str] | None:
        """The engine's admissible commands now (``None`` before the first reset)."""
        return list(self.state.admissible_commands) if self.state is not None else None

    def task_type(self) -> str:
        return self.goal.task_type if self.goal is not None else self.name

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """Task ``data_idx``'s type without loading its game (``None`` where the games cannot tell)."""
        try:
            return game_library().task_type(data_idx)
        except (LookupError, ValueError, OSError):
            return None

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        if kind in ("reset", "step") and self.state is not None:
            return {"available_actions": list(self.state.admissible_commands)}
        return {}

    def detail(self) -> dict[str, Any]:
        game = self.engine.game_file
        return super().detail() | {
            "world_type": "Text",
            "games": self.games.source,
            "game": "/".join(game.parts[-4:-1]) if game else None,
            "task": self.task_description,
            "goal": vars(self.goal) if self.goal else None,
            "available_actions": self.available_actions(),
        }

    def close(self) -> None:
        self.engine.close()


def read_goal(game_file) -> Goal:
    """The goal ``traj_data.json`` beside a game file states (ALFRED's ``pddl_params``)."""
    import json

    traj = json.loads((game_file.parent / "traj_data.json").read_text())
    params = traj.get("pddl_params", {})
    task_type = traj.get("task_type", "")
    if task_type not in TASK_TYPES:
        raise ValueError(f"{game_file.parent}: task type {task_type!r} is not one of ALFWorld's six")
    return Goal(
        task_type,
        params.get("object_target", ""),
        parent_target=params.get("parent_target", "") or "",
        toggle_target=params.get("toggle_target", "") or "",
    )
