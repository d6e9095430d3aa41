"""The rollout engine: many episodes at once, one agent call per round.

Each round gathers every live episode, asks the agent for all their replies in one ``act`` call (one
batched generation, or concurrent API requests), then steps all their environments concurrently.  An
episode ends on ``done``, after ``max_rounds`` replies, when the agent stops it (context overflow), when the
server refuses a reply (too long: recorded as the agent's failure) or on an environment error; its slot goes
straight to the next pending task (continuous batching).  When no server of an env can open a session at all
(every one unreachable after the client's retries), the run stops with that error instead of failing every
task left the same way.  When every server of an env is full (429), the task waits for a place instead: the
run learns how many episodes of that env the servers hold and runs no more at once.

Sessions are opened once per slot and reused with ``reset`` for the next task of the same environment, and
every session is closed when the run ends, also on an exception or Ctrl-C.  After Ctrl-C the calls in flight
and the closes get ``INTERRUPTED_WAIT_S`` seconds: a server that stopped answering would hold them to the
client's read timeout (minutes), and its TTL frees what they leave.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from agentenv.controller.agents import Agent
from agentenv.controller.episode import Episode, Session
from agentenv.controller.sources import EnvSource
from agentenv.data.trajectory import Trajectory
from agentenv.env import info_splits
from agentenv.protocol import EnvError, ServerFull, ServerUnreachable
from agentenv.react import reply_text

#: while every server of an env is full with other clients' sessions, a start is tried again every
#: FULL_RETRY_S seconds, for FULL_WAIT_S seconds at most
FULL_RETRY_S, FULL_WAIT_S = 2.0, 600.0

#: statuses with which a server refuses a step's reply itself: 422 (invalid, e.g. over the length limit),
#: 413 (a body over the server's size limit)
REFUSED_REPLY = (413, 422)

#: after Ctrl-C, how long the calls in flight and the sessions' closes may take before the run leaves them
INTERRUPTED_WAIT_S = 5.0


@dataclass(frozen=True)
class RolloutTask:
    """One episode to run: a task of an env, which sample of it, and its sampling settings."""

    env: str
    data_idx: int
    sample: int = 0
    temperature: float | None = None
    seed: int | None = None


class Rollout:
    """Runs tasks with ``agent`` over the environments in ``envs`` (env name -> source).

    ``concurrency`` is the number of episodes live at once (and of sessions held); ``max_rounds`` an int
    for every env, a mapping per env, or ``None`` for each env's own ``/info`` value.
    """

    def __init__(
        self,
        agent: Agent,
        envs: Mapping[str, EnvSource],
        *,
        concurrency: int = 16,
        max_rounds: int | Mapping[str, int] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.agent = agent
        self.envs = dict(envs)
        self.concurrency = concurrency
        self._max_rounds = max_rounds
        self._info: dict[str, dict[str, Any]] = {}
        self._held: set[Session] = set()
        self._lock = threading.Lock()
        #: env -> the episodes at once its servers have room for, learnt when they answered "full" (429)
        self.env_capacity: dict[str, int] = {}
        #: wall time spent in the agent and in the environments (reset + step), seconds
        self.timing = {"agent_s": 0.0, "env_s": 0.0}
        #: signs of life for a live display: episodes running now, agent rounds and replies so far
        self.live_episodes = 0
        self.rounds_played = 0
        self.replies = 0
        #: when the env calls in flight (a round's resets or steps) were sent; None between rounds
        self.env_calls_since: float | None = None
        self._warned_first_prompt = False

    def info(self, env: str) -> dict[str, Any]:
        if env not in self._info:
            self._info[env] = self.envs[env].info()
        return self._info[env]

    def max_rounds(self, env: str) -> int:
        if isinstance(self._max_rounds, int):
            return self._max_rounds
        if isinstance(self._max_rounds, Mapping) and env in self._max_rounds:
            return self._max_rounds[env]
        info = self.info(env)
        if self.agent.name == "expert" and info.get("expert_max_rounds"):
            return int(info["expert_max_rounds"])  # gold paths longer than an agent's budget (SciWorld)
        return int(info["max_rounds"])

    def run(self, tasks: Iterable[RolloutTask], on_finish: Callable[[Episode], None] | None = None) -> list[Episode]:
        """Run every task; call ``on_finish`` with each episode as it ends; return them all."""
        pending = deque(tasks)
        for env in {t.env for t in pending}:
            if env not in self.envs:
                raise KeyError(f"no source for env {env!r}")
            self.info(env)
        live: list[Episode] = []
        idle: dict[str, list[Session]] = defaultdict(list)
        finished: list[Episode] = []
        self._held: set[Session] = set()  # every session opened and not yet closed
        self._calls: list[Future] = []  # the opens or steps in flight
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="rollout")

        def finish(ep: Episode) -> None:
            self._finalise(ep)
            self.agent.release(ep)
            session, ep.session = ep.session, None
            if session is not None:
                if ep.stop_reason == "error":
                    # it may be broken: never reuse it; closed off this thread, as a dead server's close
                    # costs the client's retries
                    pool.submit(self._close, session)
                else:
                    idle[ep.env].append(session)
            finished.append(ep)
            if on_finish is not None:
                on_finish(ep)

        full_since: float | None = None  # since when full servers have refused every start, nothing live
        interrupted = False
        try:
            while pending or live:
                starting = self._take(pending, live)
                opened, refused = self._start(starting, idle, len(live), pool)
                live.extend(ep for ep in opened if not ep.finished)
                self.live_episodes = len(live)
                for ep in opened:
                    if ep.finished:
                        finish(ep)
                if refused:  # full servers: the tasks wait, first in line, for a session to end
                    pending.extendleft(reversed(refused))
                    for env in {task.env for task in refused}:
                        # a refused task found no idle session of its env to reuse: the run holds just these
                        held = sum(ep.env == env for ep in live)
                        if held:  # the env's servers have room for no more than this run holds now
                            self.env_capacity[env] = held
                if not live:
                    if refused:  # other clients fill the servers: wait for them, then give up
                        full_since = full_since or time.monotonic()
                        if time.monotonic() - full_since >= FULL_WAIT_S:
                            raise ServerFull(f"the {refused[0].env} servers stayed full for {FULL_WAIT_S:.0f} s")
                        time.sleep(FULL_RETRY_S)
                    continue
                full_since = None
                t0 = time.perf_counter()
                replies = self.agent.act(live)
                self.timing["agent_s"] += time.perf_counter() - t0
                self.rounds_played += 1
                if not isinstance(replies, (list, tuple)) or not all(isinstance(r, str) for r in replies):
                    got = type(replies).__name__ if not isinstance(replies, (list, tuple)) else "a list holding " + \
                        next(type(r).__name__ for r in replies if not isinstance(r, str))
                    raise TypeError(f"{self.agent.name}'s act returned {got}: it returns a list of str, one reply per episode")
                self.replies += len(replies)
                if len(replies) != len(live):
                    raise RuntimeError(f"{self.agent.name} returned {len(replies)} replies for {len(live)} episodes")
                self._warn_of_a_first_prompt_too_long(live)
                stepping = [(ep, reply) for ep, reply in zip(live, replies, strict=True) if not ep.finished]
                t0 = time.perf_counter()
                self._each(pool, self._step, stepping)
                self.timing["env_s"] += time.perf_counter() - t0
                ended = [ep for ep in live if ep.finished]
                live = [ep for ep in live if not ep.finished]
                self.live_episodes = len(live)  # before on_finish, whose progress line reads it
                for ep in ended:
                    finish(ep)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            self.live_episodes = 0
            for ep in live:
                self.agent.release(ep)
            # let in-flight opens and steps land first, so no session they create escapes the close below;
            # after Ctrl-C for a few seconds only (a hung server's call lasts to the client's read timeout)
            limit = INTERRUPTED_WAIT_S if interrupted else None
            deadline = time.monotonic() + (limit or 0)
            pool.shutdown(wait=not interrupted, cancel_futures=True)
            wait(self._calls, timeout=limit)
            left = list(self._held)
            if left:
                closer = ThreadPoolExecutor(min(len(left), 32), thread_name_prefix="rollout-close")
                closes = [closer.submit(self._close, session) for session in left]
                closer.shutdown(wait=False)
                wait(closes, timeout=max(0.0, deadline - time.monotonic()) if interrupted else None)
        return finished

    # --- steps of the loop -----------------------------------------------------------------------
    def _warn_of_a_first_prompt_too_long(self, episodes: list[Episode]) -> None:
        """Say once when an agent could not answer an episode's first prompt: that is the model's context
        (or the reply limit), not the agent, and every such episode ends with no reply (context full)."""
        first = next((ep for ep in episodes if ep.stop_reason == "context_overflow" and ep.rounds == 0), None)
        if first is None or self._warned_first_prompt:
            return
        self._warned_first_prompt = True
        tokens = first.meta.get("context_tokens")
        print(
            f"[agentenv] warning: the first prompt of {first.item_id}" + (f" ({tokens} tokens)" if tokens else "")
            + f" does not fit {self.agent.name}'s context with its reply limit: its episode ends with no reply "
            "(context full); a longer context (vLLM's --max-model-len) or a lower --max-new-tokens plays it",
            file=sys.stderr,
        )

    def _take(self, pending: deque[RolloutTask], live: list[Episode]) -> list[RolloutTask]:
        """The pending tasks to start now: up to the free slots, in order, passing over the tasks of an env
        that already runs as many episodes as its servers have room for (they keep their place)."""
        running = Counter(ep.env for ep in live)
        taken: list[RolloutTask] = []
        passed: list[RolloutTask] = []
        while pending and len(live) + len(taken) < self.concurrency:
            task = pending.popleft()
            if running[task.env] >= self.env_capacity.get(task.env, self.concurrency):
                passed.append(task)
                continue
            running[task.env] += 1
            taken.append(task)
        pending.extendleft(reversed(passed))
        return taken

    def _start(
        self, tasks: list[RolloutTask], idle: dict[str, list[Session]], busy: int, pool: ThreadPoolExecutor
    ) -> tuple[list[Episode], list[RolloutTask]]:
        """Open (or reuse) a session for each task and reset it, concurrently: the episodes, and the tasks
        no server had room for."""
        if not tasks:
            return [], []
        reused: list[Session | None] = []
        for task in tasks:
            reused.append(idle[task.env].pop() if idle[task.env] else None)
        # keep the sessions held within `concurrency`: close idle ones of other envs that would go over
        spare = [s for group in idle.values() for s in group]
        excess = busy + len(tasks) + len(spare) - self.concurrency
        for env in list(idle):
            while excess > 0 and idle[env]:
                self._close(idle[env].pop())
                excess -= 1
        t0 = time.perf_counter()
        episodes = self._each(pool, self._open, list(zip(tasks, reused, strict=True)))
        self.timing["env_s"] += time.perf_counter() - t0
        refused = [task for task, ep in zip(tasks, episodes, strict=True) if ep is None]
        return [ep for ep in episodes if ep is not None], refused

    def _each(self, pool: ThreadPoolExecutor, call: Callable[..., Any], arguments: list[tuple]) -> list[Any]:
        """``call`` with each tuple of arguments on the pool, in order, the calls kept while in flight."""
        self.env_calls_since = time.monotonic()
        try:
            self._calls = [pool.submit(call, *args) for args in arguments]
            return [future.result() for future in self._calls]
        finally:
            self.env_calls_since = None

    def _open(self, task: RolloutTask, session: Session | None) -> Episode | None:
        """The task's episode, reset; ``None`` when every server of its env is full."""
        info = self.info(task.env)
        split = _split_of(info, task.data_idx)
        trajectory = Trajectory.start(task.env, task.data_idx, info["instruction"], split=split, source=self.agent.name)
        ep = Episode(task.env, task.data_idx, session, trajectory, task.sample, task.temperature, task.seed)
        try:
            if ep.session is None:
                ep.session = self.envs[task.env].session()
                with self._lock:
                    self._held.add(ep.session)
            reset = ep.session.reset(task.data_idx)
        except Exception as exc:
            if isinstance(exc, ServerUnreachable) and ep.session is None:
                raise  # no server of the env opens a session: every task left would fail the same way
            if isinstance(exc, ServerFull) and ep.session is None:
                return None  # no room now: the task waits for one of this run's sessions (or another's)
            ep.stop("error", f"reset: {type(exc).__name__}: {exc}")
            return ep
        ep.task_type = getattr(reset, "task_type", "") or task.env
        trajectory.add_observation(reset.observation)
        return ep

    def _step(self, ep: Episode, reply: str) -> None:
        reply = reply.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate can be neither sent nor saved
        ep.trajectory.add_reply(reply)
        try:
            out = ep.session.step(reply_text(reply))  # a reasoning block counts to no limit of the server's
        except Exception as exc:
            # a reply the server refused itself (too long) is the agent's failure, recorded as such, rather
            # than an env error that every rerun would repeat
            refused = isinstance(exc, EnvError) and exc.status in REFUSED_REPLY
            ep.stop("invalid_reply" if refused else "error", f"step: {type(exc).__name__}: {exc}")
            return
        ep.rounds += 1
        ep.score, ep.success, ep.done = float(out.score), bool(out.success), bool(out.done)
        ep.meta.setdefault("rewards", []).append(float(out.reward))  # each round's reward (the viewer shows them)
        ep.trajectory.add_observation(out.observation)
        if ep.done:
            ep.stop("done")
        elif ep.rounds >= self.max_rounds(ep.env):
            ep.stop("max_rounds")

    def _close(self, session: Session) -> None:
        with self._lock:
            self._held.discard(session)
        try:
            session.close()
        except Exception:
            pass  # the server may already have dropped it (TTL, crash); nothing left to free here

    @staticmethod
    def _finalise(ep: Episode) -> None:
        """Fill the trajectory's result fields; the conversation ends on the last reply, and the
        observation that followed it (or that the agent could not answer) goes to ``meta``."""
        traj = ep.trajectory
        if len(traj.conversations) > 2 and traj.conversations[-1].role == "human":
            ep.meta["final_observation"] = traj.conversations.pop().value
        traj.reward = ep.score
        traj.success = ep.success
        traj.meta.update(
            sample=ep.sample, task_type=ep.task_type, rounds=ep.rounds, stop_reason=ep.stop_reason,
            wall_s=round(time.monotonic() - ep.started, 3), **ep.meta
        )
        if ep.error:
            traj.meta["error"] = ep.error


def run_episodes(
    agent: Agent,
    envs: Mapping[str, EnvSource],
    tasks: Iterable[RolloutTask],
    *,
    concurrency: int = 16,
    max_rounds: int | Mapping[str, int] | None = None,
) -> list[Episode]:
    """Run ``tasks`` and return the finished episodes (their ``trajectory`` is the AgentTraj record), in
    the order they finished, not the tasks' (each episode names its ``env``, ``data_idx`` and ``sample``)."""
    return Rollout(agent, envs, concurrency=concurrency, max_rounds=max_rounds).run(tasks)


def _split_of(info: dict[str, Any], data_idx: int) -> str:
    return next((name for name, indices in info_splits(info).items() if data_idx in indices), "")


