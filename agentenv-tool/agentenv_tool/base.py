"""What the five tool environments share: the episode loop over a backend of tools, tasks with expert plans.

A tool env is a :class:`ToolEnv`: a :class:`ToolBackend` subclass (the world's tools for one episode), a task
generator (task index -> :class:`Task`: an AgentGym record and the expert's plan) and the class metadata.  An
action is parsed (:mod:`.actions`), validated against the tool's signature (:mod:`.tools`) and run; each
successful call's cleaned result is recorded for the progress rate (:mod:`.progress`), which is the
episode's score; ``finish`` ends the episode.
"""

from __future__ import annotations

import contextlib
import json
import random
from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Union

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire
from agentenv.react import reply_format

from .actions import ActionFormatError, format_action, parse_action
from .matching import same_answer
from .progress import Progress
from .records import ORIGINAL_BASE, TaskRecord, original_records
from .tools import InvalidCall, Toolbox, ToolError, tool

#: the default port of the "tool" server group (all five envs)
TOOL_PORT = 36007

#: AgentGym's wire for the tool envs: ``/create {id}`` -> int, ``/reset {env_idx, id}`` -> the observation
#: AgentGym's tool servers: create -> int, reset {env_idx, id} -> the observation, a step's reward the progress
TOOL_WIRE = Wire(family="env_idx", reset_field="id", reset_answer="observation", step_reward="score",
                 shapes={"step": ("observation", "reward", "done")})

Scalar = Union[StrictStr, StrictInt, StrictFloat, StrictBool]  # noqa: UP007 - pydantic reads the Union
#: what ``finish`` takes: a string, a number or a list of them
Answer = Union[Scalar, list[Scalar]]  # noqa: UP007

ACTION_PROMPT = 'one tool call: tool_name with Action Input: {"argument": value}'


def first_observation(goal: str) -> str:
    """AgentGym's first observation of a tool task."""
    return f"Now new trial starts.\nYou should perform actions to accomplish the goal: {goal}\nGive me one action."


def render(result: Any) -> str:
    """A tool result as the observation shows it: text as it is, anything else as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def example_call(toolbox: Toolbox) -> str:
    """A call of one of the env's own tools for the instruction's example (AgentGym's example,
    ``get_user_current_date``, is a tool Academia, Movie and Sheet do not have: copied, it wasted a round)."""
    generic = ("finish", "check_valid_actions")  # every env's: an example of the env's own reads better
    tools = [t for t in toolbox.tools.values() if t.name not in generic] or list(toolbox.tools.values())
    preferred = [t for t in tools if t.name == "get_user_current_date"]
    bare = [t for t in tools if not t.arguments.model_json_schema().get("required")]
    if preferred or bare:
        return f"{(preferred or bare)[0].name} with Action Input: {{}}"
    first = tools[0]
    argument = first.arguments.model_json_schema()["required"][0]
    return f'{first.name} with Action Input: {{"{argument}": "..."}}'


def instruction_text(intro: str, toolbox: Toolbox, example: str | None = None) -> str:
    """The task text of a tool env: what it is about, the action format, an example (an episode's first call
    where an env has one: by default :func:`example_call`'s) and its tools."""
    return (
        f"{intro}\n"
        'Each round you call one tool with an action of the form "tool_name with Action Input: {json object}", '
        f"for example: {example or example_call(toolbox)}\n"
        "The Action Input is a JSON object of the tool's named arguments (double-quoted names and strings). "
        "When you know the answer, or have finished the operations, call finish.\n"
        f"The tools (a ? marks an optional argument):\n{toolbox.describe()}"
    )


def task_rng(env: str, idx: int) -> random.Random:
    """The random generator of generated task ``idx`` of ``env`` (the same on every machine and run)."""
    return random.Random(f"agentenv-tool:{env}:{idx}")


@dataclass(frozen=True)
class Step:
    """One step of an expert plan: a tool call and why."""

    thought: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def action(self) -> str:
        return format_action(self.tool, self.arguments)

    def key(self) -> str:
        return _call_key(self.tool, self.arguments)


def _call_key(tool_name: str, arguments: dict[str, Any]) -> str:
    return tool_name + json.dumps(arguments, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Task:
    """A goal (an AgentGym record), the expert's plan for it and its type (for per-type tables)."""

    record: TaskRecord
    plan: tuple[Step, ...]
    kind: str


class PlanBuilder:
    """Writes an expert plan by running it: each call runs on a scratch backend at once, so the next thought
    can quote its result, and its cleaned result becomes a gold subgoal."""

    def __init__(self, backend: ToolBackend, clean: Any = None) -> None:
        self.backend = backend
        self.toolbox = Toolbox.of(type(backend))
        self.clean = clean or (lambda tool_name, result: result)
        self.steps: list[Step] = []
        self.subgoals: list[Any] = []

    def call(self, thought: str, tool_name: str, **arguments: Any) -> Any:
        """Run one step (a refusal is a bug of the generator, raised) and return its result."""
        result = self.toolbox.call(self.backend, tool_name, arguments)
        self.steps.append(Step(thought, tool_name, arguments))
        self.subgoals.append(self.clean(tool_name, result))
        return result

    def finish(self, thought: str, answer: Any, arguments: dict[str, Any] | None = None):
        """The plan, ending in ``finish(answer)`` (or ``finish(**arguments)``), and its subgoals, the answer last."""
        self.steps.append(Step(thought, "finish", {"answer": answer} if arguments is None else arguments))
        return tuple(self.steps), [*self.subgoals, answer]


class ToolBackend:
    """The tools of one episode.  Subclasses add their world's tools with :func:`~agentenv_tool.tools.tool`."""

    @tool("Get supported actions for current tool.", "the tool names.")
    def check_valid_actions(self) -> str:
        return f"You can use following valid actions: {json.dumps(Toolbox.of(type(self)).names)}"  # AgentGym's words

    @tool("Return an answer and finish the task.", "the answer.")
    def finish(self, answer: Annotated[Answer, Field(json_schema_extra={"label": "string | number | array"})]) -> Any:
        return sorted(answer, key=str) if isinstance(answer, list) else answer


class ToolEnv(EpisodicEnv):
    """One episode of a tool task: parse, validate and run calls on the episode's backend; score progress."""

    #: the tools of this env (one backend class)
    toolbox: ClassVar[Toolbox]
    #: generated tasks: train ``0..train_size-1``, test after them
    train_size: ClassVar[int]
    test_size: ClassVar[int]
    #: Weather: subgoals carrying a latitude and longitude match within 50 km
    places: ClassVar[bool] = False
    max_steps: ClassVar[int] = 30
    action_prompt: ClassVar[str] = ACTION_PROMPT
    port: ClassVar[int] = TOOL_PORT
    server: ClassVar[str] = "tool"
    wire: ClassVar[Wire] = TOOL_WIRE
    blocking: ClassVar[bool] = False  # calls take microseconds to milliseconds; worlds are built in shared()

    def __init__(self) -> None:
        super().__init__()
        self.task: Task | None = None
        self.backend: ToolBackend | None = None
        self.progress: Progress | None = None
        self.calls: list[str] = []

    # --- what a subclass writes ---------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def generate(cls, idx: int) -> Task:
        """Generated task ``idx`` (deterministic)."""

    @abstractmethod
    def open(self, task: Task) -> ToolBackend:
        """The backend (the world's state) task's episode starts from."""

    @classmethod
    def warm(cls) -> None:  # noqa: B027 - optional: envs with a world to build override it
        """Build what every session shares (the world), so that no reset pays for it."""

    def clean(self, tool_name: str, result: Any) -> Any:
        """A call's result as progress records it (AgentBoard drops fields that vary, such as ids)."""
        return result

    def judge(self, answer: Any) -> bool:
        """Whether a ``finish`` with ``answer`` solves the task."""
        return same_answer(answer, gold_answer(self.task.record))

    # --- tasks ----------------------------------------------------------------------------------------
    @classmethod
    def splits_for(cls, env: str, train: int, test: int) -> dict[str, range]:
        """``train`` and ``test`` over the generated tasks, and ``agentgym`` over a loaded original file."""
        splits = {"train": range(0, train), "test": range(train, train + test)}
        if original_records(env):
            splits["agentgym"] = range(ORIGINAL_BASE, ORIGINAL_BASE + len(original_records(env)))
        return splits

    @classmethod
    def agentgym_task(cls, index: int) -> int:
        """AgentGym's ``id`` names a record of its task file: the loaded original one, when there is one."""
        return ORIGINAL_BASE + index if original_records(cls.name) else index

    @classmethod
    def task_of(cls, idx: int) -> Task:
        """Task ``idx``: generated below :data:`ORIGINAL_BASE`, a loaded original record from there on."""
        if idx >= ORIGINAL_BASE:
            records = original_records(cls.name)
            if idx - ORIGINAL_BASE >= len(records):
                raise ValueError(f"{cls.name} has no original task {idx} (loaded: {len(records)})")
            return cls.original_task(records[idx - ORIGINAL_BASE])
        return cls.generate(idx)

    @classmethod
    def original_task(cls, record: TaskRecord) -> Task:
        """An original AgentGym record: its answer cannot be looked up here, so the expert gives the recorded one."""
        thought = ("This goal comes from AgentGym's original task file: its answer was recorded from a live "
                   "service that this local world does not reproduce, so I give the recorded answer.")
        return Task(record, (Step(thought, "finish", {"answer": gold_answer(record)}),), "agentgym")

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        cls.warm()
        yield

    # --- the episode ------------------------------------------------------------------------------------
    def start(self, data_idx: int) -> str:
        self.task = self.task_of(data_idx)
        self.backend = self.open(self.task)
        self.progress = self.new_progress()
        self.calls = []
        return first_observation(self.task.record.goal)

    def new_progress(self) -> Progress:
        subgoals = self.task.record.subgoals
        return Progress(subgoals if isinstance(subgoals, list) and subgoals else [None], places=self.places)

    def act(self, action: str) -> StepResult:
        before = self.progress.rate
        try:
            call = parse_action(action)
            found, arguments = self.toolbox.validate(call.tool, call.arguments)
            result = getattr(self.backend, found.name)(**arguments)
        except (ActionFormatError, InvalidCall, ToolError) as exc:
            return StepResult(f"Observation: {exc}\nGive me one action.", 0.0, score=before)
        self.calls.append(_call_key(call.tool, call.arguments))
        if found.name == "finish":
            rate = self.finish(result)
            return StepResult(f"Observation: {render(result)}", rate - before, terminated=True, score=rate)
        rate = self.progress.record(self.clean(found.name, result))
        return StepResult(f"Observation: {render(result)}\nGive me one action.", rate - before, score=rate)

    def finish(self, answer: Any) -> float:
        """The episode's ``finish``: its progress rate afterwards."""
        return self.progress.finish(self.judge(answer))

    def expert_action(self) -> ExpertAction:
        done = list(self.calls)
        for step in self.task.plan:
            if step.key() in done:
                done.remove(step.key())
                continue
            return ExpertAction(step.thought, step.action)
        last = self.task.plan[-1]
        return ExpertAction(last.thought, last.action)

    def available_actions(self) -> list[str]:
        return self.toolbox.names

    def task_type(self) -> str:
        return self.task.kind if self.task else self.name

    def detail(self) -> dict[str, Any]:
        task = self.task
        return super().detail() | {
            "goal": task.record.goal if task else None,
            "difficulty": task.record.difficulty if task else None,
            "progress": self.progress.rate if self.progress else 0.0,
            "subgoals_reached": self.progress.reached() if self.progress else [],
        }


def gold_answer(record: TaskRecord) -> Any:
    """The answer ``finish`` must give: the last subgoal (TODO's records keep the target state in ``answer``)."""
    if isinstance(record.subgoals, list) and record.subgoals:
        return record.subgoals[-1]
    return record.answer


def tool_instruction(intro: str, toolbox: Toolbox) -> str:
    """The whole instruction (for docs): the task text and the shared reply-format tail."""
    return f"{instruction_text(intro, toolbox)}\n{reply_format(ACTION_PROMPT)}"
