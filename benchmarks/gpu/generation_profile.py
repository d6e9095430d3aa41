"""Where the rollout engine's time goes on a GPU: HFAgent generating for a batch of episodes.

SmolLM2-135M's shape with random weights (``benchmarks/gpu/carry.sh`` carries it), bf16, the rollout
benchmark's corridor env (so replies always run to ``--new-tokens``).  Per mode (greedy, sampled, and
greedy with cuDNN's attention allowed, which the agent keeps off), one warm-up round, then the timed rounds
under ``cProfile``, with the model's forward timed on its own (synchronised), so what is left is the
engine's own work between forwards.  First, SDPA alone at a decode shape whose keys grow by one a call,
per backend.

On an H200 (2026-11-26): cuDNN's attention 117 ms a call (a plan for every new length), the memory-efficient
kernel 0.9 ms, math 5.7 ms; the engine's forward 50.9 ms with cuDNN allowed, 30.7 ms without
(docs/benchmarks.md, "GPU").

    python benchmarks/gpu/generation_profile.py --shape .gpu_carry/smollm2_shape --out runs/gen_profile.json
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from rollout_throughput import CorridorEnv  # noqa: E402
from train_throughput import device_name  # noqa: E402

from agentenv.controller import hf_agent  # noqa: E402
from agentenv.controller.hf_agent import HFAgent  # noqa: E402
from agentenv.controller.rollout import Rollout, RolloutTask  # noqa: E402
from agentenv.controller.sources import LocalEnv  # noqa: E402


def profile(model, tokenizer, episodes: int, rounds: int, new_tokens: int, temperature: float) -> dict:
    forward = {"seconds": 0.0, "calls": 0}
    inner = model.forward
    sync = torch.cuda.synchronize if model.device.type == "cuda" else lambda: None

    def timed_forward(*args, **kwargs):
        sync()
        start = time.perf_counter()
        out = inner(*args, **kwargs)
        sync()
        forward["seconds"] += time.perf_counter() - start
        forward["calls"] += 1
        return out

    def rollout(n_rounds: int) -> float:
        agent = HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=new_tokens, batch_size=episodes,
                        temperature=temperature, ignore_eos=True)
        run = Rollout(agent, {"corridor": LocalEnv(CorridorEnv)}, concurrency=episodes, max_rounds=n_rounds)
        start = time.perf_counter()
        run.run([RolloutTask("corridor", i) for i in range(episodes)])
        return time.perf_counter() - start

    rollout(1)  # warm-up: kernels, allocator
    model.forward = timed_forward
    profiler = cProfile.Profile()
    profiler.enable()
    seconds = rollout(rounds)
    profiler.disable()
    del model.forward
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    return {
        "temperature": temperature, "seconds": seconds, "forwards": forward["calls"],
        "forward_seconds": forward["seconds"], "ms_per_forward": 1e3 * forward["seconds"] / forward["calls"],
        "ms_per_step_outside_forward": 1e3 * (seconds - forward["seconds"]) / forward["calls"],
        "top_functions": text.getvalue(),
    }


def sdpa_backends(rows: int = 64, heads: int = 9, length: int = 1000, dim: int = 64, steps: int = 30) -> dict:
    """ms per SDPA call at a decode shape, per backend, with the key length growing by one a call as in
    decoding (a backend that plans per shape pays for each new length)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    results = {}
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
        keys = torch.randn(rows, heads, length + steps, dim, device="cuda", dtype=torch.bfloat16)
        query = torch.randn(rows, heads, 1, dim, device="cuda", dtype=torch.bfloat16)
        try:
            with sdpa_kernel([backend]):
                torch.cuda.synchronize()
                start = time.perf_counter()
                for n in range(length, length + steps):
                    mask = torch.zeros(rows, 1, 1, n, device="cuda", dtype=torch.bfloat16)
                    torch.nn.functional.scaled_dot_product_attention(query, keys[:, :, :n], keys[:, :, :n], attn_mask=mask)
                torch.cuda.synchronize()
            results[backend.name] = 1e3 * (time.perf_counter() - start) / steps
        except RuntimeError as error:
            results[backend.name] = f"unavailable: {str(error).splitlines()[0][:120]}"
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", required=True, help="a model folder's config and tokenizer (weights not read)")
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out")
    args = parser.parse_args()
    config = AutoConfig.from_pretrained(args.shape)
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    model = AutoModelForCausalLM.from_config(config, dtype=dtype).to(args.device).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.shape)
    backends = sdpa_backends() if args.device.startswith("cuda") else {}
    print("SDPA ms a call at a growing decode shape, by backend:", backends)
    results = [profile(model, tokenizer, args.episodes, args.rounds, args.new_tokens, t) for t in (0.0, 1.0)]
    if args.device.startswith("cuda"):  # what the agent's keeping cuDNN's attention off is worth
        hf_agent._attention_backends = lambda device: contextlib.nullcontext()
        results.append(profile(model, tokenizer, args.episodes, args.rounds, args.new_tokens, 0.0))
        results[-1]["sdpa_backends"] = "cuDNN allowed"
    for r in results:
        print(f"temperature {r['temperature']} {r.get('sdpa_backends', '')}: {r['seconds']:.1f} s, {r['forwards']} forwards, "
              f"{r['ms_per_forward']:.1f} ms a forward, {r['ms_per_step_outside_forward']:.1f} ms a step outside it")
        print(r["top_functions"][:6000])
    if args.out:
        Path(args.out).write_text(json.dumps({"device": device_name(args.device), "sdpa_ms_by_backend": backends, "runs": results}, indent=1))


if __name__ == "__main__":
    main()
