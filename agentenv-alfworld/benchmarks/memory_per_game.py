"""How a process's memory grows with the ALFWorld games it plays: new games against games played before.

    python agentenv-alfworld/benchmarks/memory_per_game.py [--new 100] [--repeat 10 --rounds 8] [--out F.json]

Each episode is a session opened, reset and stepped three times by the expert, then closed (what a server
does for a client).  Part 1 plays ``--new`` different train games, part 2 the same ``--repeat`` games
``--rounds`` times over; the resident memory is read after each game (after a garbage collection).
TextWorld interns the logic objects of every game it loads in a process-wide cache, which the engine
empties past ``engine.INTERNED_KEPT`` objects (about 60 games): memory grows with the first distinct games,
then levels off (the resident memory every 50 new games shows it), and not with the number of episodes.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time

import psutil

from agentenv.registry import env_class
from agentenv.session import LocalSession


def play(cls, data_idx: int) -> None:
    with LocalSession(cls) as session:
        session.reset(data_idx)
        for _ in range(3):
            if session.step(session.expert().action).done:
                break


def rss_mib() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new", type=int, default=100, help="different games played once each")
    parser.add_argument("--repeat", type=int, default=10, help="games played over and over")
    parser.add_argument("--rounds", type=int, default=8, help="times the --repeat games are played")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    cls = env_class("alfworld")
    start, stop = cls.metadata()["splits"]["train"]
    games = random.Random(0).sample(range(start, stop), args.new + args.repeat)
    fresh, repeated = games[: args.new], games[args.new :]
    started = time.perf_counter()

    play(cls, fresh[0])  # imports, the engine's library copy
    first = rss_mib()
    every_50 = []
    for n, idx in enumerate(fresh[1:], 2):
        play(cls, idx)
        if n % 50 == 0:
            every_50.append(round(rss_mib()))
    after_new = rss_mib()
    for idx in repeated:  # once, so that part 2 measures replays only
        play(cls, idx)
    before_rounds = rss_mib()
    for _ in range(args.rounds):
        for idx in repeated:
            play(cls, idx)
    after_rounds = rss_mib()

    figures = {
        "new_games": args.new,
        "mib_per_new_game": round((after_new - first) / max(args.new - 1, 1), 3),
        "replayed_episodes": args.repeat * args.rounds,
        "mib_per_replayed_episode": round((after_rounds - before_rounds) / (args.repeat * args.rounds), 3),
        "rss_mib": {"after_first": round(first), "after_new": round(after_new), "after_replays": round(after_rounds),
                    "every_50_new_games": every_50},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(figures, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
