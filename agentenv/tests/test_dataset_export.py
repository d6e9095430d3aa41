"""``agentenv collect --out-dataset``: expert trajectories from real Maze, Wordle and BabyAI servers as a
Hugging Face datasets folder that ``datasets.load_dataset`` reads with the right counts and fields, that a
rerun resumes, and that ``agentenv train bc --data DIR`` trains the tiny Llama on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentenv.cli import main
from agentenv.data.export import raw_path
from agentenv.registry import env_class
from agentenv.testing import running_server
from agentenv.trainer.engine import is_done, read_log

datasets = pytest.importorskip("datasets")
pytest.importorskip("agentenv_lmrlgym", reason="the dataset test plays Maze and Wordle (agentenv-lmrlgym)")
pytest.importorskip("agentenv_babyai", reason="the dataset test plays BabyAI (agentenv-babyai)")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FIELDS = ["item_id", "conversations", "reward", "success", "env", "split", "source", "meta"]


@pytest.fixture(scope="module")
def servers():
    """A Maze + Wordle server (their group) and a BabyAI server, on free loopback ports."""
    with running_server([env_class("maze"), env_class("wordle")]) as lmrlgym, running_server([env_class("babyai")]) as babyai:
        yield [f"maze={lmrlgym}", f"wordle={lmrlgym}", f"babyai={babyai}"]


def collect(servers: list[str], out: Path, *options: str) -> int:
    return main(["collect", "--env", "maze,wordle,babyai", "--url", *servers, "--out-dataset", str(out),
                 "--no-progress", *options])


@pytest.fixture(scope="module")
def dataset(servers, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("agenttraj") / "expert"
    assert collect(servers, out, "--limit", "4") == 0
    return out


def test_load_dataset_reads_the_folder_with_its_counts_and_fields(dataset):
    every = datasets.load_dataset(str(dataset), split="train")
    assert every.column_names == FIELDS and every.num_rows == 12
    assert sorted(every["env"]) == ["babyai"] * 4 + ["maze"] * 4 + ["wordle"] * 4
    assert all(every["success"]) and set(every["split"]) == {"train"} and set(every["source"]) == {"expert"}
    row = every[0]
    assert row["conversations"][0]["from"] == "human" and row["conversations"][-1]["from"] == "gpt"
    meta = json.loads(row["meta"])
    assert len(meta["rewards"]) == meta["rounds"] and meta["task_type"]

    wordle = datasets.load_dataset(str(dataset), "wordle", split="train")
    assert wordle.num_rows == 4 and set(wordle["env"]) == {"wordle"}

    card = (dataset / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: babyai" in card
    for env in ("babyai", "maze", "wordle"):  # env, its version, episodes played, trajectories kept
        assert re.search(rf"^\| {env} \| [\w.]+ \| 4 \| 4 \|", card, re.MULTILINE)
    assert "12 trajectories of the `expert` agent" in card and "agentenv collect --out-dataset" in card


def test_a_rerun_plays_nothing_again(servers, dataset):
    lines = raw_path(dataset).read_text().count("\n")
    shards = sorted(p.name for p in (dataset / "data").iterdir())
    assert shards == [f"{env}-00000-of-00001.parquet" for env in ("babyai", "maze", "wordle")]
    assert collect(servers, dataset, "--limit", "4") == 0
    assert raw_path(dataset).read_text().count("\n") == lines
    assert sorted(p.name for p in (dataset / "data").iterdir()) == shards
    # killed in the middle of swapping the shards: the old ones set aside, the new ones not yet in place
    (dataset / "data").rename(dataset / "data.old")
    (dataset / "data.tmp").mkdir()
    assert collect(servers, dataset, "--limit", "4") == 0
    assert sorted(p.name for p in (dataset / "data").iterdir()) == shards
    assert sorted(p.name for p in dataset.iterdir()) == [".collect", "README.md", "data"]


def test_env_all_plays_each_envs_standard_number_of_tasks(servers, tmp_path, monkeypatch):
    import agentenv.registry

    monkeypatch.setattr(agentenv.registry, "installed_envs", lambda: ["maze", "wordle"])
    monkeypatch.setattr(env_class("maze"), "dataset_size", 3)
    monkeypatch.setattr(env_class("wordle"), "dataset_size", 2)
    out = tmp_path / "all"
    assert main(["collect", "--env", "all", "--url", *servers[:2], "--out-dataset", str(out), "--no-progress"]) == 0
    counts = datasets.load_dataset(str(out), split="train").to_pandas()["env"].value_counts().to_dict()
    assert counts == {"maze": 3, "wordle": 2}


def test_collect_wants_one_output(capsys):
    with pytest.raises(SystemExit, match=r"^error: give --out FILE.jsonl or --out-dataset DIR \(one of them\)$"):
        main(["collect", "--env", "maze"])


def test_a_folder_of_the_users_own_is_refused_and_kept(servers, tmp_path):
    """Writing a dataset replaces the folder's README.md and data/: a folder holding files collect did not
    write is refused before any episode is played, its files untouched."""
    (tmp_path / "README.md").write_text("my notes")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mine.csv").write_text("1,2")
    with pytest.raises(SystemExit, match="holds files of its own, and a dataset is written there as README.md and data/: give a new or empty folder"):
        collect(servers, tmp_path, "--limit", "1")
    assert (tmp_path / "README.md").read_text() == "my notes" and (tmp_path / "data" / "mine.csv").exists()
    assert not raw_path(tmp_path).exists()


def test_train_bc_trains_from_the_folder(dataset, base_model, tmp_path):
    out = tmp_path / "bc"
    assert main(["train", "bc", "--model", str(base_model), "--data", str(dataset), "--output-dir", str(out),
                 "--max-steps", "2", "--batch-size", "4", "--max-length", "4096"]) in (0, None)
    log = read_log(out)
    assert [line["step"] for line in log] == [1, 2] and all(line["loss"] > 0 for line in log)
    assert is_done(out) and (out / "model.safetensors").exists()


def test_its_shards_folder_names_the_dataset_folder_to_give(dataset):
    """`--data DIR/data` said "no trajectories": its parquet shards are read through the folder above."""
    from agentenv.data.dataset import load_trajectory_dataset

    with pytest.raises(ValueError, match=r"data holds the shards of the dataset folder .*expert: give that folder"):
        load_trajectory_dataset(dataset / "data")
    assert load_trajectory_dataset(dataset).num_rows == 12


def test_a_rerun_with_fewer_envs_keeps_what_the_folder_holds(servers, dataset, capsys):
    """Rerun with --env maze, the dataset lost babyai's and wordle's trajectories without a word (they stayed
    in .collect only); its card said 'train splits' whatever split was played."""
    assert main(["collect", "--env", "maze", "--url", servers[0], "--out-dataset", str(dataset), "--no-progress",
                 "--limit", "4"]) == 0
    said = capsys.readouterr().err
    assert "12 trajectories in" in said and "from earlier runs into it, episodes of tasks this run did not name: 8 " \
           "of the train split" in said
    assert datasets.load_dataset(str(dataset), split="train").num_rows == 12
    card = (dataset / "README.md").read_text()
    assert "on the train splits of 3 environments" in card
    for env in ("babyai", "maze", "wordle"):  # the versions of envs this run did not play are kept too
        assert re.search(rf"^\| {env} \| [\w.]+ \| 4 \| 4 \|", card, re.MULTILINE)


def test_the_card_names_the_splits_played(servers, tmp_path):
    out = tmp_path / "test_split"
    assert main(["collect", "--env", "maze", "--url", servers[0], "--out-dataset", str(out), "--no-progress",
                 "--split", "test", "--limit", "2"]) == 0
    assert "on the test split of 1 environment (" in (out / "README.md").read_text()


def test_a_datasets_rows_are_in_task_order_whatever_order_the_episodes_finished_in(tmp_path):
    """Rows were written in the order episodes finished: a dataset collected twice was other files."""
    from agentenv.data.export import read_dataset_folder, write_dataset
    from agentenv.data.trajectory import Trajectory

    episodes = []
    for idx, sample in [(7, 1), (3, 0), (7, 0), (12, 0)]:
        t = Trajectory.start("maze", idx, "Reach the goal.")
        t.meta["sample"] = sample
        t.add_observation(f"task {idx}")
        t.add_reply("move up")
        t.reward, t.success = 1.0, True
        episodes.append(t)
    write_dataset(tmp_path / "a", episodes)
    write_dataset(tmp_path / "b", episodes[::-1])
    shards = [sorted((tmp_path / name).rglob("*.parquet")) for name in ("a", "b")]
    assert [p.read_bytes() for p in shards[0]] == [p.read_bytes() for p in shards[1]]
    assert [(t.data_idx, t.meta.get("sample", 0)) for t in read_dataset_folder(tmp_path / "a")] == [(3, 0), (7, 0), (7, 1), (12, 0)]


def test_a_rerun_that_adds_nothing_leaves_an_earlier_exports_rows_in_their_order(tmp_path):
    """An export of an earlier version holds its rows in the order episodes finished. A rerun of collect that
    added nothing wrote them again in task order, and a BC checkpoint over the first order was then refused
    as saved on "other data"."""
    from agentenv.data.export import _write_shards, read_dataset_folder, write_dataset
    from agentenv.data.trajectory import Trajectory

    def episode(idx: int) -> Trajectory:
        t = Trajectory.start("maze", idx, "Reach the goal.")
        t.add_observation(f"task {idx}")
        t.add_reply("move up")
        t.reward, t.success = 1.0, True
        return t

    finished = [episode(i) for i in (7, 3, 12)]
    raw_path(tmp_path).parent.mkdir()
    raw_path(tmp_path).touch()  # a folder collect wrote
    _write_shards(tmp_path, {"maze": finished})  # as the earlier version wrote them
    (shard,) = (tmp_path / "data").glob("*.parquet")
    before = shard.read_bytes()
    counts = write_dataset(tmp_path, finished[::-1])
    assert counts == {"maze": {"episodes": 3, "kept": 3}} and (tmp_path / "README.md").exists()
    assert shard.read_bytes() == before
    assert [t.data_idx for t in read_dataset_folder(tmp_path)] == [7, 3, 12]
    # one more episode: the rows are written again, in task order
    write_dataset(tmp_path, [*finished, episode(5)])
    assert [t.data_idx for t in read_dataset_folder(tmp_path)] == [3, 5, 7, 12]
