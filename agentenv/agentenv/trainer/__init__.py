"""Trainers: behavioural cloning, DPO / ETO, AgentEvol, RFT and Best-of-N (see docs/training.md).

Heavy imports (torch, transformers, accelerate) happen inside the functions, so importing this package
and building the CLI stay cheap.
"""

from agentenv.trainer.agentevol import AgentEvolConfig, merge_trajectories, run_agentevol, select_explored
from agentenv.trainer.bc import BCConfig, train_bc
from agentenv.trainer.best_of_n import BestOfNConfig, best_of_n, run_best_of_n
from agentenv.trainer.dpo import DPOConfig, train_dpo
from agentenv.trainer.engine import TrainConfig
from agentenv.trainer.eto import ETOConfig, build_pairs, run_eto
from agentenv.trainer.rft import RFTConfig, run_rft

__all__ = [
    "AgentEvolConfig", "BCConfig", "BestOfNConfig", "DPOConfig", "ETOConfig", "RFTConfig", "TrainConfig",
    "best_of_n", "build_pairs", "merge_trajectories", "run_agentevol", "run_best_of_n", "run_eto", "run_rft",
    "select_explored", "train_bc", "train_dpo",
]
