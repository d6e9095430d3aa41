"""SQLGym: answer a question about a SQLite database with one read-only SQL query.

The first observation describes the database (tables, columns, keys) and asks the question; the agent
replies with a query in a ```sql block.  Reward 1 when the query's rows equal the gold query's rows as
sets (BIRD's rule), 0 otherwise, including for a query that is refused, fails or runs past its limit.
One query ends the episode, as in AgentGym; with ``rounds`` > 1 a wrong query shows its result (or its
error) and the agent may revise until a right one or the last round.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv.env import EpisodicEnv, ExpertAction, StepResult, Wire
from agentenv.react import reply_format

from . import settings
from .database import MAX_RESULT_BYTES, GoldResults, QueryResult, ReadOnlyDatabase, format_rows, same_rows
from .generate.cache import key as cache_key
from .schema import describe_schema
from .statement import refusal, sql_of_reply
from .tasks import Task, catalog, task_splits

#: gold results, shared by every session of the process
GOLD = GoldResults()
#: a gold query gets more time than an agent's: BIRD has slow ones, and it runs once per process
GOLD_TIME_LIMIT_S = 120.0
GOLD_ROW_CAP = 1_000_000


def describe_task(rounds: int, bird: bool = False) -> str:
    """The instruction's task part, for ``rounds`` attempts per question (on BIRD, or the generated set)."""
    attempts = (
        "You have one attempt per question."
        if rounds == 1
        else f"You have {rounds} attempts per question: after a wrong one you see its result or its error, "
        "and may send a corrected query."
    )
    return (
        "You answer questions about a SQLite database by writing SQL. The first observation describes the "
        "database (its tables, their columns, primary keys and foreign keys) and then asks a question.\n"
        "Answer with exactly one SQLite query: a SELECT (WITH ... SELECT and set operations are fine), in a "
        '```sql block after "Action:". The database is read-only; any other statement is refused. The '
        "answer is right when the query's rows equal the expected rows, in any order, so return the columns "
        "the question asks for, in the order it names them, and nothing else."
        + (
            ""
            if bird
            else " Text values are stored exactly as the question quotes them, and dates as text 'YYYY-MM-DD'."
        )
        + "\n"
        + attempts
    )


class SqlGymEnv(EpisodicEnv):
    """One SQLGym episode at a time; each session holds one read-only connection."""

    name: ClassVar[str] = "sqlgym"
    #: SQL statements per question (AGENTENV_SQLGYM_ROUNDS; a subclass may set it)
    rounds: ClassVar[int] = settings.rounds()
    #: a BIRD folder to serve instead of the generated set (AGENTENV_SQLGYM_BIRD_PATH; a subclass may set it)
    bird_path: ClassVar[Path | None] = settings.bird_path()
    #: where the generated set is cached (``None``: AGENTENV_SQLGYM_CACHE or the user's cache folder)
    cache_root: ClassVar[Path | None] = None
    #: show BIRD's evidence hint after the question (AGENTENV_SQLGYM_EVIDENCE)
    show_evidence: ClassVar[bool] = settings.show_evidence()
    #: an agent's statement is stopped after this long, and at most this many rows are fetched
    time_limit_s: ClassVar[float] = 5.0
    row_cap: ClassVar[int] = 10_000
    #: a step may run the agent's query and, once per process, the gold one: past both their limits
    call_deadline_s: ClassVar[float] = GOLD_TIME_LIMIT_S + 30.0

    splits: ClassVar[dict[str, range]] = task_splits(bird_path)
    max_rounds: ClassVar[int] = rounds
    task_text: ClassVar[str] = describe_task(rounds, bird_path is not None)
    action_prompt: ClassVar[str] = "```sql\nyour SQL query\n```"
    port: ClassVar[int] = 36008
    wire: ClassVar[Wire] = Wire(
        family="env_idx",
        reset_field="item_id",
        reset_answer="pair",  # AgentGym's [observation, null]
        shapes={"step": ("state", "reward", "done", "info")},
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that sets ``rounds`` or ``bird_path`` gets the metadata that follows from them."""
        super().__init_subclass__(**kwargs)
        if "rounds" in cls.__dict__ and "max_rounds" not in cls.__dict__:
            cls.max_rounds = cls.rounds
        if "bird_path" in cls.__dict__ and "splits" not in cls.__dict__:
            cls.splits = task_splits(cls.bird_path)
        changed = "rounds" in cls.__dict__ or "bird_path" in cls.__dict__
        if changed and "task_text" not in cls.__dict__ and "instruction" not in cls.__dict__:
            cls.task_text = describe_task(cls.rounds, cls.bird_path is not None)
            cls.instruction = f"{cls.task_text}\n{reply_format(cls.action_prompt)}"

    @classmethod
    @contextlib.contextmanager
    def shared(cls) -> Iterator[None]:
        """Build (first time on a machine) or load the task catalog before the first session needs it."""
        catalog(cls.bird_path, cls.cache_root)
        yield

    @classmethod
    def metadata(cls) -> dict[str, Any]:
        """``/info``, with the task set this server serves: ``generated`` (and which) or ``bird``."""
        served = (
            {"task_set": "bird"} if cls.bird_path else {"task_set": "generated", "generated": cache_key()}
        )
        return super().metadata() | served

    def __init__(self) -> None:
        super().__init__()
        self.task: Task | None = None
        self.database: ReadOnlyDatabase | None = None

    # --- an episode ---------------------------------------------------------------------------------
    def start(self, data_idx: int) -> str:
        task = catalog(self.bird_path, self.cache_root).task(data_idx)
        if self.database is None or self.database.path != task.db_path:
            self._close_database()
            self.database = ReadOnlyDatabase(
                task.db_path, time_limit_s=self.time_limit_s, row_cap=self.row_cap
            )
        self.task = task
        observation = f"{describe_schema(task.db_path, task.db_id)}\n\n{task.question}"
        if self.show_evidence and task.evidence:
            observation += f"\nHint: {task.evidence}"
        return observation

    def act(self, action: str) -> StepResult:
        assert self.task is not None and self.database is not None
        last = self.steps >= self.rounds
        sql = sql_of_reply(action)
        refused = refusal(sql)
        if refused:
            return self._answer(f"Refused: {refused}.", "refused", last)
        gold = GOLD.get(self.database, self.task.sql, time_limit_s=GOLD_TIME_LIMIT_S, row_cap=GOLD_ROW_CAP)
        gold_known = gold.ok and not gold.capped  # a cut gold result would make a partial answer right
        # an answer may hold as many rows as the gold does, whatever the agent's own cap
        cap = max(self.row_cap, len(gold.rows)) if gold_known else self.row_cap
        result = self.database.run(sql, row_cap=cap)
        if not result.ok:
            return self._answer(
                f"Error: {result.error}", "timeout" if result.timed_out else "error", last, result
            )
        shown = format_rows(result)
        if not gold_known:
            why = gold.error or f"it was cut at {len(gold.rows)} rows, too large to compare"
            return self._answer(
                f"{shown}\nThe expected answer could not be computed: {why}",
                "gold_failed",
                last,
                result,
            )
        if result.capped:
            return self._answer(
                f"{shown}\nThe result was cut at {len(result.rows)} rows (a result holds at most {cap} rows "
                f"and {MAX_RESULT_BYTES // 1_000_000} MB), so it is not the answer.",
                "capped",
                last,
                result,
            )
        if same_rows(result.rows, gold.rows):
            return self._answer(
                f"{shown}\nCorrect: these are the rows the question asks for.", "correct", True, result
            )
        return self._answer(f"{shown}\nWrong: these rows are not the answer.", "wrong", last, result)

    def _answer(self, text: str, status: str, done: bool, result: QueryResult | None = None) -> StepResult:
        """The step's result; an unfinished episode says how many attempts are left."""
        right = status == "correct"
        left = self.rounds - self.steps
        if not done:
            text += f"\n{left} attempt{'s' if left != 1 else ''} left: send a corrected query."
        info: dict[str, Any] = {"status": status}
        if result is not None:
            info |= {"rows": len(result.rows), "capped": result.capped, "seconds": round(result.seconds, 4)}
        if done:
            info["ground_truth"] = self.task.sql  # AgentGym's info field; shown only once the episode is over
        return StepResult(text, reward=1.0 if right else 0.0, terminated=done, info=info)

    def expert_action(self) -> ExpertAction:
        assert self.task is not None
        return ExpertAction(
            self.task.thought or "This query answers the question.", f"```sql\n{self.task.sql}\n```"
        )

    # --- what the kit asks for ---------------------------------------------------------------------------
    def task_type(self) -> str:
        return self.task.task_type if self.task else self.name

    def wire_extras(self, kind: Literal["create", "reset", "step"]) -> dict[str, Any]:
        return {"state": self.last_observation} if kind == "step" else {}

    def detail(self) -> dict[str, Any]:
        found = super().detail()
        if self.task is not None:
            found |= {
                "db_id": self.task.db_id,
                "question": self.task.question,
                "difficulty": self.task.difficulty,
            }
        return found

    def close(self) -> None:
        self._close_database()

    def _close_database(self) -> None:
        if self.database is not None:
            self.database.close()
            self.database = None
