"""The controller: agents, the rollout engine and the evaluator.

- :class:`Agent` answers live episodes, one ReAct reply each per round: :class:`ExpertAgent` (the env's
  solver), :class:`OpenAIAgent` (any OpenAI-compatible endpoint), :class:`HFAgent` (a local transformers
  model, batched, KV cache kept per episode).
- :class:`Rollout` runs many episodes at once; :func:`evaluate` / :func:`collect` write resumable AgentTraj
  JSONL and a score table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.controller.agents import Agent, agent_from_spec
from agentenv.controller.episode import Episode
from agentenv.controller.evaluator import EvalTask, collect, evaluate
from agentenv.controller.expert import ExpertAgent
from agentenv.controller.report import EvalReport
from agentenv.controller.rollout import Rollout, RolloutTask, run_episodes
from agentenv.controller.sources import LocalEnv, RemoteEnv

if TYPE_CHECKING:
    from agentenv.controller.hf_agent import HFAgent
    from agentenv.controller.openai_agent import OpenAIAgent

__all__ = [
    "Agent", "agent_from_spec", "Episode", "EvalTask", "collect", "evaluate", "ExpertAgent", "EvalReport",
    "Rollout", "RolloutTask", "run_episodes", "LocalEnv", "RemoteEnv", "HFAgent", "OpenAIAgent",
]


def __getattr__(name: str):
    # torch / httpx agents load on first use, so `import agentenv.controller` stays light
    if name == "HFAgent":
        from agentenv.controller.hf_agent import HFAgent

        return HFAgent
    if name == "OpenAIAgent":
        from agentenv.controller.openai_agent import OpenAIAgent

        return OpenAIAgent
    raise AttributeError(name)


def __dir__() -> list[str]:  # the lazy agents too, for a notebook's completion
    return sorted(set(globals()) | set(__all__))
