"""The result table of an evaluation: mean score (normalised 0-1) and success rate per env and task type.

A row's interval is over its tasks: with several samples per task (``eval --samples K``) the episodes of one
task are not independent draws, so the success rate's interval is that of the tasks' own rates
(:func:`~agentenv.controller.stats.mean_interval` with ``n`` the tasks).  The ``all`` rows pool tasks: an env
or task type weighs as many tasks as it has (``bench``'s average weighs each env the same).
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentenv.controller.stats import mean_interval
from agentenv.data.trajectory import Trajectory, write_json, write_text_atomic

ALL = "all"

#: how the table names the reasons an episode ended (``Episode.stop_reason``)
STOP_NAMES = {
    "done": "done",
    "max_rounds": "out of rounds",
    "context_overflow": "context full",
    "invalid_reply": "reply refused",
    "error": "env error",
}


@dataclass
class ResultRow:
    """One line of the table; ``task_type`` is ``"all"`` for an env's total (and ``env`` too for the grand total)."""

    env: str
    task_type: str
    n: int
    score: float  # mean normalised score, 0-1
    success: float  # success rate, 0-1
    #: why its episodes ended: ``{"done": n, "max_rounds": n, "context_overflow": n, ...}``
    stops: dict[str, int] = field(default_factory=dict)
    #: the tasks its ``n`` episodes played (fewer than ``n`` with several samples per task; ``None``: ``n``)
    tasks: int | None = None

    def interval(self) -> tuple[float, float]:
        """The success rate's 95% (Wilson) interval over the row's tasks."""
        return mean_interval(self.success, self.tasks or self.n)

    def interval_text(self) -> str:
        """:meth:`interval` as ``72.2% – 100.0%``."""
        low, high = self.interval()
        return f"{low:.1%} – {high:.1%}"

    def to_json(self) -> dict[str, Any]:
        """The row as ``.report.json`` holds it: its fields and the interval's bounds (as bench.json names them)."""
        low, high = self.interval()
        return asdict(self) | {"success_low": low, "success_high": high}

    def n_text(self) -> str:
        """The episodes, and the tasks they played where those are fewer: ``30 (10 tasks)``."""
        return str(self.n) if (self.tasks or self.n) == self.n else f"{self.n} ({self.tasks} tasks)"

    def stops_text(self) -> str:
        """The episodes that did not end by the env's own ``done``, by reason (``""`` when all did)."""
        return ", ".join(f"{STOP_NAMES.get(k, k)} {n}" for k, n in sorted(self.stops.items()) if k != "done")


@dataclass
class EvalReport:
    """A run's results: a :class:`ResultRow` per env and task type, each env's overall row (task type
    ``all``) and the run's (env ``all``); saved beside the results file as ``.report.json``."""

    rows: list[ResultRow]
    #: episodes that ended on an environment error (not written: a rerun retries them)
    errors: int = 0
    settings: dict[str, Any] = field(default_factory=dict)

    def row(self, env: str = ALL, task_type: str = ALL) -> ResultRow | None:
        """The row of ``env`` and ``task_type`` (default: the whole run's), or ``None``."""
        return next((r for r in self.rows if r.env == env and r.task_type == task_type), None)

    @property
    def n(self) -> int:
        total = self.row()
        return total.n if total else 0

    def to_json(self) -> dict[str, Any]:
        """The report as ``.report.json`` holds it."""
        return {"rows": [r.to_json() for r in self.rows], "errors": self.errors, "settings": self.settings}

    def markdown(self) -> str:
        """The rows as a Markdown table."""
        lines = ["| env | task type | n | score | success | 95% interval | not done: ended by |",
                 "|---|---|---:|---:|---:|---:|---|"]
        for r in self.rows:
            lines.append(f"| {r.env} | {r.task_type} | {r.n_text()} | {r.score:.3f} | {100 * r.success:.1f}% | "
                         f"{r.interval_text()} | {r.stops_text()} |")
        if self.errors:
            lines.append(f"\n{self.errors} episode(s) ended on an environment error and were not recorded; rerun to retry.")
        return "\n".join(lines) + "\n"

    def rich_table(self, title: str | None = None):
        """The table as a :class:`rich.table.Table` (what :meth:`print` shows)."""
        from rich.table import Table

        table = Table(title=title)
        for name in ("env", "task type"):
            table.add_column(name)
        for name in ("n", "score", "success", "95% interval"):
            table.add_column(name, justify="right", overflow="fold")  # folded when narrow, never cut
        table.add_column("not done: ended by")
        for r in self.rows:
            style = "bold" if r.task_type == ALL else None
            table.add_row(r.env, r.task_type, r.n_text(), f"{r.score:.3f}", f"{100 * r.success:.1f}%", r.interval_text(),
                          r.stops_text(), style=style)
        return table

    def print(self, title: str | None = None, file=None) -> None:
        """Print the table with rich (to ``file``, default stdout), and the error count if any."""
        console = table_console(file)
        console.print(self.rich_table(title))
        if self.errors:
            console.print(f"{self.errors} episode(s) ended on an environment error and were not recorded; rerun to retry.")

    def save(self, stem: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``<stem>.report.json`` and ``<stem>.report.md``; return both paths."""
        stem = Path(stem)
        json_path, md_path = stem.with_name(stem.name + ".report.json"), stem.with_name(stem.name + ".report.md")
        write_json(json_path, self.to_json())
        write_text_atomic(md_path, self.markdown())
        return json_path, md_path

    def __str__(self) -> str:
        return self.markdown()


def table_console(file=None):
    """A rich console for printing a table to ``file`` (default stdout): 160 columns where that is a pipe or
    a log, not rich's 80, so a results table is not wrapped cell by cell.  Text prints as written: a model
    named ``llama`` is no emoji, and brackets in a name or path no markup (``[/x]`` made it raise)."""
    from rich.console import Console

    console = Console(file=file, markup=False, emoji=False)
    if not console.is_terminal:
        console.width = 160
    return console


def normalised(score: float, reward_range: tuple[float, float] | list[float]) -> float:
    """``score`` mapped onto 0-1 by the env's reward range."""
    lo, hi = reward_range
    return (score - lo) / (hi - lo) if hi > lo else score


def warn_outside_range(env: str, rewards: Sequence[float], reward_range: tuple[float, float] | list[float]) -> None:
    """Say once (on stderr) when some of an env's rewards lie outside the range its server reports: their
    normalised scores are then outside 0-1, and a mean of them is no fraction of the best score."""
    lo, hi = reward_range
    outside = [r for r in rewards if not lo <= r <= hi]
    if outside:
        print(f"[agentenv] {env}: {len(outside)} of {len(rewards)} rewards lie outside its reward range {lo:g}..{hi:g} "
              f"(from {min(outside):g} to {max(outside):g}), so its normalised scores leave 0-1; "
              "the env's /info should report the range its rewards take", file=sys.stderr)


def build_report(
    trajectories: Iterable[Trajectory],
    reward_ranges: Mapping[str, tuple[float, float] | list[float]],
    *,
    errors: int = 0,
    settings: dict[str, Any] | None = None,
) -> EvalReport:
    """Aggregate trajectories per env, per (env, task type) and overall."""
    rewards: dict[str, list[float]] = defaultdict(list)
    groups: dict[tuple[str, str], list[tuple[float, bool, str, str]]] = defaultdict(list)
    for t in trajectories:
        rewards[t.env].append(t.reward)
        stop = str(t.meta.get("stop_reason") or "done")
        result = (normalised(t.reward, reward_ranges.get(t.env, (0.0, 1.0))), bool(t.success), stop, t.item_id)
        task_type = str(t.meta.get("task_type") or t.env)
        groups[(t.env, ALL)].append(result)
        groups[(ALL, ALL)].append(result)
        if task_type != t.env:
            groups[(t.env, task_type)].append(result)

    for env, values in rewards.items():
        warn_outside_range(env, values, reward_ranges.get(env, (0.0, 1.0)))

    def key(k: tuple[str, str]) -> tuple[bool, str, bool, str]:
        env, task_type = k
        return (env == ALL, env, task_type != ALL, task_type)  # per env: total first, then its types

    rows = []
    for k in sorted(groups, key=key):
        results = groups[k]
        rows.append(
            ResultRow(
                env=k[0],
                task_type=k[1],
                n=len(results),
                score=sum(r[0] for r in results) / len(results),
                success=success_rate(results),
                stops=dict(Counter(r[2] for r in results)),
                tasks=len({r[3] for r in results}),
            )
        )
    return EvalReport(rows, errors=errors, settings=settings or {})


def success_rate(results: list[tuple[float, bool, str, str]]) -> float:
    """The mean of the tasks' success rates (each task weighing the same whatever its samples; the plain
    rate of the episodes when every task has as many)."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for _, ok, _, task in results:
        by_task[task].append(ok)
    return sum(sum(oks) / len(oks) for oks in by_task.values()) / len(by_task)
