"""The conformance suite every environment gets for free.

``check_env(EnvClass)`` runs an environment class in this process under the protocol's rules
(:class:`~agentenv.session.LocalSession`); ``check_server(url, env)`` checks a running server over HTTP, its
AgentGym wire shapes and error answers included.  Each raises :class:`ConformanceError` naming the first
rule broken, and returns the names of the checks that passed.  The checks:

- the class metadata has the types the kit reads (a name, splits of ranges, a reward range, ...);
- the same task index gives the same first observation (in one session and in a fresh one), and (in
  process) the expert's actions replayed from a reset give the same scores;
- a garbage, empty, huge or unicode action never raises and scores 0; one over the length limit, or one
  that is not valid Unicode (a lone surrogate), is a 422;
- the expert solves a sample of the test split, every score staying within ``reward_range``;
- (in process) an env served on the event loop (``blocking = False``) takes at most
  :data:`~agentenv.env.INLINE_CALL_S` of CPU a reset or step and never waits a second (a sleep, I/O, another
  process);
- unknown ids answer 404, a step before a reset or after the end 409, a task outside every split 422;
- (server) each AgentGym shape the env declares (``Environment.wire.shapes``) holds;
- closing every session frees what they held: threads and child processes (in process), live sessions
  and child processes (server on this machine).

``check_openenv(url, env)`` checks OpenEnv's protocol on the same server (``/<env>/openenv``): its HTTP routes,
and whole episodes over its WebSocket under the kit's rules, with the kit's session behind it.

``check_openapi(url)`` fuzzes a server from its own OpenAPI schema (schemathesis): no 5xx, and no status,
content type or body the schema does not document.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agentenv.env import INLINE_CALL_S, Environment, TaskRange, check_metadata
from agentenv.protocol import MAX_ACTION_CHARS, BadRequest, EnvCrashed, EpisodeNotRunning, SessionNotFound
from agentenv.react import format_react
from agentenv.session import LocalSession, without_collections

#: actions no environment may raise on or reward
BAD_ACTIONS: dict[str, str] = {
    "empty": "",
    "blank": " \n\t ",
    "garbage": "%%% ;DROP TABLE x; \x00 }{ ][ ",
    "unicode": "Aktion: gehe zu 北 🙂 \u202e ﷽ \u0301",
    "huge": "move " * (MAX_ACTION_CHARS // 5),
    "reply without action": "Thought:\nI am not sure.",
}


#: actions refused with 422 (and the session left as it was)
REFUSED_ACTIONS: dict[str, str] = {
    f"an action over {MAX_ACTION_CHARS} characters": "x" * (MAX_ACTION_CHARS + 1),
    "an action with a lone surrogate": "move \ud800 up",
}


class ConformanceError(AssertionError):
    """An environment (or server) broke a rule of the protocol."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConformanceError(message)


def sample_tasks(env_cls: type[Environment], split: str, n: int) -> list[int]:
    """``n`` task indices spread evenly over ``split`` (its first index included)."""
    indices = list(env_cls.splits[split])
    if n >= len(indices):
        return indices
    return [indices[round(i * (len(indices) - 1) / max(n - 1, 1))] for i in range(n)]


def _test_split(env_cls: type[Environment]) -> str:
    return "test" if "test" in env_cls.splits else next(iter(env_cls.splits))


# --- in process -----------------------------------------------------------------------------------------


def check_env(env_cls: type[Environment], *, expert_tasks: int = 3, split: str | None = None) -> list[str]:
    """Check an environment class in this process; returns the checks passed."""
    passed: list[str] = []
    _check_metadata(env_cls)
    passed.append("class metadata")
    split = split or _test_split(env_cls)
    tasks = sample_tasks(env_cls, split, max(expert_tasks, 1))
    session = LocalSession if env_cls.blocking else _OnTheEventLoop
    with env_cls.shared(), _frees_what_it_holds(env_cls.name):
        first, second = session(env_cls, 0), session(env_cls, 1)
        try:
            _check_determinism(first.reset, second.reset, tasks, env_cls.name)
            passed.append("same index, same first observation")
            _check_bad_actions(first, tasks[0], env_cls)
            passed.append("bad actions never raise and score 0")
            _check_rules_in_process(env_cls, first)
            passed.append("409 / 422 / 404 rules")
            played = [_play_expert(first, idx, env_cls) for idx in tasks[:expert_tasks]]
            passed.append(f"expert solves {len(played)} {split} tasks")
            _check_replay(first, tasks[0], played[0] if played else _play_expert(first, tasks[0], env_cls), env_cls)
            passed.append("the same actions, the same episode")
        finally:
            first.close()
            second.close()
    passed.append("close frees threads and child processes")
    return passed


#: seconds a call of a ``blocking = False`` env may spend waiting rather than computing (load on the machine
#: delays a thread, but not by this much for a call of milliseconds)
INLINE_WAIT_S = 1.0


class _OnTheEventLoop(LocalSession):
    """A session whose resets and steps are timed as a server serving its env on the event loop needs them
    (``blocking = False``): each at most :data:`INLINE_CALL_S` of this thread's CPU (not its wall time,
    which a loaded machine stretches; the garbage collector is held off meanwhile), and at most
    :data:`INLINE_WAIT_S` waiting."""

    def reset(self, data_idx: Any) -> Any:
        return self._timed(f"reset to task {data_idx!r}", super().reset, data_idx)

    def step(self, action: str) -> Any:
        return self._timed(f"step {_short(action, 40)!r}", super().step, action)

    def _timed(self, what: str, method: Callable[[Any], Any], argument: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        answer = without_collections(method, argument)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        advice = ("; it is served on the event loop (blocking = False), where every other request waits for it: "
                  "make it faster or set blocking = True")
        _require(cpu <= INLINE_CALL_S, f"{self.name}: a {what} took {1000 * cpu:.0f} ms of CPU, over "
                 f"{1000 * INLINE_CALL_S:.0f}{advice}")
        _require(wall - cpu <= INLINE_WAIT_S, f"{self.name}: a {what} waited {wall - cpu:.1f} s (a sleep, I/O or "
                 f"another process) besides its {1000 * cpu:.0f} ms of CPU{advice}")
        return answer


def _check_metadata(env_cls: type[Environment]) -> None:
    try:
        check_metadata(env_cls)
    except ValueError as exc:
        raise ConformanceError(str(exc)) from None
    for split, indices in env_cls.splits.items():  # a server serves an empty split; a conforming env has none
        _require(len(indices) > 0, f"{env_cls.name}: splits[{split!r}] must be a non-empty range (or TaskRange), not {indices!r}")
    # evaluation splits may nest (ALFWorld's test is its test_seen and test_unseen); training on one may not
    train = env_cls.splits.get("train")
    for other, indices in env_cls.splits.items():
        if train is None or other == "train":
            continue
        shared = _first_shared(train, indices)
        _require(shared is None, f"{env_cls.name}: task {shared} is in both splits['train'] and splits[{other!r}]: "
                 "an agent would be trained on tasks it is evaluated on (a TaskRange can leave them out of train)")


def _first_shared(a: range | TaskRange, b: range | TaskRange) -> int | None:
    """The first task index in both splits (``check_metadata`` has made sure each is a range or TaskRange)."""
    return next((i for i in range(max(a.start, b.start), min(a.stop, b.stop)) if i in a and i in b), None)


def _check_score(answer: Any, env_cls: type[Environment], what: str) -> None:
    low, high = env_cls.reward_range
    _require(
        low <= answer.score <= high,
        f"{env_cls.name}: {what} gave score {answer.score}, outside reward_range ({low}, {high})",
    )


def _check_determinism(reset_a: Callable[[int], Any], reset_b: Callable[[int], Any], tasks: list[int], name: str) -> None:
    for idx in tasks:
        once, again, elsewhere = reset_a(idx).observation, reset_a(idx).observation, reset_b(idx).observation
        _require(once == again, f"{name}: task {idx} gave two first observations in one session")
        _require(once == elsewhere, f"{name}: task {idx} gave another first observation in a fresh session")


def _check_bad_actions(session: LocalSession, idx: int, env_cls: type[Environment]) -> None:
    for what, action in BAD_ACTIONS.items():
        session.reset(idx)
        answer = session.step(action)
        _require(
            answer.reward == 0 and not answer.success,
            f"{env_cls.name}: the {what} action gave reward {answer.reward}"
            + (" and success" if answer.success else "") + " (a bad action must score 0)",
        )
        _require(isinstance(answer.observation, str), f"{env_cls.name}: the {what} action gave no observation")
        _check_score(answer, env_cls, f"the {what} action")
    session.reset(idx)
    for what, action in REFUSED_ACTIONS.items():
        _raises(BadRequest, lambda action=action: session.step(action), f"{env_cls.name}: {what}")


def _check_rules_in_process(env_cls: type[Environment], session: LocalSession) -> None:
    fresh = LocalSession(env_cls, 99)
    try:
        _raises(EpisodeNotRunning, lambda: fresh.step("look"), f"{env_cls.name}: a step before any reset")
        _raises(EpisodeNotRunning, fresh.expert, f"{env_cls.name}: an expert move before any reset")
    finally:
        fresh.close()
    outside = max(r.stop for r in env_cls.splits.values()) + 10**6
    _raises(BadRequest, lambda: session.reset(outside), f"{env_cls.name}: task {outside}, outside every split")
    _raises(BadRequest, lambda: session.reset(-1), f"{env_cls.name}: task -1")
    _play_expert(session, sample_tasks(env_cls, _test_split(env_cls), 1)[0], env_cls)
    _raises(EpisodeNotRunning, lambda: session.step("look"), f"{env_cls.name}: a step after the episode's end")
    served = sample_tasks(env_cls, _test_split(env_cls), 1)[0]
    _raises(SessionNotFound, lambda: fresh.reset(served), f"{env_cls.name}: a closed session")


def _raises(error: type[Exception], call: Callable[[], Any], what: str) -> None:
    try:
        call()
    except error:
        return
    raise ConformanceError(f"{what} was not refused with {error.__name__}")


def _play_expert(session: Any, idx: int, env_cls: type[Environment]) -> list[tuple[str, str, float, bool]]:
    """The expert's episode on task ``idx``: (action, observation, score, done) a step."""
    played_type, known = getattr(session.reset(idx), "task_type", None), env_cls.task_type_of(idx)
    _require(
        known is None or played_type is None or known == played_type,
        f"{env_cls.name}: task_type_of({idx}) says {known!r}, but the task's reset says {played_type!r}",
    )
    rounds = env_cls.expert_max_rounds or env_cls.max_rounds
    played: list[tuple[str, str, float, bool]] = []
    went_on = None  # the score of the last step that solved the task without ending the episode
    for _ in range(rounds):
        move = session.expert()
        try:
            answer = session.step(format_react(move.thought, move.action))
        except EnvCrashed as exc:  # the env crashed (a score outside reward_range is one): said as this check's
            if went_on is None:
                raise ConformanceError(f"{env_cls.name}: task {idx}'s expert action {move.action!r}: {exc}") from None
            break  # the cause is the solved step that went on: said below
        played.append((move.action, answer.observation, answer.score, answer.done))
        try:
            _check_score(answer, env_cls, f"task {idx}'s expert action {move.action!r}")
        except ConformanceError:
            if went_on is None:
                raise
            break  # the cause is the solved step that went on (its rewards summed past the range): said below
        if answer.done:
            went_on = None  # solved on the way and ended later: fine
            break
        went_on = answer.score if answer.success else None
    if went_on is not None:
        raise ConformanceError(
            f"{env_cls.name}: the expert reached success score {went_on} on task {idx} but the episode never "
            "ended: a solved task's step must return terminated=True"
        )
    _require(
        answer.done and answer.success,
        f"{env_cls.name}: the expert did not solve task {idx} in {len(played)} rounds (score {answer.score}); "
        f"its last action {move.action!r} gave {_short(answer.observation)!r}",
    )
    return played


def _check_replay(
    session: LocalSession, idx: int, played: list[tuple[str, str, float, bool]], env_cls: type[Environment]
) -> None:
    """The expert's actions on task ``idx`` (its episode ``played``), played again from a reset, score the
    same at every step: the task's hidden state comes from its index alone (a goal drawn at random passes
    the first observation check when the first text does not show it).  Observations may differ
    (ScienceWorld's thermometer reads 19 or 21 degrees on the same path)."""
    session.reset(idx)
    for step, (action, observation, score, done) in enumerate(played, 1):
        answer = session.step(action)
        _require(
            (answer.score, answer.done) == (score, done),
            f"{env_cls.name}: task {idx} played again gave another episode: step {step} ({action!r}) answered "
            f"{_short(answer.observation)!r} with score {answer.score}{' and done' * answer.done}, where it "
            f"answered {_short(observation)!r} with score {score}{' and done' * done}",
        )


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


@contextmanager
def _frees_what_it_holds(name: str) -> Iterator[None]:
    import psutil

    me = psutil.Process()
    threads, children = threading.active_count(), {p.pid for p in me.children(recursive=True)}
    yield
    deadline = time.monotonic() + 10
    while True:
        extra_threads = threading.active_count() - threads
        extra_children = {p.pid for p in me.children(recursive=True)} - children
        if (extra_threads <= 0 and not extra_children) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    _require(not extra_children, f"{name}: closed sessions left child processes {sorted(extra_children)}")
    _require(extra_threads <= 0, f"{name}: closed sessions left {extra_threads} thread(s) running")


# --- over HTTP ------------------------------------------------------------------------------------------


def check_server(url: str, env: str, *, expert_tasks: int = 3, split: str | None = None, token: str | None = None) -> list[str]:
    """Check the server at ``url`` that serves ``env`` (the env's package must be installed here, for its
    class metadata); returns the checks passed."""
    import httpx

    from agentenv.client import EnvClient
    from agentenv.protocol import InfoResponse
    from agentenv.registry import env_class

    env_cls = env_class(env)
    split = split or _test_split(env_cls)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    passed: list[str] = []
    with httpx.Client(base_url=f"{url.rstrip('/')}/{env}", timeout=120, headers=headers) as http, \
            EnvClient(env, url, token=token) as client, _server_frees_what_it_holds(http, env) as info:
        InfoResponse.model_validate(info)
        _require(info["env"] == env, f"{url}/{env}/info names env {info['env']!r}")
        passed.append("/info")
        tasks = sample_tasks(env_cls, split, max(expert_tasks, 1))
        with client.session() as a, client.session() as b:
            _check_determinism(a.reset, b.reset, tasks, env)
            passed.append("same index, same first observation")
            for what, action in BAD_ACTIONS.items():
                a.reset(tasks[0])
                # JSON escapes, as a client in any language may send them (httpx would refuse a lone surrogate)
                body = json.dumps({"id": a.id, "action": action}).encode()
                answer = http.post("/step", content=body, headers={"content-type": "application/json"})
                _require(answer.status_code == 200, f"{env}: a {what} action answered {answer.status_code} {_body(answer)}")
                _require(answer.json()["reward"] == 0, f"{env}: a {what} action was rewarded")
            for what, action in REFUSED_ACTIONS.items():
                body = json.dumps({"id": a.id, "action": action}).encode()
                answer = http.post("/step", content=body, headers={"content-type": "application/json"})
                _error(answer, 422, f"{env}: {what}")
            passed.append("bad actions never raise and score 0")
            _check_error_answers(http, env_cls, a.id, tasks[0])
            passed.append("404 / 409 / 422 answers")
            _check_wire_shapes(http, env_cls, tasks[0])
            passed.append("AgentGym wire shapes")
            for idx in tasks[:expert_tasks]:
                _play_expert(a, idx, env_cls)
            _error(http.post("/step", json={"id": a.id, "action": "x"}), 409, f"{env}: a step after the episode's end")
            passed.append(f"expert solves {len(tasks[:expert_tasks])} {split} tasks over HTTP")
    passed.append("close frees sessions and child processes")
    return passed


def _body(answer: Any) -> str:
    """An error answer's own words (its ``error``), for a message."""
    try:
        return repr(answer.json().get("error", answer.text))
    except (ValueError, AttributeError):
        return repr(answer.text[:200])


def _error(answer: Any, status: int, what: str) -> None:
    _require(answer.status_code == status, f"{what}: answered {answer.status_code}, not {status}")
    body = answer.json()
    _require(isinstance(body, dict) and isinstance(body.get("error"), str), f"{what}: no {{'error': ...}} body")


def _check_error_answers(http: Any, env_cls: type[Environment], sid: int, idx: int) -> None:
    name = env_cls.name
    unknown = 2**62
    _error(http.post("/step", json={"id": unknown, "action": "x"}), 404, f"{name}: a step of an unknown id")
    _error(http.get("/observation", params={"id": unknown}), 404, f"{name}: an observation of an unknown id")
    _error(http.post("/step", json={"id": sid}), 422, f"{name}: a step without an action")
    _error(http.post("/step", content=b"{not json", headers={"content-type": "application/json"}), 422, f"{name}: a body that is not JSON")
    outside = max(r.stop for r in env_cls.splits.values()) + 10**6
    _error(http.post("/reset", json={"id": sid, "data_idx": outside}), 422, f"{name}: task {outside}")
    created = http.post("/create", json={}).json()
    fresh = created if isinstance(created, int) else created["id"]
    if isinstance(created, int) or created.get("observation") is None:  # (TextCraft's create starts a task)
        _error(http.post("/step", json={"id": fresh, "action": "x"}), 409, f"{name}: a step before any reset")
    _require(http.post("/close", json={"id": fresh}).status_code == 200, f"{name}: /close failed")
    _error(http.post("/reset", json={"id": fresh, "data_idx": idx}), 404, f"{name}: a reset of a closed session")


def _check_wire_shapes(http: Any, env_cls: type[Environment], idx: int) -> None:
    """Play a step in AgentGym's own form and check the fields its answers carry."""
    wire, name = env_cls.wire, env_cls.name
    key = wire.family  # "id" or "env_idx"
    if env_cls.agentgym_task(idx) != idx:  # AgentGym's field names AgentGym's own tasks here (a loaded file)
        idx = next((i for i in range(64) if env_cls.serves(env_cls.agentgym_task(i))), 0)
    created = http.post("/create", json={}).json()
    if wire.creates_int:
        _require(isinstance(created, int) and not isinstance(created, bool), f"{name}: /create answered {created!r}, not an int")
        sid = created
    else:
        _require(isinstance(created, dict), f"{name}: /create answered {created!r}, not an object")
        _has(created, wire.shapes.get("create", ("id",)), f"{name} /create")
        sid = created["id"]
    try:
        reset = http.post("/reset", json={key: sid, wire.reset_field: idx}).json()
        if wire.reset_answer == "observation" and wire.reset_field != "data_idx":
            _require(isinstance(reset, str), f"{name}: /reset in AgentGym's form answered {type(reset).__name__}, not a string")
        elif wire.reset_answer == "pair" and wire.reset_field != "data_idx":
            pair = isinstance(reset, list) and len(reset) == 2 and isinstance(reset[0], str)
            _require(pair, f"{name}: /reset in AgentGym's form answered {reset!r:.80}, not [observation, null]")
        else:
            _has(reset, wire.shapes.get("reset", ("observation",)), f"{name} /reset")
        step = http.post("/step", json={key: sid, "action": "???"}).json()
        _has(step, wire.shapes.get("step", ("observation", "reward", "done")), f"{name} /step")
        observation = http.get("/observation", params={key: sid})
        _require(observation.status_code == 200 and isinstance(observation.json(), str), f"{name}: /observation is not a string")
    finally:
        http.post("/close", json={key: sid})


def _has(answer: Any, fields: tuple[str, ...], what: str) -> None:
    _require(isinstance(answer, dict), f"{what} answered {answer!r}, not an object")
    missing = [f for f in fields if f not in answer]
    _require(not missing, f"{what} lacks AgentGym's field(s) {missing}")


@contextmanager
def _server_frees_what_it_holds(http: Any, env: str) -> Iterator[dict[str, Any]]:
    """Yields ``/info``; afterwards, the server holds as many live sessions (and, when it runs on this
    machine, child processes) as before."""
    answer = http.get("/info")
    if answer.status_code != 200:  # a token refused: said, not a validation error of the error's body
        hint = ": give check_server the server's token (token=...)" if answer.status_code == 401 else ""
        raise ConformanceError(f"{env}: /info answered {answer.status_code} {_body(answer)}{hint}")
    info = answer.json()
    health = http.get("/health").json()
    process = _local_process(health.get("pid"))
    children = {p.pid for p in process.children(recursive=True)} if process else set()
    yield info
    deadline = time.monotonic() + 10
    while True:
        live = http.get("/info").json()["live_sessions"]
        extra = ({p.pid for p in process.children(recursive=True)} - children) if process else set()
        if (live <= info["live_sessions"] and not extra) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    _require(live <= info["live_sessions"], f"{env}: {live - info['live_sessions']} session(s) still live after closing")
    _require(not extra, f"{env}: the server kept child processes {sorted(extra)} after its sessions closed")


def _local_process(pid: int | None) -> Any:
    import psutil

    if pid is None:
        return None
    try:
        return psutil.Process(pid)
    except psutil.Error:  # another machine's pid (or gone)
        return None


# --- OpenEnv's protocol ---------------------------------------------------------------------------------


def check_openenv(url: str, env: str, *, expert_tasks: int = 1, split: str | None = None, token: str | None = None) -> list[str]:
    """Check OpenEnv's protocol on the server at ``url`` that serves ``env`` (``/<env>/openenv``): ``/health``,
    ``/metadata``, ``/schema`` and the stateless HTTP reset / step; over the WebSocket, the same first
    observation as the uniform form's, bad actions answered and refused as the kit does (error frames with
    the kit's status, the session carrying on), the expert (asked through the uniform ``/expert`` of the
    session ``state`` names) solving test tasks with reward and ``done``, and a closed socket freeing its
    session.  Returns the checks passed."""
    import httpx
    from websockets.sync.client import connect

    from agentenv.client import EnvClient
    from agentenv.registry import env_class

    env_cls = env_class(env)
    split = split or _test_split(env_cls)
    tasks = sample_tasks(env_cls, split, max(expert_tasks, 1))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    ws_url = f"{url.rstrip('/').replace('http', 'ws', 1)}/{env}/openenv/ws"
    passed: list[str] = []
    with httpx.Client(base_url=f"{url.rstrip('/')}/{env}", timeout=120, headers=headers) as http, \
            EnvClient(env, url, token=token) as client, _server_frees_what_it_holds(http, env):
        _require(http.get("/openenv/health").json() == {"status": "healthy"}, f"{env}: OpenEnv /health is not healthy")
        meta = http.get("/openenv/metadata").json()
        _require(meta.get("name") == env and isinstance(meta.get("description"), str), f"{env}: OpenEnv /metadata {meta!r}")
        schema = http.get("/openenv/schema").json()
        missing = [k for k in ("action", "observation", "reset_observation", "state") if not isinstance(schema.get(k), dict)]
        _require(not missing, f"{env}: OpenEnv /schema lacks {missing}")
        _require("action" in schema["action"].get("required", []), f"{env}: OpenEnv's action type has no 'action' field")
        first = http.post("/openenv/reset", json={"data_idx": tasks[0]})
        _require(first.status_code == 200 and not first.json()["done"], f"{env}: OpenEnv's HTTP reset answered {first.status_code}")
        _error(http.post("/openenv/step", json={"action": {"action": "x"}}), 409, f"{env}: OpenEnv's stateless HTTP step")
        passed.append("OpenEnv /health, /metadata, /schema, HTTP reset and step")

        with connect(ws_url, additional_headers=headers, open_timeout=30) as socket:

            def ask(message: Any, raw: bool = False) -> dict[str, Any]:
                socket.send(message if raw else json.dumps(message))
                return json.loads(socket.recv(timeout=120))

            def refused(answer: dict[str, Any], code: str, status: int | None, what: str) -> None:
                data = answer.get("data") or {}
                _require(answer.get("type") == "error" and data.get("code") == code and isinstance(data.get("message"), str),
                         f"{env}: {what} answered {answer!r}, not an error frame with code {code}")
                _require(status is None or data.get("status") == status, f"{env}: {what}: status {data.get('status')}, not {status}")

            state = ask({"type": "state"})
            _require(state["type"] == "state" and state["data"]["episode_id"] is None, f"{env}: OpenEnv state before a reset: {state!r}")
            sid = state["data"]["session_id"]
            refused(ask({"type": "step", "data": {"action": "look"}}), "EXECUTION_ERROR", 409, "a step before any reset")
            outside = max(r.stop for r in env_cls.splits.values()) + 10**6
            refused(ask({"type": "reset", "data": {"data_idx": outside}}), "VALIDATION_ERROR", 422, f"task {outside}")
            refused(ask("{not json", raw=True), "INVALID_JSON", None, "a message that is not JSON")
            refused(ask({"type": "dance"}), "UNKNOWN_TYPE", None, "an unknown message type")
            reset = ask({"type": "reset", "data": {"data_idx": tasks[0]}})
            observation = reset["data"]["observation"]
            with client.session() as uniform:
                _require(observation["text"] == uniform.reset(tasks[0]).observation == first.json()["observation"]["text"],
                         f"{env}: OpenEnv's first observation of task {tasks[0]} differs from the uniform form's")
            _require(observation["instruction"] == env_cls.instruction, f"{env}: OpenEnv's reset lacks the instruction")
            passed.append("OpenEnv reset: the uniform form's first observation, and the rules' error frames")
            for what, action in BAD_ACTIONS.items():
                answer = ask({"type": "step", "data": {"action": action}})
                _require(answer["type"] == "observation" and answer["data"]["reward"] == 0, f"{env}: a {what} action: {answer!r}"[:300])
                if answer["data"]["done"]:
                    ask({"type": "reset", "data": {"data_idx": tasks[0]}})
            refused(ask({"type": "step", "data": {"act": "x"}}), "VALIDATION_ERROR", 422, "an action of the wrong shape")
            for what, action in REFUSED_ACTIONS.items():
                refused(ask({"type": "step", "data": {"action": action}}), "VALIDATION_ERROR", 422, what)
            passed.append("OpenEnv: bad actions answered with reward 0, refused ones with error frames")
            for idx in tasks[:expert_tasks]:
                ask({"type": "reset", "data": {"data_idx": idx}})
                steps = 0
                while steps < (env_cls.expert_max_rounds or env_cls.max_rounds):
                    move = http.get("/expert", params={"id": sid}).json()
                    answer = ask({"type": "step", "data": {"action": format_react(move["thought"], move["action"])}})
                    _require(answer["type"] == "observation", f"{env}: an expert step answered {answer!r}"[:300])
                    steps += 1
                    if answer["data"]["done"]:
                        break
                result, state = answer["data"], ask({"type": "state"})["data"]
                _require(result["done"] and result["observation"]["success"], f"{env}: the expert did not solve task {idx} over OpenEnv")
                _require(state["step_count"] == steps and state["done"] and state["data_idx"] == idx, f"{env}: OpenEnv state {state!r}")
                refused(ask({"type": "step", "data": {"action": "x"}}), "EXECUTION_ERROR", 409, "a step after the episode's end")
            passed.append(f"expert solves {len(tasks[:expert_tasks])} {split} tasks over OpenEnv's WebSocket")
            socket.send(json.dumps({"type": "close"}))
        deadline = time.monotonic() + 10
        while http.get("/detail", params={"id": sid}).status_code != 404 and time.monotonic() < deadline:
            time.sleep(0.05)
        _error(http.get("/detail", params={"id": sid}), 404, f"{env}: the session of a closed OpenEnv socket")
    passed.append("a closed OpenEnv socket frees its session")
    return passed


# --- the OpenAPI schema -----------------------------------------------------------------------------------


def check_openapi(url: str, *, max_examples: int = 8) -> int:
    """Fuzz every operation of the server at ``url`` from its ``/openapi.json`` (schemathesis, at most
    ``max_examples`` cases each): every answer must be no 5xx and a status, content type and body the schema
    documents.  Returns how many cases ran; raises :class:`ConformanceError` listing the failures.

    A single-env server answers each route twice, at ``/step`` and at ``/{env}/step``, from one endpoint
    with one schema: the prefixed copy gets one case, which shows it is there and documented.

    The fuzzing runs in a child interpreter: under pytest, whose assertion rewriting parses schemathesis's
    and hypothesis's modules as they are first imported, that import inside a test with server threads
    running hit CPython 3.11.7's "AST constructor recursion depth mismatch"."""
    import importlib.util
    import json
    import subprocess
    import sys

    if importlib.util.find_spec("schemathesis") is None:
        raise ConformanceError("check_openapi fuzzes with schemathesis, which is not installed: "
                               "pip install 'agentenv[conformance]'")
    code = f"import json, sys; from {__name__} import _fuzz_openapi; print(json.dumps(_fuzz_openapi(sys.argv[1], int(sys.argv[2]))))"
    done = subprocess.run([sys.executable, "-c", code, url, str(max_examples)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ConformanceError(f"{url}: the OpenAPI fuzzer failed: {done.stderr.strip()[-2000:]}")
    cases, failures = json.loads(done.stdout.strip().splitlines()[-1])
    _require(not failures, f"{url}: {len(failures)} answer(s) break the OpenAPI schema: " + "; ".join(failures[:5]))
    return cases


def _fuzz_openapi(url: str, max_examples: int) -> tuple[int, list[str]]:
    """:func:`check_openapi`'s fuzzing: ``(cases run, the distinct failures)``."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.core.failures import FailureGroup
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    schema = schemathesis.openapi.from_url(f"{url.rstrip('/')}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    copies = _prefixed_copies(url, {(op.method.upper(), op.path) for op in operations})
    failures: list[str] = []
    cases = 0
    for operation in operations:
        examples = 1 if (operation.method.upper(), operation.path) in copies else max_examples

        @given(case=operation.as_strategy())
        @settings(max_examples=examples, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            nonlocal cases
            cases += 1
            try:
                case.call_and_validate(checks=checks, timeout=60)  # a JVM (SciWorld) starts slowly on a loaded machine
            except (Exception, FailureGroup) as exc:  # collected: every operation is fuzzed before the verdict
                failures.append(f"{case.operation.label}: {str(exc).strip().splitlines()[0]}")

        try:
            run()
        except (Exception, FailureGroup) as exc:  # FailureGroup: a BaseExceptionGroup, not an Exception
            lines = str(exc).strip().splitlines()
            found = [line[2:] for line in lines if line.startswith("- ")] or lines[:1]
            failures.append(f"{operation.label}: {', '.join(found)}")
    return cases, sorted(set(failures))


def _prefixed_copies(url: str, operations: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The operations ``(METHOD, /{env}/path)`` of a single-env server whose ``(METHOD, /path)`` it also
    serves: the same endpoint under the env's prefix."""
    import httpx

    try:
        env = httpx.get(f"{url.rstrip('/')}/info", timeout=30).json()["env"]
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return set()  # a server with several envs (or none) has no unprefixed copies
    prefix = f"/{env}/"
    return {(method, path) for method, path in operations
            if path.startswith(prefix) and (method, path[len(prefix) - 1 :]) in operations}
