"""Run one training stage of an iterative algorithm, in this process or under a launcher.

The AgentEvol / ETO / RFT loops run in one process.  Their training stages can run right there (one GPU,
or CPU) or, with ``train_launcher``, as a child command such as ``torchrun --nproc_per_node 8`` or
``accelerate launch --config_file examples/accelerate/zero3.yaml`` that runs
``python -m agentenv.trainer bc|dpo --config <output_dir>/launch_config.json`` on many GPUs.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from agentenv.data.trajectory import write_json
from agentenv.processes import run_process_group
from agentenv.trainer.engine import TrainConfig, already_trained, is_done


def launch_command(algorithm: str, config_path: Path, launcher: str) -> list[str]:
    """The child command: ``<launcher> -m agentenv.trainer <algorithm> --config <file>``."""
    prefix = shlex.split(launcher) if launcher.strip() else [sys.executable]
    prefix[0] = find_program(prefix[0]) or prefix[0]
    return prefix + ["-m", "agentenv.trainer", algorithm, "--config", str(config_path)]


def find_program(name: str) -> str | None:
    """``name`` on PATH, else beside this Python (a virtual environment's ``torchrun`` when it is not
    activated); ``None`` where neither has it."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.is_file() else None)


def run_training(algorithm: str, cfg: TrainConfig, launcher: str = "") -> Path:
    """Train with ``cfg`` (``algorithm`` is ``bc`` or ``dpo``) and return its output folder.

    A finished output folder is returned as it is; an interrupted one resumes from its latest checkpoint.
    """
    out = Path(cfg.output_dir)
    if already_trained(cfg):  # --no-resume trains again
        return out
    if not launcher.strip():
        if algorithm == "bc":
            from agentenv.trainer.bc import train_bc

            return train_bc(cfg)
        if algorithm == "dpo":
            from agentenv.trainer.dpo import train_dpo

            return train_dpo(cfg)
        raise ValueError(f"unknown training algorithm {algorithm!r}")
    config_path = out / "launch_config.json"
    write_json(config_path, cfg.to_json())
    cmd = launch_command(algorithm, config_path, launcher)
    print("[agentenv] launching: " + shlex.join(cmd), file=sys.stderr, flush=True)
    status = run_process_group(cmd)  # interrupted, it stops the launcher's workers too
    if status != 0 or not is_done(out):
        raise RuntimeError(f"training failed (exit status {status}): {shlex.join(cmd)}")
    return out
