"""What generating ALFWorld's games costs, and what a first load costs against a reset of a game played before.

    python agentenv-alfworld/benchmarks/generation.py [--splits train test] [--loads 10] [--out F.json]

1. **Tasks**: drawing every task of the splits (room, goal, placements; ``agentenv_alfworld.tasks.task``) in a
   fresh process, the seen-test rule's pass over the train goals included.
2. **Files**: writing each task's game files (``game.tw-pddl``, ``initial_state.pddl``, ``traj_data.json``) into
   an empty cache, as ``python -m agentenv_alfworld.games generate`` does; the time and the disk it takes.
3. **Engine**: for ``--loads`` test games, the first load of each (ALFWorld's engine translating the problem
   with Fast Downward) and a second reset of the same game (the translation remembered).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", nargs="+", default=["train", "test"])
    parser.add_argument("--loads", type=int, default=10, help="test games loaded by the engine")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    start = time.perf_counter()
    from agentenv_alfworld import tasks

    imported = time.perf_counter() - start
    indices = sorted({i for split in args.splits for i in tasks.SPLITS[split]})
    start = time.perf_counter()
    for index in indices:
        tasks.task(index)
    drawn = time.perf_counter() - start

    from agentenv_alfworld.games import GeneratedGames

    with tempfile.TemporaryDirectory() as cache:
        games = GeneratedGames(Path(cache))
        start = time.perf_counter()
        written = games.generate(indices)
        wrote = time.perf_counter() - start
        size = sum(f.stat().st_size for f in games.data.rglob("*") if f.is_file())

        from agentenv_alfworld.engine import GameEngine

        engine = GameEngine()
        step = max(len(tasks.SPLITS["test"]) // max(args.loads, 1), 1)
        loaded, again = [], []
        for index in list(tasks.SPLITS["test"])[::step][: args.loads]:
            start = time.perf_counter()
            engine.load(games.game_file(index))
            loaded.append(time.perf_counter() - start)
            start = time.perf_counter()
            engine.restart()
            again.append(time.perf_counter() - start)
        engine.close()

    figures = {
        "splits": args.splits,
        "tasks": len(indices),
        "import_s": round(imported, 2),
        "draw_all_tasks_s": round(drawn, 2),
        "write_all_games_s": round(wrote, 2),
        "games_written": written,
        "write_per_game_ms": round(1000 * wrote / max(written, 1), 2),
        "disk_mib": round(size / 2**20, 1),
        "disk_per_game_kib": round(size / 1024 / max(written, 1), 1),
        "first_load_median_s": round(statistics.median(loaded), 2),
        "first_load_max_s": round(max(loaded), 2),
        "reset_again_median_s": round(statistics.median(again), 3),
    }
    for key, value in figures.items():
        print(f"{key:>24}: {value}")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
