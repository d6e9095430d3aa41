"""How fast could the rollout engine be on this machine if its decode attention ran at memory bandwidth?

Issue 37 asks for the engine at 10x the sequential loop of ``benchmarks/rollout_throughput.py``.  Each decode
step's attention reads every row's cached keys and values (fp32), so no kernel can take less than those
bytes over this machine's read bandwidth.  This probe runs the benchmark's engine once with
``scaled_dot_product_attention`` timed per call, counts the bytes each decode call reads, measures the read
bandwidth on buffers of the same shape (four layers in turn, so the 32 MiB L3 does not hold them), and
gives the engine's time with its decode attention replaced by that floor, against a tenth of the
sequential loop's time (measured in the same run unless ``--sequential-seconds`` is given).

    .venv/bin/python research/probes/decode_floor.py --threads 2

Finding (2026-11-26, two AMD EPYC cores, docs/benchmarks.md "Rollout engine"): even at the floor the engine
stays above a tenth of the sequential loop; everything else it does (prefill, the model's other kernels,
cache copies, tokenising) takes most of that tenth on its own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch
import transformers.integrations.sdpa_attention as sdpa_module
from transformers import AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import rollout_throughput as bench  # noqa: E402

from agentenv.testing import tiny_llama  # noqa: E402


def timed_attention(totals: dict[str, float]):
    """SDPA that adds its time (and, for decode calls, the key/value bytes it reads) to ``totals``."""
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def attention(query, key, value, *args, **kwargs):
        start = time.perf_counter()
        out = sdpa(query, key, value, *args, **kwargs)
        kind = "decode" if query.shape[2] == 1 else "prefill"
        totals[f"{kind} seconds"] += time.perf_counter() - start
        totals[f"{kind} calls"] += 1
        if kind == "decode":
            totals["decode bytes"] += key.numel() * key.element_size() + value.numel() * value.element_size()
            totals["decode keys"] += key.shape[2]
        return out

    return attention


def read_bandwidth(rows: int, heads: int, length: int, dim: int, layers: int, repeats: int = 10) -> float:
    """Bytes per second read by summing each layer's keys and values in turn (strided like the engine's)."""
    buffers = [(torch.randn(rows, heads, length + 512, dim)[:, :, :length],
                torch.randn(rows, heads, length + 512, dim)[:, :, :length]) for _ in range(layers)]
    for keys, values in buffers:
        keys.sum(), values.sum()
    start = time.perf_counter()
    for _ in range(repeats):
        for keys, values in buffers:
            keys.sum(), values.sum()
    seconds = time.perf_counter() - start
    return repeats * layers * 2 * rows * heads * length * dim * 4 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--sequential-seconds", type=float, help="the sequential loop's time (default: run it)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = tiny_llama(Path(tmp) / "model", hidden=128, layers=4)
        model = AutoModelForCausalLM.from_pretrained(path).eval()
        tokenizer = AutoTokenizer.from_pretrained(path)
    config = model.config

    sequential = args.sequential_seconds
    if sequential is None:
        sequential, _ = bench.sequential_agentgym_loop(model, tokenizer, args.episodes, args.rounds, args.new_tokens)
    totals: dict[str, float] = defaultdict(float)
    sdpa_module.torch.nn.functional.scaled_dot_product_attention = timed_attention(totals)
    engine, _, _ = bench.engine(model, tokenizer, args.episodes, args.rounds, args.new_tokens, True)

    mean_keys = round(totals["decode keys"] / totals["decode calls"])
    bandwidth = read_bandwidth(args.episodes, config.num_attention_heads, mean_keys, config.head_dim,
                               config.num_hidden_layers)
    floor = totals["decode bytes"] / bandwidth
    rest = engine - totals["decode seconds"] - totals["prefill seconds"]
    print(f"torch threads {torch.get_num_threads()}; {int(totals['decode calls'])} decode attention calls, "
          f"{mean_keys} keys a row on average, {totals['decode bytes'] / 1e9:.0f} GB read; "
          f"read bandwidth {bandwidth / 1e9:.1f} GB/s")
    print()
    print("| part | seconds |\n|---|---:|")
    for name, seconds in [
        ("sequential batch-1 loop", sequential),
        ("engine, KV cache kept", engine),
        ("  decode attention (SDPA)", totals["decode seconds"]),
        ("  prefill attention (SDPA)", totals["prefill seconds"]),
        ("  everything else", rest),
        ("decode attention at the bandwidth floor", floor),
        ("engine with decode attention at the floor", engine - totals["decode seconds"] + floor),
        ("10x target: a tenth of the sequential loop", sequential / 10),
    ]:
        print(f"| {name} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
