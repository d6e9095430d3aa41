"""The optional judge behind WebArena's ``fuzzy_match``: a chat model on an OpenAI-compatible endpoint.

WebArena asks a model whether an answer means the same as a reference and reads its verdict ("correct",
"incorrect" or "partially correct": only "correct" counts); for a task that cannot be done (reference
"N/A"), whether the answer gives the same reason as the task's ``string_note``.  Configure it with
``WEBARENA_JUDGE_URL`` (e.g. ``http://127.0.0.1:8000/v1``), ``WEBARENA_JUDGE_MODEL`` and
``WEBARENA_JUDGE_API_KEY`` (or ``OPENAI_API_KEY``).  Without one, ``fuzzy_match`` falls back to an exact
match of the cleaned strings (see :mod:`agentenv_webarena.evaluators`).
"""

from __future__ import annotations

import os

import httpx

URL_ENV_VAR = "WEBARENA_JUDGE_URL"
MODEL_ENV_VAR = "WEBARENA_JUDGE_MODEL"
KEY_ENV_VAR = "WEBARENA_JUDGE_API_KEY"
#: WebArena's judge
DEFAULT_MODEL = "gpt-4-1106-preview"

SYSTEM = "You grade answers to questions about web pages. You are strict but fair."
FUZZY_PROMPT = """A web agent was asked: {question}
The reference answer is: {reference}
The agent answered: {answer}
The agent may phrase its answer differently from the reference; judge whether it means the same thing.
The string "N/A" stands for "this cannot be done".
End your reply with one verdict: correct, incorrect, or partially correct."""
UNACHIEVABLE_PROMPT = """A web agent was asked: {question}
The task cannot be done, for this reason: {reason}
The agent answered: {answer}
Does the agent's answer say that the task cannot be done, for the same reason (or a reason that means the
same)? End your reply with one verdict: same, or different."""


class JudgeError(RuntimeError):
    """The judge could not be asked (unreachable, an error answer, no verdict)."""


class Judge:
    """One OpenAI-compatible chat endpoint used as WebArena's fuzzy-match judge."""

    def __init__(self, base_url: str, model: str = DEFAULT_MODEL, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    @classmethod
    def from_environment(cls) -> Judge | None:
        url = os.environ.get(URL_ENV_VAR, "").strip()
        if not url:
            return None
        key = os.environ.get(KEY_ENV_VAR) or os.environ.get("OPENAI_API_KEY")
        return cls(url, os.environ.get(MODEL_ENV_VAR, DEFAULT_MODEL), key)

    def ask(self, prompt: str) -> str:
        """The model's reply to one prompt (temperature 0)."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": 512,
        }
        try:
            answer = httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout)
            answer.raise_for_status()
            return str(answer.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise JudgeError(f"the judge at {self.base_url} failed: {exc}") from exc

    def fuzzy(self, question: str, reference: str, answer: str) -> bool:
        """Whether ``answer`` means the same as ``reference`` (only a plain "correct" verdict counts)."""
        verdict = self.ask(FUZZY_PROMPT.format(question=question, reference=reference, answer=answer)).lower()
        if "partially correct" in verdict or "incorrect" in verdict:
            return False
        if "correct" in verdict:
            return True
        raise JudgeError(f"the judge gave no verdict: {verdict[-200:]!r}")

    def unachievable(self, question: str, reason: str, answer: str) -> bool:
        """Whether ``answer`` reports the task impossible for the reason given."""
        verdict = self.ask(UNACHIEVABLE_PROMPT.format(question=question, reason=reason, answer=answer)).lower()
        if "different" in verdict:
            return False
        if "same" in verdict:
            return True
        raise JudgeError(f"the judge gave no verdict: {verdict[-200:]!r}")
