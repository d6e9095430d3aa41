"""ReAct parsing, the expert agent, and building agents from command-line specs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentenv.controller.agents import agent_from_spec
from agentenv.controller.expert import ExpertAgent
from agentenv.controller.rollout import Rollout, RolloutTask
from agentenv.controller.sources import LocalEnv
from agentenv.react import extract_action, format_react, parse_react

from test_controller_support import GuessEnv


@pytest.mark.parametrize(
    "reply, thought, action",
    [
        ("Thought: I think\nAction: move up", "I think", "move up"),
        ("Thought:\nTwo\nlines\n\nAction:\ngo north\n", "Two\nlines", "go north"),
        ("Thought:\r\nx\r\n\r\nAction:\r\nmove up\r\n", "x", "move up"),  # Windows newlines
        ("  action :  Go North  ", "", "Go North"),  # case and spacing of the marker
        ("Thought: a\nAction: one\nAction: two", "a\nAction: one", "two"),  # the last marker wins
        ("I will take Action: go", "", "I will take Action: go"),  # a marker must start a line
        ("Thought: t\n\n \t\n  Action:\n\n go \n", "t", "go"),  # blank lines around the marker
        ("\n" * 5 + "Action: go", "", "go"),
        ("move up", "", "move up"),  # a bare action
        ("Thought: only thinking", "", "Thought: only thinking"),  # no marker: all of it is the action
        ("Thought:\nhmm\nAction:", "hmm", ""),  # an empty action (the env answers "invalid")
        ("", "", ""),
        (None, "", ""),
        # markdown around the markers (GPT-4o, Llama-3 style)
        ("**Thought:** I go\n\n**Action:** move up", "I go", "move up"),
        ("Thought: t\n\n**Action:**\nmove up", "t", "move up"),
        ("### Thought\nt\n### Action:\ngo", "### Thought\nt", "go"),
        ("**Action**: go", "", "go"),
        # a reasoning model's block is not the reply: an action weighed in it is not taken
        ("<think>\nMaybe down?\nAction: move down\n</think>\nThought: no\nAction: move up", "no", "move up"),
        ("<think>\nPlan:\nAction: buy now", "", ""),  # cut off while reasoning: nothing decided
        ("the prompt opened it</think>\nAction: go", "", "go"),
        # the model writing the environment's answer: the action is the one before it
        ("Thought: up\nAction: move up\nObservation: You moved up.\nAction: move down", "up", "move up"),
        ("Observation: a key.\nThought: t\nAction: take key", "Observation: a key.\nt", "take key"),
        # a bare action (what AgentGym's clients send, the marker cut off) followed by a made-up observation
        ("move right\nObservation: You moved right.\n\nThought: again", "", "move right"),
        ("Observation: a key.", "", "Observation: a key."),  # nothing before it: no action to keep
        ("Thought: t\nAction: go to red ball 1</s>\n", "t", "go to red ball 1"),  # Llama-2's end of turn as text
    ],
)
def test_parse_react(reply, thought, action):
    assert parse_react(reply) == (thought, action)
    assert extract_action(reply) == action


def test_parse_react_takes_linear_time_on_many_newlines():
    """``^\\s*Action`` once rescanned a run of newlines from each of its lines: 100,000 newlines took
    over a minute, blocking a server's event loop.  A hang guard, not a timing: the parse runs in a
    subprocess (a regex holds the GIL, so a thread could not be given up on) and must simply finish."""
    code = """if True:
        from agentenv.react import parse_react
        many = 100_000
        replies = ["\\n" * many, "Thought: t" + "\\n" * many + "Action: go", " \\n" * many + "Action:"]
        print([parse_react(r) for r in replies])
        replies = [" " * many + "Action", "<think>" * many, "</think>" * many, "Action: a\\n" * many, "*" * many,
                   "Action" + " " * many, "Thought" + " " * many + "x"]
        print([parse_react(r)[1][:8] for r in replies])
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[('', ''), ('t', 'go'), ('', '')]", "['Action', '', '', 'a', '********', 'Action', 'Thought ']"]


def test_format_then_parse_round_trips():
    reply = format_react("The key is north.", "go to key 2")
    assert reply == "Thought:\nThe key is north.\n\nAction:\ngo to key 2"
    assert parse_react(reply) == ("The key is north.", "go to key 2")


def test_expert_agent_solves_every_task():
    source = LocalEnv(GuessEnv)
    episodes = Rollout(ExpertAgent(concurrency=4), {"guess": source}, concurrency=5).run(
        [RolloutTask("guess", i) for i in range(16)]
    )
    assert sorted(ep.data_idx for ep in episodes) == list(range(16))
    assert all(ep.success and ep.stop_reason == "done" for ep in episodes)
    assert max(ep.rounds for ep in episodes) <= 5  # bisection over 16 numbers
    reply = episodes[0].trajectory.conversations[3].value
    assert parse_react(reply)[1].startswith("guess ")
    assert source.live_sessions == 0


def test_expert_failure_ends_only_that_episode():
    class Flaky(GuessEnv):
        def expert_action(self):
            if self.secret == 3:
                raise RuntimeError("no plan")
            return super().expert_action()

    episodes = Rollout(ExpertAgent(), {"guess": LocalEnv(Flaky)}, concurrency=4).run(
        [RolloutTask("guess", i) for i in range(6)]
    )
    by_idx = {ep.data_idx: ep for ep in episodes}
    assert by_idx[3].stop_reason == "error" and "no plan" in by_idx[3].error
    assert all(by_idx[i].success for i in (0, 1, 2, 4, 5))


def test_agent_from_spec():
    assert isinstance(agent_from_spec("expert", max_new_tokens=5), ExpertAgent)
    with agent_from_spec("openai:my-model@http://127.0.0.1:9/v1", max_tokens=7, batch_size=3) as agent:
        assert agent.name == "openai:my-model" and agent.max_tokens == 7
        assert agent.url == "http://127.0.0.1:9/v1/chat/completions"
    with agent_from_spec("openai:org/model@v2@http://127.0.0.1:9") as agent:  # '@' in the model name
        assert agent.model == "org/model@v2" and agent.url == "http://127.0.0.1:9/v1/chat/completions"
    for bad in ("gpt", "openai:model", "hf:", "expert:x"):
        with pytest.raises(ValueError):
            agent_from_spec(bad)


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("Thought:\nGo.\n\nAction:\n`search[red dress]`", "search[red dress]"),
        ('Action:\n"go to sofa 1"', "go to sofa 1"),
        ('Action:\ngo to sofa 1"', "go to sofa 1"),  # the closing quote of the instruction's quoted layout
        ("Action:\n```\nget 1 lapis lazuli\n```", "get 1 lapis lazuli"),
        ('Action:\n```sql\nSELECT a FROM t WHERE b = "x"\n```', 'SELECT a FROM t WHERE b = "x"'),
        ('Action:\nfinish with Action Input: {"answer": "x"}', 'finish with Action Input: {"answer": "x"}'),
        ('Action:\nSELECT a FROM t WHERE b = "x"', 'SELECT a FROM t WHERE b = "x"'),
        ('Action:\n"a" = "b"', '"a" = "b"'),  # quotes at both ends that are not one pair around it
        ("Action:\n`a` + `b`", "`a` + `b`"),
        ("Action:\n``", "``"),
        ("```\nThought: x\nAction: move up\n```", "move up"),  # a fence around the whole reply
        ("```text\nThought: x\n\nAction:\nmove up\n```", "move up"),
    ],
)
def test_markup_around_a_whole_action_is_taken_off(reply, action):
    """Backticks, quotes or a code fence around an action were refused by ScienceWorld, ALFWorld, WebShop
    and SQLGym (its one attempt lost); an action with quotes of its own is left as it is."""
    from agentenv.react import extract_action

    assert extract_action(reply) == action


def test_a_bare_action_is_read_as_the_whole_parse_reads_it():
    """A reply without a colon, ``<``, backtick or quote skips the parse (servers read one every step): what
    it gives is what the parse gives, for the usual actions and for random text around them."""
    import random

    from agentenv.react import _PLAIN_ACTION, extract_action, parse_react, unwrap_action

    pieces = ["move up", "go to desk 1", "Thought", "Action", "Observation", "think", "/s", "s>", "\n", " ", "\t",
              "\u00a0", "\u2003", "**", "#", ">", "'", "x", "1", "é", ""]
    rng = random.Random(0)
    replies = ["move up", "  move up \n", "", "\n\n", "Action move up", "Thought I go\nmove up"]
    replies += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    for reply in replies:
        assert _PLAIN_ACTION.fullmatch(reply)
        assert extract_action(reply) == unwrap_action(parse_react(reply)[1]), reply
    for marked in ("Action: move up", "Thought: x\nAction: move up", '"move up"', "`move up`", "move up</s>", "<think>x</think>move up"):
        assert extract_action(marked) == "move up"  # each of the four characters sends a reply to the parse
