"""WebShop's catalog and search index at scale: generation and index build time and memory, loading the
index from its disk cache, and search latency.

    python agentenv-webshop/benchmarks/index.py [--sizes 10000 100000] [--queries 1000] [--out F.json]

Each size runs in a fresh process (so its peak memory is its own): generate the catalog, build the BM25
index (no cache), save it to a temporary cache folder, load it back (memory-mapped, as a server does), then
time ``--queries`` searches: the keywords of generated goals (as an agent or the expert searches) and,
for one in ten, a product title.  Times are wall-clock, and CPU time of the process (``*_cpu_*``), which
other work on a shared machine disturbs far less.  Memory: the growth of the process's peak resident set
over generation and over the index build, and the peak itself.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path


def _rss_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def measure(size: int, queries: int, seed: int) -> dict[str, object]:
    from agentenv_webshop.catalog import generate_catalog
    from agentenv_webshop.goals import generate_goals, search_keywords
    from agentenv_webshop.search import SearchIndex, fingerprint

    base = _rss_peak_mib()
    t, cpu = time.perf_counter(), time.process_time()
    catalog = generate_catalog(size, seed)
    generated, generated_cpu = time.perf_counter() - t, time.process_time() - cpu
    after_catalog = _rss_peak_mib()

    documents = [p.search_text() for p in catalog]
    t, cpu = time.perf_counter(), time.process_time()
    index = SearchIndex.build(documents)
    built, built_cpu = time.perf_counter() - t, time.process_time() - cpu
    after_index = _rss_peak_mib()

    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        index.save(Path(cache) / f"bm25-{fingerprint(documents)}")  # where the cache looks for it
        saved = time.perf_counter() - t
        t = time.perf_counter()
        loaded = SearchIndex.cached(documents, Path(cache))
        load_s = time.perf_counter() - t

        goals = generate_goals(catalog, min(queries, 11_500), seed)
        rng = random.Random(seed)
        texts = [
            catalog[rng.randrange(len(catalog))].title
            if i % 10 == 9
            else search_keywords(goals[i % len(goals)])
            for i in range(queries)
        ]
        latencies, cpu_times, hits = [], [], []
        for text in texts:
            t, cpu = time.perf_counter(), time.process_time()
            found = loaded.search(text)
            latencies.append(time.perf_counter() - t)
            cpu_times.append(time.process_time() - cpu)
            hits.append(len(found))
    ordered, cpu_ordered = sorted(latencies), sorted(cpu_times)
    return {
        "products": size,
        "generate_s": round(generated, 2),
        "generate_cpu_s": round(generated_cpu, 2),
        "build_s": round(built, 2),
        "build_cpu_s": round(built_cpu, 2),
        "save_s": round(saved, 2),
        "load_from_cache_s": round(load_s, 3),
        "catalog_mib": round(after_catalog - base, 1),
        "index_build_peak_mib": round(after_index - after_catalog, 1),
        "peak_rss_mib": round(_rss_peak_mib(), 1),
        "vocabulary": len(loaded.vocabulary),
        "queries": queries,
        "search_median_ms": round(1000 * statistics.median(ordered), 2),
        "search_p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 2),
        "search_cpu_median_ms": round(1000 * statistics.median(cpu_ordered), 2),
        "search_cpu_p99_ms": round(1000 * cpu_ordered[int(0.99 * (len(cpu_ordered) - 1))], 2),
        "mean_results": round(statistics.mean(hits), 1),
    }


def _child(size: int, queries: int, seed: int, out: multiprocessing.Queue) -> None:
    out.put(measure(size, queries, seed))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    results = []
    context = multiprocessing.get_context("spawn")
    for size in args.sizes:
        queue = context.Queue()
        child = context.Process(target=_child, args=(size, args.queries, args.seed, queue))
        child.start()
        results.append(queue.get())
        child.join()
        print(json.dumps(results[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
