"""Trainers: behavioural cloning, DPO / ETO, AgentEvol, RFT and Best-of-N (see docs/training.md).

Heavy imports (torch, transformers, accelerate) happen inside the functions, so importing this package
and building the CLI stay cheap.
"""

from agentenv.trainer.bc import BCConfig, train_bc
from agentenv.trainer.engine import TrainConfig

__all__ = ["BCConfig", "TrainConfig", "train_bc"]
