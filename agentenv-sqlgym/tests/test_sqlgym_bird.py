"""The real BIRD layout: a small sample written here in BIRD's format loads, plays and is served under
AgentGym's item ids (train i -> i, dev j -> 9428 + j)."""

import json
import sqlite3
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from agentenv_sqlgym import SqlGymEnv, bird
from agentenv_sqlgym.schema import describe_schema

from agentenv.react import format_react
from agentenv.session import LocalSession
from agentenv.testing import running_server

TRAIN = [
    {
        "db_id": "shop",
        "question": "How many customers live in Lyon?",
        "evidence": "live in Lyon refers to City = 'Lyon'",
        "SQL": "SELECT COUNT(*) FROM customers WHERE City = 'Lyon'",
    },
    {
        "db_id": "shop",
        "question": "List the names of the customers who ordered more than once.",
        "evidence": "",
        "SQL": "SELECT T1.`Customer Name` FROM customers AS T1 INNER JOIN orders AS T2 ON T1.CustomerID = T2.CustomerID "
        "GROUP BY T1.CustomerID HAVING COUNT(*) > 1",
    },
    {
        "db_id": "shop",
        "question": "What is the total of the orders of Ana?",
        "evidence": "Ana is a Customer Name",
        "SQL": "SELECT SUM(T2.Total) FROM customers AS T1 INNER JOIN orders AS T2 ON T1.CustomerID = T2.CustomerID "
        "WHERE T1.`Customer Name` = 'Ana'",
    },
]
DEV = [
    {
        "question_id": 0,
        "db_id": "zoo",
        "question": "Which animals are older than 10?",
        "evidence": "older than 10 refers to age > 10",
        "SQL": "SELECT name FROM animals WHERE age > 10",
        "difficulty": "simple",
    },
    {
        "question_id": 1,
        "db_id": "zoo",
        "question": "How many animals does each keeper look after? Give the keeper's name and the count.",
        "evidence": "",
        "SQL": "SELECT T1.name, COUNT(*) FROM keepers AS T1 INNER JOIN animals AS T2 ON T1.id = T2.keeper_id GROUP BY T1.id",
        "difficulty": "moderate",
    },
]


def write_sample(root: Path) -> Path:
    """BIRD's layout: {mode}/{mode}.json and {mode}/{mode}_databases/{db}/{db}.sqlite."""
    for mode, items, schema, rows in (
        (
            "train",
            TRAIN,
            "CREATE TABLE customers (CustomerID INTEGER PRIMARY KEY, `Customer Name` TEXT, City TEXT);"
            "CREATE TABLE orders (OrderID INTEGER PRIMARY KEY, CustomerID INTEGER REFERENCES customers (CustomerID), Total REAL);",
            "INSERT INTO customers VALUES (1, 'Ana', 'Lyon'), (2, 'Ben', 'Lyon'), (3, 'Cy', 'Nice');"
            "INSERT INTO orders VALUES (1, 1, 10.5), (2, 1, 4.5), (3, 2, 7.0), (4, 3, 1.0), (5, 3, 2.0);",
        ),
        (
            "dev",
            DEV,
            "CREATE TABLE keepers (id INTEGER PRIMARY KEY, name TEXT);"
            "CREATE TABLE animals (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, keeper_id INTEGER REFERENCES keepers);",
            "INSERT INTO keepers VALUES (1, 'Kim'), (2, 'Lou');"
            "INSERT INTO animals VALUES (1, 'lion', 12, 1), (2, 'owl', 3, 1), (3, 'tortoise', 80, 2), (4, 'zebra', 9, 2);",
        ),
    ):
        (root / mode).mkdir(parents=True)
        (root / mode / f"{mode}.json").write_text(json.dumps(items))
        db_id = items[0]["db_id"]
        path = root / mode / f"{mode}_databases" / db_id / f"{db_id}.sqlite"
        path.parent.mkdir(parents=True)
        with sqlite3.connect(path) as db:
            db.executescript(schema + rows)
    return root


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return write_sample(tmp_path_factory.mktemp("bird"))


@pytest.fixture(scope="module")
def SampleBird(sample):  # noqa: N802 - a class
    class SampleBird(SqlGymEnv):
        bird_path: ClassVar[Path] = sample

    return SampleBird


def test_the_sample_gets_agentgym_item_ids(SampleBird):  # noqa: N803
    assert SampleBird.splits == {"train": range(0, 3), "dev": range(9428, 9430)}
    assert SampleBird.metadata()["task_set"] == "bird"
    assert SqlGymEnv.splits["train"] == range(20000, 21920)  # the generated set: its own ids, past BIRD's


def test_the_sample_plays_like_agentgym(SampleBird, sample):  # noqa: N803
    with LocalSession(SampleBird) as session:
        first = session.reset(0)
        path = sample / "train" / "train_databases" / "shop" / "shop.sqlite"
        assert first.observation == f"{describe_schema(path, 'shop')}\n\n{TRAIN[0]['question']}"
        assert first.observation.startswith(
            "shop contains tables such as customers, orders. Table customers has "
            'columns such as CustomerID, "Customer Name", City. CustomerID is the primary key.'
        )
        assert "The CustomerID of orders is the foreign key of CustomerID of customers." in first.observation
        assert "Lyon refers to" not in first.observation and first.task_type == "bird"
        for idx in (0, 1, 2, 9428, 9429):
            session.reset(idx)
            move = session.expert()
            answer = session.step(format_react(move.thought, move.action))
            assert answer.reward == 1.0 and answer.done, (idx, answer.observation)
        assert session.reset(9429).task_type == "bird_moderate"
        wrong = session.step(
            "```sql\nSELECT T1.name, COUNT(*) FROM keepers AS T1 INNER JOIN animals AS T2 ON T1.id = T2.id GROUP BY T1.id\n```"
        )
        assert wrong.reward == 0.0 and wrong.done and wrong.info["ground_truth"] == DEV[1]["SQL"]
        session.reset(9428)
        reordered = session.step("```sql\nSELECT name FROM animals WHERE age > 10 ORDER BY age DESC\n```")
        assert reordered.reward == 1.0


def test_the_sample_is_served_under_agentgym_ids(SampleBird):  # noqa: N803
    with running_server(SampleBird) as url, httpx.Client(base_url=url, timeout=60) as http:
        env_idx = http.post("/create").json()
        observation, _ = http.post("/reset", json={"env_idx": env_idx, "item_id": 9429}).json()
        assert observation.startswith("zoo contains tables such as keepers, animals.")
        assert observation.endswith(DEV[1]["question"])
        step = http.post("/step", json={"env_idx": env_idx, "action": DEV[1]["SQL"]}).json()
        assert step["reward"] == 1.0 and step["state"].startswith("The query returned 2 rows")
        assert http.post("/reset", json={"env_idx": env_idx, "item_id": 3}).status_code == 422
        assert http.get("/info").json()["splits"] == {"train": [0, 3], "dev": [9428, 9430]}


def test_a_broken_folder_serves_nothing_and_says_why(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "dev.json").write_text(json.dumps({"not": "a list"}))
    with pytest.warns(UserWarning, match="a BIRD question file is a JSON list"):
        assert bird.splits(tmp_path) == {}
    (tmp_path / "dev" / "dev.json").write_text(
        json.dumps([{"db_id": "../../etc", "question": "q", "SQL": "SELECT 1"}])
    )
    with pytest.warns(UserWarning, match="no plain database id"):
        assert bird.splits(tmp_path) == {}
