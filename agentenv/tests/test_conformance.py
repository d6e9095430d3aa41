"""The conformance suite over every installed environment: in process, and over HTTP on a real server."""

from __future__ import annotations

import pytest

# Imported at collection, in the main thread: imported first inside a test, pytest's assertion rewriting
# parses schemathesis's modules while the test's server threads run, and CPython 3.11.7's AST constructor
# then failed once ("SystemError: AST constructor recursion depth mismatch").
import schemathesis.checks  # noqa: F401
import schemathesis.specs.openapi.checks  # noqa: F401

from agentenv.registry import env_class, installed_envs
from agentenv.testing import check_env, check_openapi, check_server, running_server
from agentenv.testing.conformance import check_openenv

ENVS = installed_envs()


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


@pytest.mark.parametrize("env", ENVS)
def test_server_answers_only_what_its_openapi_schema_documents(env):
    with running_server(env_class(env)) as url:
        assert check_openapi(url, max_examples=6) > 0
