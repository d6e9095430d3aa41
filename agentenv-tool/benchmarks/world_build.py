"""What each tool env costs before its first episode: importing it, building its world (``warm``, what a server
does at start) and generating every task of its splits; and the memory one live session holds (``tracemalloc``
over 50 envs reset to test tasks).  Each env is measured in a fresh process.

    python agentenv-tool/benchmarks/world_build.py [--envs weather movie ...] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

ENVS = ("weather", "movie", "academia", "sheet", "todo")

PROBE = """
import json, time
t0 = time.perf_counter()
from agentenv.registry import env_class
env = env_class({env!r})
t1 = time.perf_counter()
env.warm()
t2 = time.perf_counter()
indices = [i for split in ("train", "test") for i in env.splits[split]]
for i in indices:
    env.task_of(i)
t3 = time.perf_counter()
import gc, tracemalloc
gc.collect()
tracemalloc.start()
live = []
for i in list(env.splits["test"])[:50]:
    live.append(env())
    live[-1].reset(i)
gc.collect()
held = tracemalloc.get_traced_memory()[0] / len(live)
tracemalloc.stop()
print(json.dumps({{"import_s": t1 - t0, "warm_s": t2 - t1, "tasks": len(indices), "generate_all_s": t3 - t2,
                  "session_kib": held / 1024}}))
"""


def measure(env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE.format(env=env)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=ENVS)
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    figures = {env: measure(env) for env in args.envs}
    print(f"{'env':10} {'import':>8} {'world':>8} {'tasks':>6} {'generate all':>13} {'per task':>9} {'session':>9}")
    for env, f in figures.items():
        print(f"{env:10} {f['import_s']:7.2f}s {f['warm_s']:7.2f}s {f['tasks']:6d} {f['generate_all_s']:12.2f}s "
              f"{1000 * f['generate_all_s'] / f['tasks']:7.1f}ms {f['session_kib']:6.1f}KiB")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
