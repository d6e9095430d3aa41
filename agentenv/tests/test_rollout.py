"""The rollout engine: continuous batching, session reuse, stop rules, and sessions always closed."""

from __future__ import annotations

import httpx
import pytest

from agentenv.controller.agents import Agent
from agentenv.controller.expert import ExpertAgent
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.sources import LocalEnv, RemoteEnv
from agentenv.testing import running_server

from test_controller_support import GuessEnv


class CountingEnv(LocalEnv):
    """A LocalEnv that also counts the sessions it ever opened."""

    def __init__(self, env_cls=GuessEnv):
        super().__init__(env_cls)
        self.opened = 0
        self.envs = []

    def session(self):
        session = super().session()
        self.opened += 1
        self.envs.append(session.env)
        return session


class Recording(Agent):
    """Guesses 0, 1, 2 ... and records every batch; may raise after some rounds."""

    name = "counter"

    def __init__(self, sources=(), fail_after: int | None = None, error: type[BaseException] = RuntimeError):
        self.batches: list[list[str]] = []
        self.live_sessions: list[int] = []
        self.sources, self.fail_after, self.error = sources, fail_after, error

    def act(self, episodes):
        if self.fail_after is not None and len(self.batches) >= self.fail_after:
            raise self.error("injected")
        self.batches.append([ep.item_id for ep in episodes])
        self.live_sessions.append(sum(s.live_sessions for s in self.sources))
        return [f"Thought:\ncount up\n\nAction:\nguess {ep.rounds}" for ep in episodes]


def test_sessions_are_reused_and_bounded():
    source = CountingEnv()
    agent = Recording([source])
    episodes = Rollout(agent, {"guess": source}, concurrency=3).run([RolloutTask("guess", i) for i in range(10)])
    assert sorted(ep.data_idx for ep in episodes) == list(range(10))
    assert source.opened == 3  # one session per slot, reset for each next task
    assert max(agent.live_sessions) == 3
    assert source.live_sessions == 0 and all(env.closed for env in source.envs)


def test_finished_episodes_free_their_slot_at_once():
    agent = Recording()
    Rollout(agent, {"guess": LocalEnv(GuessEnv)}, concurrency=4).run([RolloutTask("guess", i) for i in range(12)])
    # task i is solved at round i+1, so slots free up at different rounds: the batch stays full
    # while tasks are pending, and no task waits for a whole batch to end
    pending_rounds = [len(b) for b in agent.batches[:-6]]
    assert max(len(b) for b in agent.batches) == 4 and all(n == 4 for n in pending_rounds)
    assert len(agent.batches) < 12 / 4 * 6


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_sessions_are_closed_when_the_run_fails(error):
    source = CountingEnv()
    agent = Recording([source], fail_after=3, error=error)
    with pytest.raises(error, match="injected"):
        Rollout(agent, {"guess": source}, concurrency=4).run([RolloutTask("guess", i) for i in range(20)])
    assert source.opened == 4 and source.live_sessions == 0
    assert all(env.closed for env in source.envs)


def test_env_error_ends_one_episode_and_drops_its_session():
    class Crashy(GuessEnv):
        def step(self, action):
            if self.secret == 2:
                raise RuntimeError("simulator crashed")
            return super().step(action)

    source = CountingEnv(Crashy)
    episodes = Rollout(ExpertAgent(), {"guess": source}, concurrency=1).run([RolloutTask("guess", i) for i in range(4)])
    by_idx = {ep.data_idx: ep for ep in episodes}
    assert by_idx[2].stop_reason == "error" and "simulator crashed" in by_idx[2].error
    assert all(by_idx[i].success for i in (0, 1, 3))
    assert source.opened == 2  # the crashed session was closed, not reused
    assert source.live_sessions == 0


def test_trajectory_shape_and_stop_rules():
    episodes = Rollout(Recording(), {"guess": LocalEnv(GuessEnv)}, concurrency=2, max_rounds=3).run(
        [RolloutTask("guess", 1, sample=2), RolloutTask("guess", 105)]
    )
    by_idx = {ep.data_idx: ep for ep in episodes}
    won, lost = by_idx[1], by_idx[105]  # hides 1 (found at round 2) and 9 (not within 3 rounds)
    assert (won.stop_reason, won.rounds, won.success, won.score) == ("done", 2, True, 1.0)
    assert (lost.stop_reason, lost.rounds, lost.success) == ("max_rounds", 3, False)
    traj = won.trajectory
    assert [t.role for t in traj.conversations] == ["human", "gpt", "human", "gpt", "human", "gpt"]
    assert [t.loss for t in traj.conversations] == [False, False, False, True, False, True]
    assert traj.conversations[0].value == GuessEnv.instruction
    assert traj.item_id == "guess_1" and traj.split == "train" and lost.trajectory.split == "test"
    assert traj.source == "counter" and traj.reward == 1.0 and traj.success
    assert traj.meta["final_observation"] == "Correct, the number was 1."
    assert traj.meta.items() >= {"sample": 2, "task_type": "odd", "rounds": 2, "stop_reason": "done"}.items()
    assert won.session is None


def test_sessions_stay_within_concurrency_across_envs():
    class Other(GuessEnv):
        name = "other"

    guess, other = CountingEnv(GuessEnv), CountingEnv(Other)
    agent = Recording([guess, other])
    tasks = [RolloutTask("guess" if i % 3 else "other", i) for i in range(12)]
    episodes = Rollout(agent, {"guess": guess, "other": other}, concurrency=2).run(tasks)
    assert len(episodes) == 12
    assert max(agent.live_sessions) <= 2
    assert guess.live_sessions == other.live_sessions == 0


def test_unknown_env_is_refused_before_anything_opens():
    source = CountingEnv()
    with pytest.raises(KeyError, match="nope"):
        Rollout(Recording(), {"guess": source}).run([RolloutTask("guess", 0), RolloutTask("nope", 0)])
    assert source.opened == 0


def test_over_http_sessions_are_reused_and_always_closed():
    with running_server([GuessEnv]) as url:
        live = lambda: httpx.get(f"{url}/guess/info").json()["live_sessions"]  # noqa: E731
        with RemoteEnv("guess", [url]) as source:
            agent = Recording()
            episodes = Rollout(agent, {"guess": source}, concurrency=3).run([RolloutTask("guess", i) for i in range(9)])
            assert sorted(ep.data_idx for ep in episodes) == list(range(9))
            assert {ep.data_idx for ep in episodes if ep.success} == set(range(6))  # guesses 0..5 in 6 rounds
            assert episodes[0].trajectory.meta["task_type"] in ("even", "odd")
            assert live() == 0

            with pytest.raises(KeyboardInterrupt):
                Rollout(Recording(fail_after=2, error=KeyboardInterrupt), {"guess": source}, concurrency=4).run(
                    [RolloutTask("guess", i) for i in range(10)]
                )
            assert live() == 0
        assert source.pool.clients[0].http.is_closed  # the with block closed the connection pool


def test_more_episodes_than_the_server_holds_wait_for_a_place_instead_of_failing(monkeypatch):
    """A server answers 429 past its max_sessions: the run learns how many episodes it has room for and
    runs that many at once; with every place held by another client, it waits until one is freed (and
    gives up, saying so, only after FULL_WAIT_S)."""
    import threading

    from agentenv.client import EnvClient, ServerFull
    from agentenv.controller import rollout

    monkeypatch.setattr(rollout, "FULL_RETRY_S", 0.05)
    tasks = [RolloutTask("guess", i) for i in range(20)]
    with running_server([GuessEnv], max_sessions=3) as url, RemoteEnv("guess", [url]) as source:
        run = Rollout(Recording(), {"guess": source}, concurrency=8)
        episodes = run.run(tasks)
        assert sorted(ep.data_idx for ep in episodes) == list(range(20)) and all(ep.stop_reason != "error" for ep in episodes)
        assert run.env_capacity == {"guess": 3}

        with EnvClient("guess", url) as other:
            held = [other.create() for _ in range(3)]  # another client holds every place
            threading.Timer(0.5, lambda: [other.close_session(sid) for sid in held]).start()
            episodes = Rollout(Recording(), {"guess": source}, concurrency=2).run(tasks[:4])
            assert sorted(ep.data_idx for ep in episodes) == [0, 1, 2, 3]
            assert all(ep.stop_reason != "error" for ep in episodes)

            held = [other.create() for _ in range(3)]
            monkeypatch.setattr(rollout, "FULL_WAIT_S", 0.2)
            with pytest.raises(ServerFull, match="stayed full"):
                Rollout(Recording(), {"guess": source}, concurrency=2).run(tasks[:2])


def test_a_reply_the_server_refuses_is_the_agents_failure_and_odd_text_is_kept(tmp_path):
    """A reply over the protocol's length limit gets 422: the episode is recorded as the agent's failure
    (a rerun would fail the same way), not dropped as an env error; a lone surrogate (an escape some
    endpoints return) is replaced, so the reply can be sent and saved.  What is no part of the reply, a
    reasoning block or an observation the model made up, is not sent: it does not count to the limit."""
    from agentenv.data.trajectory import append_trajectory, read_trajectories

    class Odd(Agent):
        name = "odd"

        def act(self, episodes):
            return [{
                0: "Thought:\n" + "hmm " * 25_001 + "\n\nAction:\nguess 0",
                1: "Thought:\nsmile \ud83d\n\nAction:\nguess 1",
                2: "<think>" + "hmm " * 30_000 + "</think>\nThought: x\n\nAction:\nguess 2",
                3: "Thought: x\n\nAction:\nguess 3\nObservation: " + "y" * 120_000,
            }[ep.data_idx] for ep in episodes]

    with running_server([GuessEnv]) as url, RemoteEnv("guess", [url]) as source:
        episodes = Rollout(Odd(), {"guess": source}, concurrency=4).run([RolloutTask("guess", i) for i in range(4)])
        live = httpx.get(f"{url}/guess/info").json()["live_sessions"]
    by_idx = {ep.data_idx: ep for ep in episodes}
    refused = by_idx[0]
    assert (refused.stop_reason, refused.success, refused.rounds) == ("invalid_reply", False, 0)
    assert "422" in refused.error and refused.trajectory.meta["stop_reason"] == "invalid_reply"
    assert by_idx[1].success and "smile ?" in by_idx[1].trajectory.conversations[-1].value
    for long in (by_idx[2], by_idx[3]):  # the trajectory keeps the whole reply
        assert long.success and len(long.trajectory.conversations[-1].value) > 120_000
    assert live == 0
    for ep in episodes:
        append_trajectory(tmp_path / "out.jsonl", ep.trajectory)
    assert sorted(t.data_idx for t in read_trajectories(tmp_path / "out.jsonl")) == [0, 1, 2, 3]


@pytest.mark.parametrize("hangs", ["step", "expert_action"])
def test_ctrl_c_leaves_the_calls_of_a_server_that_stopped_answering(hangs, monkeypatch):
    """Ctrl-C waited for every call in flight, and a server that took a call and never answered (a stopped
    process, a stuck simulator) holds one to the client's read timeout: a BabyAI eval took 218 s to stop.
    Now the calls in flight and the closes get INTERRUPTED_WAIT_S; what they hold is freed once the server
    answers again."""
    import signal
    import threading
    import time

    from agentenv.controller import rollout

    monkeypatch.setattr(rollout, "INTERRUPTED_WAIT_S", 1.0)
    answer = threading.Event()
    main = threading.main_thread().ident

    def hang(self, *args):
        if self.secret == 3:  # Ctrl-C once this call is in flight, which answers only at the end of the test
            waiting.append(run.env_calls_since or agent.env_calls_since)  # the bar's "env silent N s"
            threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT)).start()
            answer.wait(60)
        return getattr(GuessEnv, hangs)(self, *args)

    stopping = type("Stopping", (GuessEnv,), {hangs: hang})
    agent = ExpertAgent() if hangs == "expert_action" else Recording()
    waiting: list[float | None] = []
    with running_server([stopping]) as url, RemoteEnv("guess", [url]) as source:
        started = time.monotonic()
        run = Rollout(agent, {"guess": source}, concurrency=4)
        with pytest.raises(KeyboardInterrupt):
            run.run([RolloutTask("guess", i) for i in range(8)])
        waited = time.monotonic() - started
        assert waiting[0] is not None and run.env_calls_since is None
        answer.set()
        agent.close()
        assert waited < 20, f"the run waited {waited:.0f} s for a call the server never answered"
        deadline = time.monotonic() + 20
        while httpx.get(f"{url}/guess/info").json()["live_sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert httpx.get(f"{url}/guess/info").json()["live_sessions"] == 0


def test_an_interrupted_program_exits_past_the_calls_it_left():
    """Python's exit joins every thread a thread pool started: the rollout's calls left to a hung server
    would hold the program to their read timeout after Ctrl-C."""
    import subprocess
    import sys
    import time

    script = (
        "import threading, time\n"
        "from agentenv.processes import exit_past_abandoned_calls\n"
        "threading.Thread(target=time.sleep, args=(60,), name='rollout_0').start()\n"
        "print('interrupted: rerun to resume')\n"
        "exit_past_abandoned_calls(130)\n"
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50)
    assert (done.returncode, done.stdout) == (130, "interrupted: rerun to resume\n")
    assert time.monotonic() - started < 30
