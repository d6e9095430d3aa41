"""The conformance suite over every installed environment: in process, and over HTTP on a real server."""

from __future__ import annotations

import contextlib
import time

import pytest

from agentenv.env import TaskRange
from agentenv.registry import UnknownEnv, env_class, installed_envs
from agentenv.testing import check_env, check_openapi, check_server, running_server
from agentenv.testing.conformance import check_openenv

ENVS = installed_envs()
LOADED = {}
for _env in ENVS:  # a package that does not load fails its own tests below, not this module's collection
    with contextlib.suppress(UnknownEnv):
        LOADED[_env] = env_class(_env)


def same_server_as(env: str) -> str | None:
    """The installed env whose server ``env``'s is, with other tasks: a subclass keeping its wire serves the
    same routes and schema from the same code (``sciworld_agentgym`` is ``sciworld`` with AgentGym's ids)."""
    cls = LOADED.get(env)
    return next((o for o, other in LOADED.items() if cls is not None and o != env and issubclass(cls, other)
                 and cls.wire == other.wire), None)


# the schema fuzz once per server code: a variant's tasks are checked in process, over HTTP and over OpenEnv
# (fuzzing sciworld_agentgym's schema again cost 37 s of JVM starts for nothing new)
OWN_SERVERS = [env for env in ENVS if same_server_as(env) is None]


@pytest.mark.parametrize("env", ENVS)
def test_env_conforms_in_process(env):
    passed = check_env(env_class(env), expert_tasks=2)
    assert "close frees threads and child processes" in passed


@pytest.mark.parametrize("env", ENVS)
def test_server_conforms_over_http(env):
    with running_server(env_class(env)) as url:
        passed = check_server(url, env, expert_tasks=2)
    assert "AgentGym wire shapes" in passed and "close frees sessions and child processes" in passed


@pytest.mark.parametrize("env", ENVS)
def test_server_speaks_openenv(env):
    with running_server(env_class(env)) as url:
        passed = check_openenv(url, env)
    assert "a closed OpenEnv socket frees its session" in passed


@pytest.mark.parametrize("env", OWN_SERVERS)
def test_server_answers_only_what_its_openapi_schema_documents(env):
    with running_server(env_class(env)) as url:
        assert check_openapi(url, max_examples=6) > 0


def test_check_openapi_catches_an_answer_its_schema_does_not_document():
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from agentenv.testing.conformance import ConformanceError

    app = FastAPI()

    @app.get("/teapot")
    def teapot() -> dict:  # documented as 200 with a JSON object; answers 418
        return JSONResponse({"error": "I'm a teapot"}, status_code=418)

    with running_server(app) as url, pytest.raises(ConformanceError, match="break the OpenAPI schema"):
        check_openapi(url, max_examples=2)


def test_the_fuzzer_gives_one_case_to_a_route_served_again_under_the_envs_prefix():
    from agentenv.server.app import create_app
    from agentenv.testing.conformance import _prefixed_copies

    operations = {("POST", "/step"), ("POST", "/maze/step"), ("POST", "/maze/create"), ("GET", "/maze/health")}
    with running_server(env_class("maze")) as url:
        assert _prefixed_copies(url, operations) == {("POST", "/maze/step")}
    with running_server(create_app([env_class("maze"), env_class("wordle")])) as url:  # no unprefixed routes
        assert _prefixed_copies(url, {("POST", "/step"), ("POST", "/maze/step")}) == set()


def _guess_variant(**attributes):
    from test_controller_support import GuessEnv

    return type("Broken", (GuessEnv,), {"name": "broken", **attributes})


def _random_secret_reset(self, data_idx):
    """A secret that is not the index's alone, as a goal drawn at random is, but never the same twice in a row
    (a random draw repeated itself one time in 16, and the check then rightly saw the same episode)."""
    GuessEnv = type(self).__mro__[1]
    first = GuessEnv.reset(self, data_idx)
    self.resets = getattr(self, "resets", 0) + 1
    self.secret = (data_idx + self.resets) % 16  # the first text does not show it
    return first


def _overpaid_step(self, action):
    result = type(self).__mro__[1].step(self, action)
    if result.score:
        result.score = result.reward = 5.0
    return result


def _unended_step(self, action):
    result = type(self).__mro__[1].step(self, action)
    result.terminated = False
    return result


def _unended_summed_step(self, action):
    """Unended, and scored by its rewards' sum (the kit's default): the next step is paid again, past the
    range, which the check reported instead of the unended solved step."""
    result = _unended_step(self, action)
    result.score = None
    return result


def _busy_step(self, action):
    """A step that computes for 0.15 s of CPU."""
    from test_controller_support import spend_cpu

    spend_cpu(0.15)
    return type(self).__mro__[1].step(self, action)


def _sleepy_reset(self, data_idx):
    """A reset that waits 1.2 s, as one reading a slow disk or another process would."""
    time.sleep(1.2)
    return type(self).__mro__[1].reset(self, data_idx)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"splits": {"train": [0, 100], "test": [100, 140]}}, r"splits\['train'\] must be a range \(or TaskRange\)"),
        ({"splits": {"train": range(0), "test": range(100, 140)}}, r"splits\['train'\] must be a non-empty range"),
        ({"splits": {"train": TaskRange(0, 200, excluded=range(100, 139)), "test": range(100, 140)}},
         r"task 139 is in both splits\['train'\] and splits\['test'\]: an agent would be trained on tasks it is"),
        ({"name": "my env"}, r"Broken.name must be a short identifier"),
        ({"reward_range": (1.0, 0.0)}, r"reward_range must be \(low, high\) with low < high"),
        ({"success_score": 2.0}, r"success_score 2.0 lies outside reward_range"),
        ({"reset": _random_secret_reset, "task_type_of": classmethod(lambda cls, i: None)},  # its type varies too
         r"task 100 played again gave another episode: step \d"),
        ({"step": _overpaid_step, "success_score": 1.0}, r"expert action 'guess \d+': \[500\] broken env's step returned score 5, outside its reward_range \(0, 1\)"),
        ({"step": _unended_step}, r"reached success score 1.0 on task 100 but the episode never ended"),
        ({"step": _unended_summed_step}, r"reached success score 1.0 on task 100 but the episode never ended"),
        ({"task_type_of": classmethod(lambda cls, i: "odd")}, r"task_type_of\(100\) says 'odd', but the task's reset says"),
        ({"blocking": False, "step": _busy_step}, r"broken: a step '' took 1\d\d ms of CPU, over 100; it is served on "
         r"the event loop \(blocking = False\), where every other request waits for it: make it faster or set blocking = True"),
        ({"blocking": False, "reset": _sleepy_reset}, r"broken: a reset to task 100 waited 1\.\d s \(a sleep, I/O or "
         r"another process\) besides its \d+ ms of CPU; it is served on the event loop"),
    ],
    ids=["splits of lists", "empty split", "train shares a test task", "name", "reward range", "success score", "random hidden state", "score out of range",
         "success not ended", "success not ended, rewards summed", "task type told apart", "slow on the event loop",
         "waits on the event loop"],
)
def test_check_env_names_the_mistake(attributes, message):
    """Mistakes a new env makes, each caught with a message that points at it (they passed, or ended in an
    AttributeError deep in a check)."""
    from agentenv.testing.conformance import ConformanceError

    with pytest.raises(ConformanceError, match=message):
        check_env(_guess_variant(**attributes), expert_tasks=1)


def _step_meeting_a_collection(self, action):
    """A step in which the garbage collector would run collections of 0.15 s of CPU: they are the process's,
    not the env's."""
    from test_controller_support import meet_slow_collections

    meet_slow_collections()
    return type(self).__mro__[1].step(self, action)


def test_check_env_does_not_charge_an_env_on_the_event_loop_for_the_processs_garbage_collections():
    check_env(_guess_variant(blocking=False, step=_step_meeting_a_collection), expert_tasks=1)


def test_check_server_without_the_servers_token_says_to_give_it():
    """It failed validating the 401's body: '11 validation errors for InfoResponse'."""
    from agentenv.testing.conformance import ConformanceError

    if "maze" not in ENVS:
        pytest.skip("the check plays Maze (agentenv-lmrlgym)")
    with running_server(env_class("maze"), token="sekrit") as url:
        with pytest.raises(ConformanceError, match=r"maze: /info answered 401 .*: give check_server the server's token"):
            check_server(url, "maze", expert_tasks=1)


def test_check_openapi_without_its_fuzzer_says_what_to_install(monkeypatch):
    """schemathesis came only with the project's own set-up: from a wheel, check_openapi failed with the
    fuzzer's ModuleNotFoundError in a child's traceback."""
    import importlib.util

    from agentenv.testing.conformance import ConformanceError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "schemathesis" else real(name, *a))
    with pytest.raises(ConformanceError, match=r"not installed: pip install 'agentenv\[conformance\]'"):
        check_openapi("http://127.0.0.1:9")
