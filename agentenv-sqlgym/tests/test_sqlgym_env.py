"""SQLGym in process, on the generated task set (built into the cache the first time, as a user gets it)."""

import hashlib
import re
from typing import ClassVar

import pytest
from agentenv_sqlgym import SqlGymEnv
from agentenv_sqlgym.schema import describe_schema
from agentenv_sqlgym.tasks import catalog

from agentenv.react import format_react
from agentenv.session import LocalSession

TEST = SqlGymEnv.splits["test"]


@pytest.fixture(scope="module")
def tasks():
    return catalog(SqlGymEnv.bird_path, SqlGymEnv.cache_root)


@pytest.fixture
def session():
    with LocalSession(SqlGymEnv) as s:
        yield s


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sql_block(sql):
    return f"Thought:\nI query the tables.\n\nAction:\n```sql\n{sql}\n```"


def test_the_expert_solves_every_test_task(session):
    """Issue 32's acceptance: the expert (the gold SQL) scores 1 on the whole test split."""
    failed = []
    for idx in TEST:
        session.reset(idx)
        move = session.expert()
        answer = session.step(format_react(move.thought, move.action))
        if not (answer.done and answer.reward == 1.0 and answer.success):
            failed.append((idx, answer.observation[-200:]))
    assert failed == []


class WithEvidence(SqlGymEnv):
    show_evidence: ClassVar[bool] = True


def test_the_first_observation_is_the_schema_then_the_question(session, tasks):
    idx = next(i for i in TEST if tasks.task(i).evidence)
    task = tasks.task(idx)
    observation = session.reset(idx).observation
    schema, question = observation.split("\n\n")
    assert schema == describe_schema(task.db_path, task.db_id)
    assert schema.startswith(f"{task.db_id} contains tables such as ")
    assert re.search(r"Table \w+ has columns such as [\w, ]+\. \w+ is the primary key\.", schema)
    assert re.search(r"The \w+ of \w+ is the foreign key of \w+ of \w+\.", schema)
    assert question == task.question and task.evidence not in observation  # AgentGym shows no evidence
    with LocalSession(WithEvidence) as hinted:
        assert hinted.reset(idx).observation == f"{observation}\nHint: {task.evidence}"


def test_a_wrong_query_scores_0_and_a_reordered_right_one_scores_1(session, tasks):
    checked = 0
    for idx in TEST:
        task = tasks.task(idx)
        session.reset(idx)
        rows = session.env.database.run(task.sql).rows
        if len(set(rows)) < 3 or " LIMIT " in task.sql:
            continue
        wrong = session.step(sql_block(task.near_miss))
        assert (wrong.reward, wrong.done, wrong.info["status"]) == (0.0, True, "wrong"), task.near_miss
        session.reset(idx)
        reordered = f"SELECT * FROM ({task.sql}) ORDER BY 1 DESC"
        assert session.env.database.run(reordered).rows != rows  # another order ...
        right = session.step(sql_block(reordered))
        assert (right.reward, right.success, right.info["status"]) == (
            1.0,
            True,
            "correct",
        )  # ... still right
        assert right.info["ground_truth"] == task.sql
        checked += 1
        if checked == 10:
            break
    assert checked == 10


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO {table} SELECT * FROM {table}",
        "UPDATE {table} SET {column} = NULL",
        "DELETE FROM {table}",
        "DROP TABLE {table}",
        "ATTACH DATABASE '/tmp/sqlgym-attached.db' AS other",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version = 9",
        "CREATE TABLE stolen AS SELECT * FROM {table}",
        "SELECT * FROM {table}; DROP TABLE {table}",
        "SELECT 1; SELECT 2",
    ],
)
def test_writes_and_two_statements_are_refused_with_the_database_unchanged(session, tasks, statement):
    task = tasks.task(TEST[0])
    table, column = re.search(
        r"Table (\w+) has columns such as (\w+)", describe_schema(task.db_path, task.db_id)
    ).groups()
    before = digest(task.db_path)
    session.reset(TEST[0])
    answer = session.step(sql_block(statement.format(table=table, column=column)))
    assert answer.observation.startswith("Refused: ") and answer.reward == 0.0 and answer.done
    assert answer.info["status"] == "refused"
    assert digest(task.db_path) == before
    session.reset(TEST[0])
    assert session.step(session.expert().action).reward == 1.0  # the data is intact


class SlowLimit(SqlGymEnv):
    time_limit_s: ClassVar[float] = 0.3
    row_cap: ClassVar[int] = 50


def test_a_long_query_is_stopped_and_a_huge_result_capped():
    with LocalSession(SlowLimit) as session:
        session.reset(TEST[0])
        forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
        answer = session.step(sql_block(forever))
        assert answer.reward == 0.0 and answer.info["status"] == "timeout"
        assert "ran past its time limit of 0.3 s" in answer.observation
        session.reset(TEST[0])
        table = session.env.database.run("SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 1").rows[
            0
        ][0]
        answer = session.step(sql_block(f"SELECT * FROM {table} AS a, {table} AS b"))
        assert answer.info["status"] == "capped" and answer.info["rows"] == 50 and answer.reward == 0.0
        assert "more than 50 rows (capped)" in answer.observation
        assert "cut at 50 rows (a result holds at most 50 rows and 8 MB)" in answer.observation


def expert_on_a_task_of_several_rows(session):
    """The expert's answer on the first test task whose result holds more than one row."""
    for idx in TEST:
        session.reset(idx)
        answer = session.step(session.expert().action)
        if answer.info["rows"] > 1:
            return answer
    raise AssertionError("no test task's answer holds several rows")


class OneRowCap(SqlGymEnv):
    row_cap: ClassVar[int] = 1


def test_an_answer_as_large_as_its_gold_is_judged_whatever_the_row_cap():
    """An answer is fetched up to the gold's size: a right answer of more rows than the agent's cap (BIRD
    has golds of over 10,000 rows) was cut and scored 0, the expert's own included."""
    with LocalSession(OneRowCap) as session:
        answer = expert_on_a_task_of_several_rows(session)
        assert answer.info["status"] == "correct" and answer.reward == 1.0 and not answer.info["capped"]


def test_a_step_may_outlast_the_gold_query_s_limit():
    """The gold query may take GOLD_TIME_LIMIT_S once per process: the server's deadline (which closes a
    session whose call outruns it) must leave it that and the agent's own query."""
    from agentenv_sqlgym.env import GOLD_TIME_LIMIT_S

    assert SqlGymEnv.call_deadline_s > GOLD_TIME_LIMIT_S + SqlGymEnv.time_limit_s


def test_a_gold_result_cut_at_its_cap_is_no_answer_key(monkeypatch):
    """A partial gold result made a wrong query that returned part of it score 1."""
    from agentenv_sqlgym import env as sqlgym_env
    from agentenv_sqlgym.database import GoldResults

    monkeypatch.setattr(sqlgym_env, "GOLD_ROW_CAP", 1)
    monkeypatch.setattr(sqlgym_env, "GOLD", GoldResults())  # no result cached under the real cap
    with LocalSession(SqlGymEnv) as session:
        answer = expert_on_a_task_of_several_rows(session)
        assert answer.info["status"] == "gold_failed" and answer.reward == 0.0
        assert "cut at 1 rows, too large to compare" in answer.observation


def test_bad_sql_is_an_observation(session):
    session.reset(TEST[1])
    answer = session.step(sql_block("SELECT no_such_column FROM sqlite_master"))
    assert answer.observation.startswith("Error: no such column") and answer.reward == 0 and answer.done
    session.reset(TEST[1])
    answer = session.step("I would rather not.")
    assert answer.observation.startswith("Refused: the SQL does not parse") and answer.reward == 0


class ThreeRounds(SqlGymEnv):
    rounds: ClassVar[int] = 3


def test_with_rounds_an_agent_sees_its_result_and_revises(tasks):
    assert ThreeRounds.max_rounds == 3 and "You have 3 attempts" in ThreeRounds.instruction
    assert SqlGymEnv.max_rounds == 1 and "one attempt" in SqlGymEnv.instruction
    task = tasks.task(TEST[2])
    with LocalSession(ThreeRounds) as session:
        session.reset(TEST[2])
        first = session.step(sql_block("SELECT 1 FROM nowhere"))
        assert not first.done and first.observation.startswith("Error: no such table")
        assert "2 attempts left" in first.observation and "ground_truth" not in first.info
        second = session.step(sql_block(task.near_miss))
        assert not second.done and "Wrong" in second.observation and "1 attempt left" in second.observation
        third = session.step(sql_block(task.sql))
        assert third.done and third.reward == 1.0 and third.score == 1.0 and third.success
        session.reset(TEST[2])
        for _ in range(3):
            last = session.step(sql_block(task.near_miss))
        assert last.done and last.terminated and last.reward == 0 and last.info["ground_truth"] == task.sql


def test_the_wire_state_is_the_observation_and_detail_names_the_task(session, tasks):
    session.reset(TEST[3])
    answer = session.step(session.expert().action)
    assert answer.model_extra["state"] == answer.observation
    detail, task = session.detail(), tasks.task(TEST[3])
    assert (detail["db_id"], detail["question"], detail["difficulty"]) == (
        task.db_id,
        task.question,
        task.difficulty,
    )
