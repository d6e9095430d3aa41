"""Where a task index's game file comes from: games generated here, or ALFWorld's original games.

- :class:`GeneratedGames` writes a task's game (see :mod:`.tasks` and :mod:`.pddl`) into a cache folder the
  first time it is played, in ALFWorld's own layout
  (``json_2.1.1/<train|valid_seen|valid_unseen>/<task>-<object>-None-<receptacle>-<floor plan>/trial_agentenv_<index>/``),
  and reads it from there afterwards.  A file lock keeps two processes from writing the same game, and a
  game is written to a temporary folder and renamed into place, so no reader sees half a game.
  ``python -m agentenv_alfworld.games generate`` writes a whole split ahead of time.
- :class:`OriginalGames` serves the games of a ``json_2.1.1`` folder (``alfworld-download``'s data).  With
  AgentGym's ``mappings_train.json`` / ``mappings_test.json`` beside it, task indices are AgentGym's item ids
  (train 0-2419 from ``train/``, test 2420-2619 from ``valid_train/``); without them, train index ``i`` is
  the ``i``-th game of ``train/`` and test index ``2420 + j`` the ``j``-th of ``valid_seen/`` then
  ``valid_unseen/``, in path order.  Games ALFWorld's own loader skips (sliced or movable-receptacle
  tasks, unsolvable ones) are skipped here too.

:func:`game_library` picks one: the original games when ``$ALFWORLD_DATA/json_2.1.1`` exists (ALFWorld's own
rule; ``AGENTENV_ALFWORLD_GAMES=generated`` overrides it), else the generated ones.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from agentenv.env import cache_dir

from . import pddl, tasks

#: bump when generated games change, so that an old cache is not reused
GENERATOR_VERSION = "v2"  # v2: alfworld 0.3.3's grammar (AgentGym's dialect)
SPLIT_FOLDERS = {"train": "train", "test_seen": "valid_seen", "test_unseen": "valid_unseen"}


class GameLibrary(Protocol):
    """Task index -> a ``game.tw-pddl`` file (with ``traj_data.json`` beside it)."""

    #: where the games come from, for ``detail()`` and the logs
    source: str

    def game_file(self, index: int) -> Path: ...

    def task_type(self, index: int) -> str: ...


def default_cache() -> Path:
    """``$AGENTENV_ALFWORLD_CACHE``, else ``$XDG_CACHE_HOME/agentenv/alfworld`` (``~/.cache/...``)."""
    return cache_dir("alfworld", "AGENTENV_ALFWORLD_CACHE")


class GeneratedGames:
    """Generated games, written into ``cache`` on first use."""

    source = "generated"

    def __init__(self, cache: Path | None = None) -> None:
        self.root = (cache or default_cache()) / f"generated-{GENERATOR_VERSION}"
        self.data = self.root / "json_2.1.1"

    def folder(self, index: int) -> Path:
        task = tasks.task(index)
        return self.data / SPLIT_FOLDERS[task.split] / task.name / f"trial_agentenv_{index:05d}"

    def game_file(self, index: int) -> Path:
        path = self.folder(index) / "game.tw-pddl"
        if not path.exists():
            self.generate([index])
        return path

    def task_type(self, index: int) -> str:
        return tasks.task_type_of(index)

    def generate(self, indices: Iterable[int]) -> int:
        """Write the games of ``indices`` not yet in the cache; returns how many were written."""
        written = 0
        with self._lock():
            for index in indices:
                folder = self.folder(index)
                if (folder / "game.tw-pddl").exists():
                    continue
                folder.parent.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
                try:
                    pddl.write_game(tasks.task(index), staging)
                    staging.rename(folder)
                except BaseException:
                    shutil.rmtree(staging, ignore_errors=True)
                    raise
                written += 1
        return written

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


class OriginalGames:
    """ALFWorld's released games under ``root`` (a ``json_2.1.1`` folder or the folder holding one)."""

    source = "original"

    def __init__(self, root: Path) -> None:
        root = Path(root)
        self.data = root if root.name == "json_2.1.1" else root / "json_2.1.1"
        if not self.data.is_dir():
            raise FileNotFoundError(f"no json_2.1.1 folder at {root}")
        self.games = self._agentgym_ids() or self._path_order()

    def _agentgym_ids(self) -> dict[int, Path]:
        """AgentGym's item ids, from its mapping files beside ``json_2.1.1`` (empty if they are absent)."""
        games: dict[int, Path] = {}
        for name, folder in (("mappings_train.json", "train"), ("mappings_test.json", "valid_train")):
            mapping = self.data.parent / name
            if not mapping.is_file():
                continue
            for entry in json.loads(mapping.read_text()):
                path = self.data / folder / entry["task_type"] / entry["task_id"] / "game.tw-pddl"
                games[int(entry["item_id"])] = path
        return games

    def _path_order(self) -> dict[int, Path]:
        train = playable_games(self.data / "train")
        test = playable_games(self.data / "valid_seen") + playable_games(self.data / "valid_unseen")
        first_test = tasks.SPLITS["test"].start
        return {**dict(enumerate(train[:first_test])), **{first_test + j: p for j, p in enumerate(test)}}

    def game_file(self, index: int) -> Path:
        path = self.games.get(index)
        if path is None or not path.is_file():
            raise LookupError(f"task {index} has no ALFWorld game under {self.data}")
        return path

    def task_type(self, index: int) -> str:
        return self.game_file(index).parent.parent.name.split("-", 1)[0]


def playable_games(folder: Path) -> list[Path]:
    """The game files under ``folder`` that ALFWorld's loader plays: a solvable game of the six task types,
    not a sliced or movable-receptacle task, in path order."""
    if not folder.is_dir():
        return []
    found = []
    for traj in sorted(folder.glob("*/*/traj_data.json")):
        game = traj.parent / "game.tw-pddl"
        if "movable" in str(traj.parent) or "Sliced" in str(traj.parent) or not game.is_file():
            continue
        if traj.parent.parent.name.split("-", 1)[0] not in tasks.TASK_TYPES:
            continue
        try:
            if not json.loads(game.read_text()).get("solvable"):
                continue
        except (OSError, ValueError):
            continue
        found.append(game)
    return found


@functools.lru_cache(maxsize=8)
def _original(root: str) -> OriginalGames:
    return OriginalGames(Path(root))


def original_data() -> Path | None:
    """``$ALFWORLD_DATA`` when it holds a ``json_2.1.1`` folder (or is one), else ``None``."""
    data = os.environ.get("ALFWORLD_DATA")
    if not data:
        return None
    path = Path(data).expanduser()
    if path.name == "json_2.1.1" and path.is_dir():
        return path.parent
    return path if (path / "json_2.1.1").is_dir() else None


def game_library() -> GameLibrary:
    """The original games if ALFWorld's data is present (and not overridden), else the generated ones."""
    choice = os.environ.get("AGENTENV_ALFWORLD_GAMES", "auto")
    if choice not in ("auto", "generated", "original"):
        raise ValueError(f"AGENTENV_ALFWORLD_GAMES must be auto, generated or original, not {choice!r}")
    data = original_data() if choice != "generated" else None
    if data is not None:
        return _original(str(data))
    if choice == "original":
        raise FileNotFoundError("AGENTENV_ALFWORLD_GAMES=original, but $ALFWORLD_DATA holds no json_2.1.1 folder")
    return GeneratedGames()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agentenv_alfworld.games", description="Write generated ALFWorld games into the cache."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write the games of some splits (default: all)")
    gen.add_argument("--split", action="append", choices=sorted(tasks.SPLITS), help="a split (repeatable)")
    gen.add_argument("--cache", type=Path, default=None, help="cache folder (default: %(default)s)")
    args = parser.parse_args(argv)
    library = GeneratedGames(args.cache)
    indices = sorted({i for split in (args.split or ["train", "test"]) for i in tasks.SPLITS[split]})
    start = time.perf_counter()
    written = library.generate(indices)
    print(f"{written} games written ({len(indices) - written} already there) in {time.perf_counter() - start:.1f} s "
          f"under {library.data}")


if __name__ == "__main__":
    main()
