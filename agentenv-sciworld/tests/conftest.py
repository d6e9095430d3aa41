import pytest


@pytest.fixture(scope="module")
def env():
    """One SciWorldEnv (one JVM) shared by a test module."""
    from agentenv_sciworld import SciWorldEnv

    env = SciWorldEnv()
    yield env
    env.close()
