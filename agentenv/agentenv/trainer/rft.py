"""Rejection-sampling fine-tuning (RFT), the AgentEvol paper's baseline.

Sample ``samples_per_instruction`` episodes for each instruction of the expert set with the BC agent,
add every distinct successful trajectory to the expert set, and train again from the base model — one
AgentEvol iteration over the BC instructions (``explore_items="data"``) instead of a wider set.  The run
folder, resume and curve are AgentEvol's (:mod:`agentenv.trainer.agentevol`); set ``iterations`` above 1
to repeat it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from agentenv.controller.sources import EnvSource
from agentenv.trainer.agentevol import AgentEvol, AgentEvolConfig


@dataclass(kw_only=True)
class RFTConfig(AgentEvolConfig):
    """RFT settings: AgentEvol's, with RFT's defaults (one round, 4 samples per BC instruction, every
    distinct success kept)."""

    iterations: int = 1
    samples_per_instruction: int = 4
    explore_temperature: float = 1.0
    per_item: str = "distinct"
    explore_items: str = "data"


class RFT(AgentEvol):
    algorithm: ClassVar[str] = "rft"


def run_rft(
    cfg: RFTConfig, *, sources: Mapping[str, EnvSource] | None = None, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) RFT; returns the summary (also in ``<output_dir>/summary.json``)."""
    return RFT(cfg, sources=sources, progress=progress).run()
