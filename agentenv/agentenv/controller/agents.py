"""The agent interface, and building an agent from a command-line spec."""

from __future__ import annotations

from typing import Any

from agentenv.controller.episode import Episode


class Agent:
    """Answers every live episode with one ReAct reply per round.

    ``act`` gets all the episodes that need a reply this round, so an agent can batch them (one generation
    call) or send them concurrently (API calls).  An agent that cannot answer an episode, for example
    because the conversation no longer fits its context, calls ``episode.stop("context_overflow")`` and
    returns an empty reply for it; the rollout engine then ends that episode without stepping the env.
    """

    #: recorded as the trajectories' ``source`` and in the results' metadata
    name: str = "agent"

    def act(self, episodes: list[Episode]) -> list[str]:
        """One reply per episode, in order."""
        raise NotImplementedError

    def release(self, episode: Episode) -> None:
        """Forget anything held for a finished episode (a local model frees its KV cache here)."""

    def settings(self) -> dict[str, Any]:
        """What describes this agent in the results' metadata."""
        return {"name": self.name}

    def progress(self) -> dict[str, int | None]:
        """Signs of life for a live display: ``in_flight`` (model requests, or episodes being generated,
        right now) and ``tokens`` (reply tokens generated so far; ``None`` where the agent makes none)."""
        return {"in_flight": 0, "tokens": None}

    def close(self) -> None:
        """Free the agent's own resources (HTTP clients, thread pools)."""

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_agent_spec(spec: str) -> tuple[str, str]:
    """``(kind, rest)`` of an agent spec, or ``ValueError`` saying what is wrong, without building anything
    (for commands that start servers or load data before they build the agent)."""
    from agentenv.models import check_model_folder

    kind, _, rest = spec.partition(":")
    if kind == "expert" and not rest:
        return kind, rest
    if kind == "openai":
        model, at, url = rest.rpartition("@")
        if not at or not model or not url:
            raise ValueError(f"agent spec {spec!r}: expected openai:MODEL@URL, e.g. openai:qwen@http://127.0.0.1:8000/v1")
        return kind, rest
    if kind == "hf" and rest:
        check_model_folder(rest, label=spec)  # a Hub name: cached here or on a Hub that answers
        return kind, rest
    raise ValueError(f"unknown agent spec {spec!r}: use expert, openai:MODEL@URL or hf:PATH")


def agent_from_spec(spec: str, **options: Any) -> Agent:
    """Build an agent from ``expert``, ``openai:MODEL@URL`` or ``hf:PATH`` (see :func:`check_agent_spec`).

    ``options`` go to the agent's constructor where it takes them (``max_new_tokens``, ``api_key`` ...);
    ones a kind of agent does not take are ignored.
    """
    kind, rest = check_agent_spec(spec)
    if kind == "expert":
        from agentenv.controller.expert import ExpertAgent

        return ExpertAgent(**_accepted(ExpertAgent, options))
    if kind == "openai":
        from agentenv.controller.openai_agent import OpenAIAgent

        model, _, url = rest.rpartition("@")
        return OpenAIAgent(model, url, **_accepted(OpenAIAgent, options))
    from agentenv.controller.hf_agent import HFAgent

    return HFAgent(rest, **_accepted(HFAgent, options))


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    import inspect

    params = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in options.items() if k in params and v is not None}
