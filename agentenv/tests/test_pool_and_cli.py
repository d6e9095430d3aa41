"""``EnvPool`` over several servers (spreading, dead servers), the client's token, and CLI input errors."""

from __future__ import annotations

import argparse
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from agentenv.client import EnvClient, EnvNotServed, EnvPool, ServerFull, ServerUnreachable, Unauthorized
from agentenv.controller import commands
from agentenv.data.trajectory import read_trajectories
from agentenv.testing import refusing_url, running_server

from test_controller_support import GuessEnv


class SlowGuess(GuessEnv):
    """Resets take long enough that sessions opened together are all still being opened at once."""

    def reset(self, data_idx: int) -> str:
        time.sleep(0.2)
        return super().reset(data_idx)


def live_sessions(url: str) -> int:
    return httpx.get(f"{url}/guess/info").json()["live_sessions"]


def main(argv: list[str]) -> int:
    """``agentenv.cli.main`` with only the eval and collect commands (the trainer's take seconds to build)."""
    parser = argparse.ArgumentParser(prog="agentenv")
    commands.add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_sessions_opened_at_once_are_spread_over_the_servers():
    with running_server(SlowGuess) as a, running_server(SlowGuess) as b, EnvPool("guess", [a, b]) as pool:
        start = threading.Barrier(8)

        def open_one(_):
            start.wait()
            return pool.session(data_idx=0)

        with ThreadPoolExecutor(8) as threads:
            sessions = list(threads.map(open_one, range(8)))
        assert (live_sessions(a), live_sessions(b)) == (4, 4)
        for session in sessions:
            session.close()
        assert (live_sessions(a), live_sessions(b)) == (0, 0)


def test_a_full_server_sends_sessions_to_the_others_and_keeps_no_count_for_them():
    with (
        running_server(GuessEnv, max_sessions=1) as a,
        running_server(GuessEnv) as b,
        EnvPool("guess", [a, b]) as pool,
    ):
        sessions = [pool.session() for _ in range(4)]
        assert (live_sessions(a), live_sessions(b)) == (1, 3)
        for session in sessions:
            session.close()
        sessions = [pool.session() for _ in range(2)]
        assert (live_sessions(a), live_sessions(b)) == (1, 1)
        for session in sessions:
            session.close()


def count_creates(client) -> list[int]:
    """Record each ``create`` the client is asked for (an attempt on a dead server costs its retries)."""
    calls: list[int] = []
    create = client.create

    def counted(*args, **kwargs):
        calls.append(1)
        return create(*args, **kwargs)

    client.create = counted
    return calls


def test_a_dead_server_is_skipped_after_it_failed_once():
    with refusing_url() as dead, running_server(GuessEnv) as live:
        with EnvPool("guess", [dead, live], retries=1, backoff_s=0.01) as pool:
            assert pool.info()["env"] == "guess"  # the first server is down: the next one answers
            attempts = count_creates(pool.clients[0])
            sessions = [pool.session() for _ in range(6)]
            assert live_sessions(live) == 6 and attempts == []  # /info found it down: never tried again
            for session in sessions:
                session.close()

        with EnvPool("guess", [live, dead], retries=1, backoff_s=0.01) as pool:
            attempts = count_creates(pool.clients[1])
            sessions = [pool.session() for _ in range(6)]  # the 2nd tries the dead one (0 sessions) once
            assert live_sessions(live) == 6 and attempts == [1]
            for session in sessions:
                session.close()

    with EnvPool("guess", [dead], retries=0) as pool, pytest.raises(ServerUnreachable):
        pool.session()  # a server that is down is still tried when it is the only one

    # one server full, the other down: full (a run waits for a place), not unreachable (a run stops)
    with running_server(GuessEnv, max_sessions=1) as full, EnvPool("guess", [dead, full], retries=0) as pool:
        first = pool.session()
        with pytest.raises(ServerFull):
            pool.session()
        first.close()


def test_a_url_of_a_server_without_the_env_says_what_it_serves():
    class Other(GuessEnv):
        name = "other"

    with running_server([GuessEnv, Other]) as url, running_server(GuessEnv) as single:
        for env, base, says in (
            ("maze", url, f"{url} serves guess, other, not maze: give the URL of a maze server"),
            ("maze", single, f"{single} serves guess, not maze"),
            ("guess", f"{single}/guess", f"{single}/guess is the guess routes of a server: give the server's own URL, {single}"),
        ):
            with EnvClient(env, base, retries=0) as client, pytest.raises(EnvNotServed, match=says):
                client.info()
        with EnvPool("maze", [url]) as pool, pytest.raises(EnvNotServed):
            pool.info()  # what eval, collect and the trainers ask first


def test_clients_and_the_cli_send_the_token_from_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENTENV_TOKEN", "s3cret")
    with running_server(GuessEnv) as url:  # the server reads its token from AGENTENV_TOKEN too
        with EnvClient("guess", url) as client:
            assert client.info()["env"] == "guess"
        with EnvClient("guess", url, token="wrong") as client, pytest.raises(Unauthorized):
            client.info()  # a token given explicitly wins

        out = tmp_path / "r.jsonl"
        argv = [
            "eval",
            "--agent",
            "expert",
            "--env",
            "guess",
            "--url",
            url,
            "--out",
            str(out),
            "--no-progress",
        ]
        assert main([*argv, "--indices", "0:3"]) == 0
        assert len(list(read_trajectories(out))) == 3

        monkeypatch.setenv("AGENTENV_TOKEN", "wrong")
        with pytest.raises(SystemExit, match=r"^error: \[401\] .*AGENTENV_TOKEN"):
            main([*argv, "--indices", "3:6"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--indices", "1:x"], "argument --indices: '1:x' is not an index"),
        (["--indices", "0:10:0"], "argument --indices: bad '0:10:0'"),
        (["--indices", "-2"], "argument --indices: bad '-2'"),
        (["--indices", "1:2:3:4"], "argument --indices: bad '1:2:3:4'"),
        (["--indices", ","], "argument --indices: ',' names no task"),
        (["--concurrency", "0"], "argument --concurrency: must be at least 1, not 0"),
        (["--env", ","], "argument --env: ',' names nothing"),  # it ran no env, and said all was well
        (["--concurrency", "many"], "argument --concurrency: 'many' is not a whole number"),
        (["--temperature", "-0.5"], "argument --temperature: must be 0 (greedy) or more, not -0.5"),
        (["--temperature", "nan"], "argument --temperature: must be 0 (greedy) or more, not nan"),
    ],
)
def test_bad_options_are_usage_errors(args, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--agent", "expert", "--env", "guess", "--out", str(tmp_path / "r.jsonl"), *args])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_failures_of_a_run_are_one_line_errors(tmp_path):
    out = str(tmp_path / "r.jsonl")
    with running_server(GuessEnv) as url:
        with pytest.raises(SystemExit, match=r"^error: unknown agent spec 'robot'"):
            main(["eval", "--agent", "robot", "--env", "guess", "--url", url, "--out", out])
    with refusing_url() as dead:
        cases = [
            (
                ["eval", "--agent", "expert", "--env", "guess", "--url", dead],
                r"^error: GET .* failed after",
            ),
            (["collect", "--env", "no_such_env"], r"^error: no installed environment or server group 'no_such_env'"),
        ]
        for argv, pattern in cases:
            with pytest.raises(SystemExit, match=pattern) as exit_:
                main([*argv, "--out", out, "--no-progress"])
            assert "\n" not in exit_.value.code


def test_a_failure_no_command_foresaw_is_still_one_line(tmp_path, monkeypatch):
    from agentenv.cli import main as agentenv_main

    def fails(args):
        raise OSError("We couldn't connect to 'https://huggingface.co'.\nCheck your internet connection.")

    monkeypatch.setattr(commands, "run_compare", fails)
    with pytest.raises(SystemExit) as exit_:
        agentenv_main(["compare", "a.jsonl", "b.jsonl"])
    assert exit_.value.code == ("error: OSError: We couldn't connect to 'https://huggingface.co'. Check your internet "
                                "connection. (rerun with --debug for the traceback)")


def test_a_path_that_cannot_be_used_is_named_in_one_line(tmp_path):
    """A folder given for a results file, a file where a folder must be, a path with no permission: each was
    "error: IsADirectoryError: [Errno 21] ..." and the like, naming a temp file at times."""
    from agentenv.cli import main as agentenv_main

    (tmp_path / "adir.jsonl").mkdir()
    (tmp_path / "afile").write_text("")
    for name, success in (("a", "true"), ("b", "false")):
        (tmp_path / f"{name}.jsonl").write_text("".join(f'{{"item_id": "maze_{i}", "success": {success}}}\n' for i in range(3)))
    base = ["eval", "--agent", "expert", "--env", "maze", "--local", "--limit", "1", "--no-progress", "--out"]
    with pytest.raises(SystemExit) as exit_:
        agentenv_main([*base, str(tmp_path / "adir.jsonl")])
    assert exit_.value.code == f"error: results file {tmp_path / 'adir.jsonl'} is a folder: give the path of a file"
    with pytest.raises(SystemExit) as exit_:  # mkdir said "File exists"
        agentenv_main([*base, str(tmp_path / "afile" / "x.jsonl")])
    assert exit_.value.code == (f"error: results file {tmp_path / 'afile' / 'x.jsonl'}: {tmp_path / 'afile'} is a file, "
                                "not a folder: give another path")
    for argv, path, problem in [
        (["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--json", str(tmp_path / "adir.jsonl")],
         tmp_path / "adir.jsonl", "Is a directory"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            agentenv_main(argv)
        assert exit_.value.code == f"error: {path}: {problem} (rerun with --debug for the traceback)"
    with pytest.raises(SystemExit, match=r"adir.jsonl: a folder, not an episodes file$"):
        agentenv_main(["compare", str(tmp_path / "adir.jsonl"), str(tmp_path / "b.jsonl")])


def test_eval_takes_every_installed_env_as_collect_does():
    """`eval --env all` asked for "the URL of a all server"."""
    from agentenv.registry import installed_envs

    args = argparse.Namespace(env=["all"])
    commands._expand_all(args)
    assert args.env == installed_envs()


def test_serve_refuses_more_workers_than_the_machine_can_hold(capsys):
    """`serve --workers 1000` began starting 1000 processes on two cores."""
    from agentenv.cli import main as agentenv_main

    most = 8 * (os.cpu_count() or 1)
    with pytest.raises(SystemExit):
        agentenv_main(["serve", "maze", "--workers", str(most + 1)])
    assert f"argument --workers: must be at most {most} (8 per core of this machine), not {most + 1}" in capsys.readouterr().err


def test_a_commands_own_errors_are_one_line_and_debug_shows_the_exception():
    @commands.one_line_errors()
    def trains(args):
        raise ValueError("Couldn't instantiate the backend tokenizer from one of:\n(1) a file,\n(2) a slow one")

    with pytest.raises(SystemExit) as exit_:
        trains(argparse.Namespace(debug=False))
    assert exit_.value.code == "error: Couldn't instantiate the backend tokenizer from one of: (1) a file, (2) a slow one"
    with pytest.raises(ValueError, match="backend tokenizer"):  # agentenv --debug: the traceback, not a line
        trains(argparse.Namespace(debug=True))


def test_the_resume_hint_counts_episodes_past_a_line_a_kill_cut_inside_a_character(tmp_path):
    import json

    out = tmp_path / "r.jsonl"
    whole = json.dumps({"item_id": "maze_1", "meta": {"sample": 0}, "conversations": []}) + "\n"
    cut = json.dumps({"item_id": "maze_2", "observation": "caf\u00e9"}, ensure_ascii=False).encode()[:-3]  # inside the é
    out.write_bytes(whole.encode() * 2 + cut + b"\n" + whole.replace("maze_1", "maze_3").encode())
    hint = commands._resume_hint(argparse.Namespace(out=str(out)))
    assert hint == f"2 episodes are finished in {out}; rerun the same command to resume"


def test_list_prints_a_row_per_env_unwrapped_into_a_pipe(capsys):
    from agentenv.cli import main
    from agentenv.registry import env_class, installed_envs

    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for env in installed_envs():  # the whole row on one line, not wrapped to 80 columns cell by cell
        splits = ", ".join(f"{name} {len(tasks)}" for name, tasks in env_class(env).splits.items())
        assert any(f"│ {env} " in line and splits in line for line in lines), env


def test_list_shows_every_env_when_one_does_not_load(capsys, monkeypatch):
    """A broken package (a SyntaxError in its module) made `agentenv list` print that error alone."""
    from agentenv import registry
    from agentenv.cli import main

    loads = registry.env_class

    def env_class(env):
        if env == "maze":
            raise registry.UnknownEnv("environment 'maze' is installed but does not load (x:Y): SyntaxError()")
        return loads(env)

    monkeypatch.setattr(registry, "env_class", env_class)
    assert main(["list"]) == 1
    printed = capsys.readouterr()
    assert "│ wordle " in printed.out and "does not load (below)" in printed.out
    assert printed.err.strip() == "error: environment 'maze' is installed but does not load (x:Y): SyntaxError()"


def test_an_entry_point_whose_key_is_not_its_class_name_is_refused(monkeypatch):
    """Served under the class's name and looked for under the key, such an env answered every client 404."""
    from importlib.metadata import EntryPoint

    from agentenv import registry

    mazy = EntryPoint(name="mazy", value="agentenv_lmrlgym.maze:MazeEnv", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [mazy])
    with pytest.raises(registry.UnknownEnv, match=r"environment 'mazy' is installed, but its class "
                       r"\(agentenv_lmrlgym.maze:MazeEnv\) is named 'maze': the entry point's key"):
        registry.env_class("mazy")


def test_url_mistakes_say_what_is_wrong():
    from agentenv.controller.commands import env_urls

    with pytest.raises(ValueError, match=r"--url given for env\(s\) not run: maze \(the envs run: maz\)"):
        env_urls(["maz"], ["maze=http://127.0.0.1:1"])  # the typo is in --env
    with pytest.raises(ValueError, match="--url 'localhost:36001': a server's URL starts with http://"):
        env_urls(["maze"], ["maze=localhost:36001"])
    assert env_urls(["maze"], ["https://h:1"]) == {"maze": ["https://h:1"]}


class StalledExpertGuessEnv(GuessEnv):
    """A server that takes a request and does not answer in the client's time (a stopped process, a stuck
    simulator): its expert thinks for 3 s."""

    name = "stalled_guess"

    def expert_action(self):
        time.sleep(3)
        return super().expert_action()


def test_a_server_that_takes_a_call_and_never_answers_is_not_asked_again():
    """A GET was retried on a read timeout: one expert call to a stopped BabyAI server took 4 x 210 s, an
    eval 25 minutes to stop, and the message said to start a server that held its port."""
    from agentenv.client import ServerHung

    with running_server(StalledExpertGuessEnv) as url, EnvClient("stalled_guess", url, timeout=1.0) as client:
        session = client.session(3)
        started = time.monotonic()
        with pytest.raises(ServerHung, match=r"GET .*/expert: the server took the request but gave no answer in 1 s"):
            session.expert()
        assert time.monotonic() - started < 2.5  # one try, not four with backoff

    def run(args):
        raise ServerHung("GET x: no answer")

    with pytest.raises(SystemExit, match="^error: GET x: no answer; stop that server's process and start it again"):
        commands.one_line_errors()(run)(argparse.Namespace(env=["guess"]))


def test_a_post_whose_connection_breaks_is_not_sent_again_but_a_get_is():
    """A step the server took may have been applied: sent again, it would be played twice (a create, a leaked
    session). A GET changes nothing and is tried again."""
    import socket

    taken: list[str] = []
    listener, stop = socket.create_server(("127.0.0.1", 0)), threading.Event()
    listener.settimeout(0.05)
    port = listener.getsockname()[1]

    def serve() -> None:  # reads each request's head, then drops the connection without an answer
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                taken.append(conn.recv(65536).split(b"\r\n", 1)[0].decode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with EnvClient("guess", f"http://127.0.0.1:{port}", retries=2, backoff_s=0.01) as client:
            with pytest.raises(ServerUnreachable, match="POST .*/guess/step failed"):
                client.step(7, "guess 1")
            assert taken == ["POST /guess/step HTTP/1.1"]
            with pytest.raises(ServerUnreachable, match="failed after 3 tries"):
                client.observation(7)
            assert taken[1:] == ["GET /guess/observation?id=7 HTTP/1.1"] * 3
    finally:
        stop.set()
        thread.join(5)
        listener.close()
