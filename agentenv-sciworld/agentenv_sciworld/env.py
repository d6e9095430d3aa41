"""ScienceWorld: elementary-science tasks (boil water, build a circuit, find a living thing ...) in a
text-simulated house, run by the simulator jar PyPI ``scienceworld`` ships.

Each env instance (one server session) owns one JVM, started when the instance is made and ended by
:meth:`SciWorldEnv.close` (the server kit calls it on ``/close`` and when it reaps an idle session).
Steps never build the simulator's valid-action list, which is most of a package step's time; ask for it
with ``available_actions()`` when it is wanted.

The score is ScienceWorld's 0..100 task score; a task the agent has failed (e.g. by focusing on the
wrong object; the simulator's score -100) ends with score 0.  Success is score 100.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire

from . import tasks
from .capacity import default_max_sessions
from .engine import Engine
from .expert import GoldPath, explain, is_ambiguous, option_number, option_text
from .tasks import Task

TASK_TEXT = """\
You are an agent in ScienceWorld, a simulated house where you carry out elementary science tasks. Every \
round you get an observation and reply with one action; the first observation states your task.
The actions are (OBJ and LOC are names of objects and places you have seen):
- look around: describe the current room; look at OBJ: describe an object; look in OBJ: list what a \
container holds; read OBJ: read a book or note
- go to LOC: move to a room or place you can reach (open the door first)
- open OBJ / close OBJ: open or close a door or a container
- pick up OBJ: put an object in your inventory; put down OBJ: drop an object you carry
- move OBJ to OBJ: put an object into or onto another; pour OBJ in OBJ: pour a liquid into a container; \
dunk OBJ in OBJ: dunk a container into a liquid; mix OBJ: chemically mix what a container holds
- activate OBJ / deactivate OBJ: switch a device on or off; use OBJ on OBJ: use a tool (such as a \
thermometer) on something
- connect OBJ to OBJ / disconnect OBJ: wire electrical components
- eat OBJ; flush OBJ
- focus on OBJ: say which object the task is about (focusing on a wrong object fails the task)
- wait: let 10 time steps pass; wait1: let 1 time step pass
- inventory: list what you carry; task: repeat the task description
If the answer is "Ambiguous request" with a numbered list, reply with the number of the object you meant."""

#: actions longer than this are answered without bothering the simulator
MAX_ACTION_CHARS = 500
UNKNOWN_ACTION = "No known action matches that input."


class SciWorldEnv(EpisodicEnv):
    """One ScienceWorld episode at a time on this instance's own JVM."""

    name: ClassVar[str] = "sciworld"
    #: see :mod:`agentenv_sciworld.tasks`: train, dev, test_all are ScienceWorld's variation splits,
    #: ``test`` the first two test variations of each of the 23 task types
    splits: ClassVar[dict[str, range]] = tasks.splits()
    reward_range: ClassVar[tuple[float, float]] = (0.0, 100.0)
    success_score: ClassVar[float] = 100.0
    keep_threshold: ClassVar[float] = 99.0
    max_rounds: ClassVar[int] = 30  # AgentGym's evaluation setting
    #: actions per episode before the server ends it unsolved (gold paths of the boiling tasks run to
    #: about 180 actions; agents stop at ``max_rounds`` long before)
    max_steps: ClassVar[int] = 300
    #: the gold paths need up to ~180 rounds, so the expert agent gets the whole step budget
    expert_max_rounds: ClassVar[int | None] = 300
    #: a JVM per session and gold paths of hundreds of actions: a smaller standard dataset (AgentTraj-L: 2,120)
    dataset_size: ClassVar[int] = 200
    task_text: ClassVar[str] = TASK_TEXT
    port: ClassVar[int] = 36004
    client: ClassVar[str | None] = "agentenv_sciworld.client:SciWorldClient"
    #: a session is a JVM: as many as fit in half the machine's memory (see :mod:`.capacity`)
    max_sessions: ClassVar[int] = default_max_sessions()
    wire: ClassVar[Wire] = Wire(
        # AgentGym's queries, and those its visualisation asks (task_description, object_tree, state)
        queries={
            "action_hint": "action_hint",
            "goals": "goals",
            "task_description": "task_description_query",
            "object_tree": "object_tree",
            "state": "state",
        },
        shapes={
            "create": ("id",),
            "reset": ("task_name", "var_num", "task_description", "observation", "reward", "score", "deleted", "done"),
            "step": ("observation", "reward", "score", "done"),
        },
    )

    def __init__(self, engine: Engine | None = None):
        super().__init__()
        self.engine = engine or Engine()
        self.task: Task | None = None
        self.task_description = ""
        self.history: list[str] = []
        #: for each action in ``history`` that answered an "Ambiguous request" prompt, the text of the
        #: option it chose (else ``None``): the simulator numbers a prompt's options in a different order
        #: on each load, so a replay must answer by text, not by number
        self._answers: list[str | None] = []
        #: the ambiguity prompt the simulator is waiting on, and the same prompt as the episode showed it
        #: (the two differ in numbering only after a replay, see :meth:`_follow_gold_path`)
        self._prompt: str | None = None
        self._shown: str | None = None
        self.failed = False
        self._look = ""
        #: the simulator's score after the last step (the reset's "look around" included): a step's reward
        #: is its change, so points a task's start state already earns are no step's reward
        self._last_score = 0.0
        self._gold: GoldPath | None = None

    @property
    def pid(self) -> int:
        """The JVM's process id."""
        return self.engine.pid

    # --- tasks ------------------------------------------------------------------------------------
    @classmethod
    def task_of(cls, data_idx: int) -> Task:
        """The task ``data_idx`` names (this env's index, :mod:`.tasks`)."""
        return tasks.task_at(data_idx)

    def reset(self, data_idx: int) -> str:
        observation = super().reset(data_idx)
        self.score = self._last_score  # what the start state already earns (a few tasks start at 3 or 4 points)
        return observation

    @classmethod
    def task_type_of(cls, data_idx: int) -> str | None:
        """The task's name, read from the index without a JVM (so ``--sample`` stratifies by it)."""
        try:
            return cls.task_of(data_idx).task_name
        except (IndexError, ValueError):
            return None

    def start(self, data_idx: int) -> str:
        """Load task ``data_idx`` and return its description and first look around."""
        self.task = self.task_of(data_idx)
        self._load(gold_path=False)
        return f"{self.task_description}\n{self._look}"

    def _load(self, gold_path: bool) -> None:
        assert self.task is not None
        self.engine.load(self.task.task_name, self.task.variation, gold_path=gold_path)
        self.task_description = self.engine.task_description()
        # AgentGym's first move: a real "look around" step (it takes no simulated time)
        self._look, start_score, _ = self.engine.step("look around")
        self._last_score = max(float(start_score), 0.0)
        self.history, self.failed = [], False
        self._answers, self._prompt, self._shown = [], None, None
        self._gold = GoldPath(self.engine.gold_actions()) if gold_path else None

    # --- acting -----------------------------------------------------------------------------------
    def act(self, action: str) -> StepResult:
        # a full stop after an action ("open door to kitchen.", "0.") is never part of it: the simulator's
        # parser refused the whole action
        return self._act(action.strip().rstrip(".").rstrip())

    def _act(self, action: str, meant: str | None = None) -> StepResult:
        """Take ``action``; ``meant`` is the option text a replayed answer to an ambiguity prompt chose."""
        if len(action) > MAX_ACTION_CHARS:
            observation, raw_score, completed = f"{UNKNOWN_ACTION} (The action is {len(action)} characters long.)", None, False
            meant = None
        else:
            sent, meant = self._answer(action, meant)
            observation, raw_score, completed = self.engine.step(sent)
            self._prompt = self._shown = observation if is_ambiguous(observation) else None
        self.history.append(action)
        self._answers.append(meant)
        if self._gold is not None:
            self._gold.record(action, observation)
        if raw_score is None:
            return StepResult(observation, info={"moves": len(self.history), "failed": self.failed})
        # a failed task (e.g. focusing on the wrong object) scores -100 in the simulator: 0 here
        self.failed = raw_score < 0
        score = max(float(raw_score), 0.0)
        reward, self._last_score = score - self._last_score, score
        info = {"moves": len(self.history), "failed": self.failed}
        return StepResult(observation, reward, completed or self.failed, score, info)

    def _answer(self, action: str, meant: str | None) -> tuple[str, str | None]:
        """``(what to send the simulator, option text chosen)`` for ``action``.  A number answering an
        ambiguity prompt means the option it numbers in the prompt the episode was shown (or ``meant``,
        when replaying); it is sent as that option's number in the prompt the simulator is waiting on."""
        if self._prompt is None or not action.isdigit():
            return action, None
        if meant is None and self._shown is self._prompt:  # no replay renumbered it: the number is the agent's
            return action, option_text(self._prompt, action)  # (options that read alike stay apart)
        if meant is None and self._shown is not None:
            meant = option_text(self._shown, action)
        if meant is None:  # not one of the options: the simulator answers it as it does
            return action, None
        number = option_number(self._prompt, meant)
        return (action if number is None else number), meant

    # --- expert -----------------------------------------------------------------------------------
    def expert_action(self) -> ExpertAction:
        if self._gold is None:
            self._follow_gold_path()
        assert self._gold is not None
        action, served = self._gold.next_action(self.last_observation)
        thought = explain(action, self.task_description, first=not self.history, served=served)
        return ExpertAction(thought, action)

    def _follow_gold_path(self) -> None:
        """Reload the task with its gold path and replay the episode's actions so far, so the state is
        the same as before.  The simulator numbers the options of an "Ambiguous request" prompt in a
        different order on each load, so a replayed answer is sent as the number of the option it chose
        before (by text), and a prompt pending now keeps the numbering the episode was shown: the next
        answer is translated to the simulator's numbering."""
        taken, answers = list(self.history), list(self._answers)
        observation, shown = self.last_observation, self._shown
        self._load(gold_path=True)
        for action, meant in zip(taken, answers, strict=True):
            if self._act(action, meant).done:
                break
        self.last_observation = observation
        if self._prompt is not None and shown is not None:
            self._shown = shown

    # --- views --------------------------------------------------------------------------------------
    def available_actions(self) -> list[str] | None:
        """Every valid action in the current state (the simulator takes 50-200 ms to list them)."""
        return self.engine.valid_actions() if self.task is not None else None

    def action_hint(self) -> dict[str, list[str]]:
        """AgentGym's ``GET /action_hint``: the action templates and the objects in view."""
        return {
            "possible_actions": self.engine.possible_actions(),
            "possible_objects": self.engine.possible_objects(),
        }

    def goals(self) -> dict[str, str]:
        """AgentGym's ``GET /goals``: the simulator's sub-goal progress table."""
        return {"goals": self.engine.goal_progress()}

    def task_description_query(self) -> dict[str, str]:
        """AgentGym's ``GET /task_description``: ``{task_description}``."""
        return {"task_description": self.engine.task_description()}

    def object_tree(self) -> dict[str, Any]:
        """AgentGym's ``GET /object_tree``: ``{object_tree}``, every object of the world as a nested dict."""
        return {"object_tree": self.engine.object_tree()}

    def state(self) -> dict[str, Any]:
        """AgentGym's ``GET /state``: what its visualisation shows (a free look around, the inventory, the
        task, the goal progress, the first 10 action templates and objects, the moves, the episode)."""
        return {
            "observation": self.engine.look(),
            "inventory": self.engine.inventory(),
            "task_description": self.engine.task_description(),
            "goal_progress": self.engine.goal_progress(),
            "possible_actions": self.engine.possible_actions()[:10],
            "possible_objects": self.engine.possible_objects()[:10],
            "current_moves": self.engine.moves(),
            "environment_info": self.detail(),
        }

    def visual_extras(self) -> dict[str, Any]:
        """What AgentGym's ``POST /step_visual`` adds to a step's answer: ``{object_tree, inventory, moves}``
        (a kit route that steps the session, then merges these, would serve it)."""
        return {
            "object_tree": self.engine.object_tree(),
            "inventory": self.engine.inventory(),
            "moves": self.engine.moves(),
        }

    def task_type(self) -> str:
        return self.task.task_name if self.task is not None else self.name

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        if kind == "reset" and self.task is not None:
            return {
                "task_name": self.task.task_name,
                "var_num": self.task.variation,
                "task_description": self.task_description,
                "deleted": False,
                "score": self._last_score,  # as AgentGym's reset: what the start state already earns
            }
        return {}

    def detail(self) -> dict[str, Any]:
        task = self.task
        return super().detail() | {
            "task_id": task.task_id if task else None,
            "task_name": task.task_name if task else None,
            "var_num": task.variation if task else None,
            "variation_split": task.block if task else None,
            "task_description": self.task_description,
            "moves": len(self.history),
            "failed": self.failed,
        }

    def close(self) -> None:
        self.engine.close()
