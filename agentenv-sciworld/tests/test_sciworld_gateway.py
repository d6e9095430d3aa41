"""Each session's JVM listens on a loopback port that answers only a client presenting py4j's auth token; no
child process of a server listens otherwise."""

import socket

import httpx
import psutil
import pytest
from agentenv_sciworld import SciWorldEnv
from py4j.java_gateway import GatewayParameters, JavaGateway
from py4j.protocol import Py4JError

from agentenv.testing import running_server


def _connections(process: psutil.Process) -> list:
    """A process's inet sockets: ``net_connections`` since psutil 6, ``connections`` before (the floor is 5.9.5)."""
    return getattr(process, "net_connections", process.connections)(kind="inet")


def listening(pid: int) -> list[tuple[str, int]]:
    """``(address, port)`` of every TCP socket process ``pid`` listens on."""
    return [
        (c.laddr.ip, c.laddr.port)
        for c in _connections(psutil.Process(pid))
        if c.status == psutil.CONN_LISTEN
    ]


def refuses_without_token(port: int) -> bool:
    """A py4j client without the token (and one with a wrong token) gets no Java object out of ``port``."""
    for token in (None, "not-the-token"):
        gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token))
        try:
            gateway.jvm.java.lang.System.getProperty("user.name")
            return False  # it ran Java for a stranger
        except Py4JError:
            pass
        finally:
            gateway.close()
    return True


def test_a_py4j_client_without_the_token_is_refused(env):
    assert refuses_without_token(env.engine.port)
    assert env.engine.task_names()[0] == "boil"  # the engine's own, authenticated connection still works


def test_a_raw_socket_command_without_the_token_is_refused(env):
    with socket.create_connection(("127.0.0.1", env.engine.port), timeout=10) as raw:
        raw.sendall(b"r\nu\njava\nrj\ne\n")  # py4j's "look up the name java" command, no auth first
        answer = b""
        try:
            while chunk := raw.recv(4096):
                answer += chunk
        except ConnectionResetError:
            pass
    assert answer.startswith(b"!x") and b"Authentication error" in answer  # py4j's error answer, then closed


def test_the_jvm_listens_only_on_its_gateway_port_on_loopback(env):
    [(ip, port)] = listening(env.pid)
    assert port == env.engine.port and ip in ("127.0.0.1", "::ffff:127.0.0.1")


@pytest.mark.slow
def test_no_child_of_a_server_listens_without_authentication():
    """Every listening socket of every process a server started (one JVM per session) refuses strangers."""
    with running_server([SciWorldEnv]) as url, httpx.Client(base_url=url, timeout=60) as http:
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        sids = [http.post("/create", json={"data_idx": 0}).json()["id"] for _ in range(2)]
        children = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        ports = [port for child in children for _, port in listening(child.pid)]
        assert len(children) == 2 and len(ports) == 2  # one JVM per session, one gateway port each
        assert all(refuses_without_token(port) for port in ports)
        for sid in sids:
            http.post("/close", json={"id": sid})
