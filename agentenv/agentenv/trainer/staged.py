"""One staged run: the explore -> select -> train -> evaluate loop that AgentEvol, RFT and ETO share.

Iteration 0 is the starting agent (trained or given), evaluated.  Each iteration ``m = 1..M`` then

1. **explores**: the model of iteration ``m-1`` plays :meth:`StagedRun.explore_tasks`
   (``samples_per_instruction`` episodes each, at ``explore_temperature``) into ``iter_m/explore.jsonl``;
2. **selects** what to learn from (:meth:`StagedRun.select`: AgentEvol keeps the rewarded trajectories,
   ETO pairs failures with expert trajectories);
3. **trains** a new model (:meth:`StagedRun.train`);
4. **evaluates** it.

Each stage is recorded in ``iter_m/stages.json`` once its outputs are complete (:mod:`agentenv.trainer.runs`),
so a killed run started again with the same settings skips the finished stages and resumes the one it was
in.  An algorithm's file supplies only what differs: its select and train stages and its starting agent.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agentenv.controller.evaluator import latest_episodes
from agentenv.controller.selection import listing
from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import Trajectory, read_trajectories
from agentenv.processes import held_by_this_run
from agentenv.trainer.config_args import field_defaults
from agentenv.trainer.rollouts import check_sources, close_sources, open_sources, task_indices
from agentenv.trainer.runs import (
    CURVE_FILE,
    RUN_CONFIG_FILE,
    SUMMARY_FILE,
    IterationDir,
    check_run_config,
    evaluate_stage,
    explore_stage,
    refuse_another_kind_of_run,
    write_summary,
)


def tasks_with_data(trajectories: Iterable[Trajectory]) -> dict[str, set[int]]:
    """env -> the task indices ``trajectories`` cover (item ids that name no index are skipped)."""
    covered: dict[str, set[int]] = {}
    for t in trajectories:
        try:
            covered.setdefault(t.env, set()).add(t.data_idx)
        except ValueError:
            continue
    return covered


class StagedRun(ABC):
    """The loop; a subclass names its ``algorithm`` and ``select_stage`` and implements the hooks."""

    #: recorded in ``run_config.json`` and ``summary.json``
    algorithm: ClassVar[str]
    #: the name its select stage has in ``stages.json`` ("filtered", "paired")
    select_stage: ClassVar[str]

    def __init__(self, cfg: Any, *, sources: Mapping[str, EnvSource] | None = None, progress: bool = True) -> None:
        self.cfg = cfg
        # absolute: the records (stages.json, each stage's train_config.json) name files by it, and a rerun
        # from another working folder must find them
        self.run_dir = Path(cfg.output_dir).expanduser().resolve()
        self.given = sources
        self.progress = progress
        self.envs: dict[str, EnvSource] = {}

    # --- what an algorithm supplies ---------------------------------------------------------------------
    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Check the settings and read the data the run starts from (before any environment is opened)."""

    @abstractmethod
    def initial_model(self, it: IterationDir) -> dict[str, Any]:
        """Iteration 0's agent: ``{"model": path, ...}`` (recorded as its "trained" stage)."""

    def explore_filter(self) -> tuple[str, dict[str, set[int]]] | None:
        """What the explore set is narrowed to, when it is: (the data's name, env -> the tasks it covers)."""
        return None

    @abstractmethod
    def select(self, it: IterationDir, explored: list[Trajectory]) -> dict[str, Any]:
        """Choose what to learn from the explored trajectories, writing its files into ``it``; returns what
        to record (counts)."""

    @abstractmethod
    def train(self, it: IterationDir, model: str) -> dict[str, Any]:
        """Train iteration ``it``'s model (``model`` is the previous one): ``{"model": path, ...}``."""

    def summary(self, it: IterationDir) -> dict[str, Any]:
        """Extra fields of an iteration's row in ``summary.json``."""
        return {}

    # --- the loop ---------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run (or resume) every iteration; returns the summary (also in ``summary.json``)."""
        cfg = self.cfg
        refuse_another_kind_of_run(self.run_dir, staged=True)
        # first, as it refuses an unknown env name (it starts nothing): prepare's notes on the data came before
        self.envs = open_sources(cfg, self.given)
        held = contextlib.ExitStack()
        try:
            self.prepare()
            if not cfg.resume or not IterationDir(self.run_dir, cfg.iterations).done("evaluated"):
                check_sources(cfg, self.envs, explores=cfg.iterations > 0)  # a finished run needs no env
                if cfg.iterations > 0:
                    self._check_explore_set()
                    self._warn_of_tasks_explored_and_evaluated()
            # one run in a folder at a time (a second one's evaluation was refused its results file, naming
            # eval's --out); made only now, so a mistake found above leaves no folder behind
            self.run_dir.mkdir(parents=True, exist_ok=True)
            busy = f"{self.run_dir} is in use by another run: wait for it to end, or give another --output-dir"
            held.enter_context(held_by_this_run(self.run_dir, busy))
            if not cfg.resume:  # only once the settings and the envs have passed their checks
                self._start_over()
            settings = cfg.to_json() | {"algorithm": self.algorithm, "output_dir": str(self.run_dir)}
            check_run_config(self.run_dir, settings, defaults=field_defaults(type(cfg)))
            results: dict[int, dict[str, Any]] = {}
            model = ""
            for m in range(cfg.iterations + 1):
                it = IterationDir(self.run_dir, m)
                if m > 0:
                    self._explore_and_select(it, model)
                if not it.done("trained"):
                    it.mark("trained", **(self.initial_model(it) if m == 0 else self.train(it, model)))
                model = it.info("trained")["model"]
                results[m] = evaluate_stage(cfg, self.envs, it, model, self.progress) | self.summary(it)
                write_summary(self.run_dir, self.algorithm, results)
            return write_summary(self.run_dir, self.algorithm, results)
        finally:
            held.close()
            close_sources(self.envs, self.given)

    def _start_over(self) -> None:
        """``--no-resume``: the earlier run's iterations, summary, curve and settings go; nothing else in
        the folder is touched."""
        earlier = sorted(self.run_dir.glob("iter_*"))
        given = [self.cfg.model, *getattr(self.cfg, "data", []), *getattr(self.cfg, "expert_data", [])]
        for path in given:
            inside = next((folder for folder in earlier if Path(path).resolve().is_relative_to(folder.resolve())), None)
            if inside is not None:
                raise ValueError(f"--no-resume would remove {path}, which this run starts from (it lies in {inside}); "
                                 "copy it out of the run folder first")
        for path in earlier:
            shutil.rmtree(path)
        for name in (SUMMARY_FILE, CURVE_FILE, RUN_CONFIG_FILE):
            (self.run_dir / name).unlink(missing_ok=True)
        if earlier:
            print(f"[agentenv] --no-resume: removed the earlier run's {len(earlier)} iterations in {self.run_dir}",
                  file=sys.stderr)

    def _check_explore_set(self) -> None:
        """Refuse a run with no task to explore before its first stage (it failed after iteration 0's training,
        and again on every rerun)."""
        if any(self.explore_tasks().values()):
            return
        cfg = self.cfg
        where = (f"--explore-tasks {','.join(map(str, cfg.explore_tasks))}" if cfg.explore_tasks
                 else f"the {cfg.explore_split!r} split")
        covered = self.explore_filter()
        if covered is None:
            raise ValueError(f"nothing to explore: {', '.join(self.envs)} has no task in {where}")
        data, tasks = covered
        held = "; ".join(f"{env} tasks {listing(sorted(ids))}" for env, ids in tasks.items() if env in self.envs)
        raise ValueError(f"nothing to explore: no task in {where} of {', '.join(self.envs)} has a trajectory in the "
                         f"{data} ({held or 'none of these envs'}); give the split its tasks are in "
                         "(--explore-split) or other data")

    def _warn_of_tasks_explored_and_evaluated(self) -> None:
        """The scores would be of tasks the agent learns from (``--explore-tasks`` naming test tasks)."""
        cfg = self.cfg
        explored = self.explore_tasks()
        for env, source in self.envs.items():
            evaluated = task_indices(source, cfg.eval_split, cfg.eval_tasks, cfg.eval_limit)
            if both := sorted(set(explored.get(env, ())) & set(evaluated)):
                print(f"warning: {env}: tasks {listing(both)} are both explored and evaluated: the evaluation "
                      "scores tasks the agent learns from (give other --explore-tasks / --eval-tasks or splits)",
                      file=sys.stderr)

    def _explore_and_select(self, it: IterationDir, model: str) -> None:
        if not it.done("explored"):
            explore_stage(self.cfg, self.envs, it, model, self.explore_tasks(), self.progress)
        if not it.done(self.select_stage):
            explored = latest_episodes(read_trajectories(it / "explore.jsonl"))
            it.mark(self.select_stage, explored=len(explored), **self.select(it, explored))

    # --- helpers for the hooks --------------------------------------------------------------------------
    def note_other_envs(self, trajectories: list[Trajectory], use: str) -> None:
        """Say how the data's trajectories of envs the run does not play are used (``use``): nothing else
        tells the user that a mixed data file was meant for more envs than ``--env`` names."""
        if not self.cfg.envs:  # refused when the envs open, with what to do: no note before that
            return
        others = Counter(t.env for t in trajectories if t.env not in self.cfg.envs)
        if others:
            listed = ", ".join(f"{env} {n}" for env, n in sorted(others.items()))
            print(f"[agentenv] {sum(others.values())} trajectories of the data are of envs this run does not play "
                  f"({listed}): {use}", file=sys.stderr)

    def explore_tasks(self) -> dict[str, list[int]]:
        """env -> the task indices each iteration explores: the explore set, narrowed by :meth:`explore_filter`."""
        filtered = self.explore_filter()
        return self.split_tasks(filtered[1] if filtered else None)

    def split_tasks(self, covered: Mapping[str, set[int]] | None = None) -> dict[str, list[int]]:
        """Each env's ``explore_tasks`` or ``explore_split`` tasks (only those in ``covered`` when given), the
        first ``explore_limit`` of them when set."""
        cfg = self.cfg
        tasks = {env: task_indices(src, cfg.explore_split, cfg.explore_tasks) for env, src in self.envs.items()}
        if covered is not None:
            tasks = {env: [i for i in indices if i in covered.get(env, ())] for env, indices in tasks.items()}
        if cfg.explore_limit > 0:
            tasks = {env: indices[: cfg.explore_limit] for env, indices in tasks.items()}
        return tasks
