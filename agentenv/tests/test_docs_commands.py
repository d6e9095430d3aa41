"""Every ``agentenv`` command the README and docs show in a code block parses with the real CLI: no flag that
was renamed or deprecated, no required argument left out (running them is the other tests' work)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from agentenv.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("agentenv-*/README.md"))]
SCRIPTS = sorted((ROOT / "examples").glob("*.sh"))
CODE_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)
COMMAND = re.compile(r"^(?:\$\s+)?(?:\.venv/bin/)?agentenv\s+([a-z-].*)$")  # not a diagram's "agentenv (core)"


def shown_commands() -> list[tuple[str, str]]:
    """``(page, command line)`` for each line of a code block, or of an example script, that runs ``agentenv``
    (continuations joined, comments, pipes and a script's ``"$@"`` dropped); a line with a ``...`` placeholder
    is not a command to parse."""
    commands = []
    blocks = [(page, block) for page in PAGES for block in CODE_BLOCK.findall(page.read_text())]
    blocks += [(script, script.read_text().replace(' "$@"', "")) for script in SCRIPTS]
    for page, block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            match = COMMAND.match(line.split(" #")[0].strip())
            if match and "..." not in line:
                command = re.split(r"\s(?:\||&&|&)(?:\s|$)", match.group(1) + " ")[0].strip()
                commands.append((str(page.relative_to(ROOT)), command))
    return commands


def test_the_docs_show_commands():
    pages = {page for page, _ in shown_commands()}
    assert {"README.md", "docs/quickstart.md", "docs/training.md", "docs/rl.md", "examples/baselines.sh"} <= pages


@pytest.mark.parametrize(("page", "command"), shown_commands(), ids=lambda value: value.split()[0])
def test_a_command_the_docs_show_parses(page, command):
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(shlex.split(command))
    except SystemExit as exc:
        if exc.code:
            pytest.fail(f"{page}: agentenv {command}\n{errors.getvalue().strip().splitlines()[-1]}")
    assert "deprecated" not in errors.getvalue(), f"{page}: agentenv {command}\n{errors.getvalue().strip()}"
