"""How long the generated task set takes to build, per domain and in all, into a fresh temporary folder.

    python agentenv-sqlgym/benchmarks/generation.py [--repeats 3]

Each repeat builds all eight domains in a new folder, as the first use on a machine does (Faker's name
pools, each database, its questions with their checks, the split), and prints the times and the set's
fingerprint (the same on every repeat: the build is deterministic).  The pools are built once per
process, so the first repeat includes them and later ones do not.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agentenv_sqlgym.database import ReadOnlyDatabase
from agentenv_sqlgym.generate.build import SEED, build, build_database, database_file, draw_questions
from agentenv_sqlgym.generate.domains import DOMAINS
from agentenv_sqlgym.generate.values import vocabulary


def per_domain(folder: Path) -> list[tuple[str, float, float]]:
    """``(domain, seconds for the database, seconds for its questions)``."""
    times = []
    for domain in DOMAINS:
        path = database_file(folder, domain.name)
        start = time.perf_counter()
        build_database(domain, path, SEED)
        built = time.perf_counter()
        with ReadOnlyDatabase(path, time_limit_s=30) as database:
            draw_questions(domain, database, SEED)
        times.append((domain.name, built - start, time.perf_counter() - built))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    vocabulary(SEED)
    print(f"Faker name pools: {time.perf_counter() - start:.2f} s (once per process)")
    with tempfile.TemporaryDirectory() as scratch:
        print(f"{'domain':10s} {'database s':>10s} {'questions s':>11s}")
        for name, database, questions in per_domain(Path(scratch)):
            print(f"{name:10s} {database:10.2f} {questions:11.2f}")

    totals, fingerprints = [], set()
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            manifest = build(Path(scratch))
            totals.append(time.perf_counter() - start)
            fingerprints.add(manifest["fingerprint"])
    print(
        f"whole set ({manifest['questions']} questions, {len(DOMAINS)} databases): "
        f"median {statistics.median(totals):.2f} s, min {min(totals):.2f} s, max {max(totals):.2f} s "
        f"over {args.repeats} builds; fingerprints {sorted(fingerprints)}"
    )


if __name__ == "__main__":
    main()
