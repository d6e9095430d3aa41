"""How long the generated task set takes to build, per domain and in all, into a fresh temporary folder.

    python agentenv-sqlgym/benchmarks/generation.py [--repeats 3]

Each repeat builds all eight domains in a new folder, as the first use on a machine does (each database,
its questions with their checks, the split), and prints the times and the set's fingerprint (the same on
every repeat: the build is deterministic).  Faker's name pools are built once per process, before.
Wall-clock and CPU seconds are both given, with the load average: on a shared machine the CPU time is
the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from agentenv_sqlgym.database import ReadOnlyDatabase
from agentenv_sqlgym.generate.build import SEED, build, build_database, database_file, draw_questions
from agentenv_sqlgym.generate.domains import DOMAINS
from agentenv_sqlgym.generate.values import vocabulary


def per_domain(folder: Path) -> list[tuple[str, float, float]]:
    """``(domain, CPU seconds for the database, CPU seconds for its questions)``."""
    times = []
    for domain in DOMAINS:
        path = database_file(folder, domain.name)
        start = time.process_time()
        build_database(domain, path, SEED)
        built = time.process_time()
        with ReadOnlyDatabase(path, time_limit_s=30) as database:
            draw_questions(domain, database, SEED)
        times.append((domain.name, built - start, time.process_time() - built))
    return times


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(load())
    start = time.process_time()
    vocabulary(SEED)
    print(f"Faker name pools: {time.process_time() - start:.2f} CPU s (once per process)")
    with tempfile.TemporaryDirectory() as scratch:
        print(f"{'domain':10s} {'database CPU s':>14s} {'questions CPU s':>15s}")
        for name, database, questions in per_domain(Path(scratch)):
            print(f"{name:10s} {database:14.2f} {questions:15.2f}")

    walls, cpus, fingerprints = [], [], set()
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as scratch:
            start, cpu = time.perf_counter(), time.process_time()
            manifest = build(Path(scratch))
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
            fingerprints.add(manifest["fingerprint"])
    print(
        f"whole set ({manifest['questions']} questions, {len(DOMAINS)} databases), {args.repeats} builds: "
        f"wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}), "
        f"CPU median {statistics.median(cpus):.2f} s (min {min(cpus):.2f}); fingerprints {sorted(fingerprints)}"
    )
    print(load())


if __name__ == "__main__":
    main()
