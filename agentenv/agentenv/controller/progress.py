"""The live display of a run: a bar of finished episodes, with the signs of life between them.

An episode may take minutes (a local model on a CPU, a slow endpoint), so besides the episodes done and the
success so far the bar shows what moves meanwhile: the episodes running, the agent's rounds, its model
requests in flight and its tokens per second.  It redraws on its own clock (rich), not only when an episode
ends, and draws nothing when disabled.  Where stderr is not a terminal (a log file) it writes a line every
tenth of the run instead, as training does.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

#: env calls unanswered this long are shown on the bar (a server stopped, stuck or overloaded)
SILENT_S = 10.0


def short_title(title: str, longest: int = 28) -> str:
    """``title`` with each long path in it cut to its last two parts (``hf:…/iter_1/model``)."""
    words = []
    for word in title.split(" "):
        if len(word) > longest:
            kind, sep, where = word.partition(":")  # hf:PATH, openai:MODEL@URL
            if not sep or "/" in kind:
                kind, sep, where = "", "", word
            where = where.split("@", 1)[0]  # an endpoint's model, not its URL
            parts = where.rstrip("/").split("/")
            word = kind + sep + ("…/" if len(parts) > 2 else "") + "/".join(parts[-2:])
        words.append(word)
    return " ".join(words)


class _LiveColumn(ProgressColumn):
    """Success so far, episodes running, rounds, requests in flight, tokens per second (read when drawn)."""

    def __init__(self, live: LiveProgress) -> None:
        # cut short, never wrapped: a wrapped status redraws as two or three lines at 80 columns
        super().__init__(table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1))
        self.live = live

    def render(self, task: Any) -> Text:
        return Text(self.live.status(), style="dim")


class LiveProgress:
    """``with LiveProgress(title, total, done, successes, rollout, agent) as bar: ... bar.finished(ok)``."""

    def __init__(
        self, title: str, *, total: int, done: int, successes: int, rollout: Any, agent: Any, enabled: bool = True
    ) -> None:
        self.rollout, self.agent = rollout, agent
        self.done, self.successes = done, successes
        self._started = time.monotonic()
        self._tokens_at_start = agent.progress().get("tokens") or 0
        console = Console(stderr=True)
        self.title, self.total = title, total
        self.lines = enabled and not console.is_terminal  # a log: a line every tenth of the run, no bar
        self._every = max(1, total // 10)
        self._next_line = done + self._every
        self._progress = Progress(
            TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", max_width=36)),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            _LiveColumn(self),
            console=console,
            refresh_per_second=2,
            disable=not enabled or self.lines,
            transient=False,
            expand=True,  # the status takes what the title, bar and counts leave
        )
        self._task = self._progress.add_task(escape(short_title(title)), total=total, completed=done)  # a model named [x]

    def status(self) -> str:
        parts = []
        # the rollout's resets and steps, or an expert's moves: the oldest call the servers have not answered
        calls = (getattr(self.rollout, "env_calls_since", None), getattr(self.agent, "env_calls_since", None))
        since = min((t for t in calls if t is not None), default=None)
        if since is not None and (waited := time.monotonic() - since) >= SILENT_S:  # first: never cut off
            parts.append(f"env silent {waited:.0f} s")
        if self.done:
            parts.append(f"success {self.successes / self.done:.0%}")
        parts.append(f"{self.rollout.live_episodes} running")
        parts.append(f"{self.rollout.rounds_played} rounds")
        progress = self.agent.progress()
        if progress.get("in_flight"):
            parts.append(f"{progress['in_flight']} generating")
        tokens = progress.get("tokens")
        if tokens is not None:
            elapsed = max(time.monotonic() - self._started, 1e-6)
            parts.append(f"{(tokens - self._tokens_at_start) / elapsed:.0f} tok/s")
        return " · ".join(parts)

    def finished(self, success: bool) -> None:
        """One more episode written."""
        self.done += 1
        self.successes += bool(success)
        self._progress.advance(self._task)
        if self.lines and (self.done >= self._next_line or self.done == self.total):
            self._next_line = self.done + self._every
            print(f"{self.title} {self.done}/{self.total}  {self.status()}", file=sys.stderr, flush=True)

    def write(self, line: str) -> None:
        """A message above the bar (it stays drawn below)."""
        # as written: "[agentenv]" is no markup tag, and a log's line is not wrapped at 80 columns
        self._progress.console.print(line, highlight=False, markup=False, emoji=False, soft_wrap=True)

    def __enter__(self) -> LiveProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
