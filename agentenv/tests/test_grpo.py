"""GRPO through TRL on real Maze and BabyAI servers with the tiny Llama: rewards from the servers, group-normalised
advantages, a loss mask on exactly the agent's tokens, parameters that move, and a resume that continues."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from agentenv.client import EnvClient
from agentenv.data.trajectory import ACKNOWLEDGEMENT, Trajectory, write_trajectories
from agentenv.registry import env_class
from agentenv.session import LocalSession
from agentenv.testing import running_server
from agentenv.trainer.bc import BCConfig, train_bc
from agentenv.trainer.engine import CHECKPOINTS, DONE_FILE, is_done, read_log
from agentenv.trainer.grpo import CURVE_FILE, EpisodeRollouts, GRPOConfig, episode_tokens, train_grpo

# the rl extra (`make test` installs it; `make test-lowest` leaves it out: trl's floors sit above train's)
GRPOTrainer = pytest.importorskip("trl", reason="needs agentenv[rl]").GRPOTrainer

pytestmark = pytest.mark.usefixtures("one_torch_thread")

MOVES = ["move up", "move down", "move left", "move right"]


def tokenizer_of(model: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model)


def two_replies(first: str, between: str) -> Trajectory:
    """A hand-built episode: the first observation, ``first``, the observation ``between``, "move down"."""
    t = Trajectory.start("maze", 1, "Reach the goal.")
    t.add_observation("You are at 1, 1.")
    t.add_reply(first)
    t.add_observation(between)
    t.add_reply("move down")
    return t


def mask_runs(tokenizer, completion: list[int], mask: list[int]) -> list[tuple[bool, str]]:
    """The completion's text in runs of equal mask: ``(trained, text)``."""
    assert len(mask) == len(completion)
    pairs = itertools.groupby(zip(mask, completion, strict=True), key=lambda p: p[0])
    return [(bool(on), tokenizer.decode([i for _, i in group], skip_special_tokens=False)) for on, group in pairs]


def test_the_loss_mask_covers_exactly_the_agents_tokens(base_model):
    """A hand-built episode in ChatML: the prompt ends at the first reply's header; the mask is 1 on each reply
    and its end-of-turn marker, 0 on the observation and the headers between them."""
    tokenizer = tokenizer_of(base_model)
    prompt, completion, mask, _ = episode_tokens(tokenizer, two_replies("Thought:\nGo up.\n\nAction:\nmove up",
                                                                     "There is a wall above you."))
    assert tokenizer.decode(prompt, skip_special_tokens=False) == (
        f"<|im_start|>user\nReach the goal.<|im_end|>\n<|im_start|>assistant\n{ACKNOWLEDGEMENT}<|im_end|>\n"
        "<|im_start|>user\nYou are at 1, 1.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert mask_runs(tokenizer, completion, mask) == [
        (True, "Thought:\nGo up.\n\nAction:\nmove up<|im_end|>"),
        (False, "\n<|im_start|>user\nThere is a wall above you.<|im_end|>\n<|im_start|>assistant\n"),
        (True, "move down<|im_end|>"),
    ]


def test_the_end_of_turn_marker_of_a_reply_cut_short_is_not_trained(base_model):
    """The agent cut reply 0 at max_new_tokens: the template's <|im_end|> after it was never the model's
    choice.  Reply 1 ended itself: its marker is trained."""
    tokenizer = tokenizer_of(base_model)
    t = two_replies("Thought:\nGo up, since", "Invalid action.")
    t.meta["truncated_replies"] = [0]
    _, completion, mask, _ = episode_tokens(tokenizer, t)
    assert mask_runs(tokenizer, completion, mask) == [
        (True, "Thought:\nGo up, since"),
        (False, "<|im_end|>\n<|im_start|>user\nInvalid action.<|im_end|>\n<|im_start|>assistant\n"),
        (True, "move down<|im_end|>"),
    ]


def test_a_reply_whose_text_tokenises_otherwise_than_sampled_is_not_trained(base_model):
    """The policy sampled " move up" (a leading space the reply's text lost to strip()), a byte of a character
    or text past a stop string: the re-encoded reply's tokens were trained though never sampled."""
    tokenizer = tokenizer_of(base_model)
    t = two_replies("move up", "There is a wall above you.")
    whole = episode_tokens(tokenizer, t)
    spans = [[i for i, m in zip(whole.completion_ids, whole.env_mask, strict=True) if m]]
    as_sampled = tokenizer.encode("move up", add_special_tokens=False)
    assert whole.completion_ids[: len(as_sampled)] == as_sampled and spans
    kept = episode_tokens(tokenizer, t, sampled={0: as_sampled, 1: tokenizer.encode("move down", add_special_tokens=False)})
    assert kept == whole  # each reply's text is the tokens sampled: all trained
    other = tokenizer.encode(" move up", add_special_tokens=False)
    assert other != as_sampled
    t.meta["truncated_replies"] = [0]  # cut at max_new_tokens: what follows the sampled tokens is not trained
    cut = episode_tokens(tokenizer, t, sampled={0: as_sampled})
    assert mask_runs(tokenizer, cut.completion_ids, cut.env_mask)[0] == (True, "move up")
    del t.meta["truncated_replies"]
    dropped = episode_tokens(tokenizer, t, sampled={0: other})
    assert dropped.unsampled == 1
    assert mask_runs(tokenizer, dropped.completion_ids, dropped.env_mask) == [
        (False, "move up<|im_end|>\n<|im_start|>user\nThere is a wall above you.<|im_end|>\n<|im_start|>assistant\n"),
        (True, "move down<|im_end|>"),
    ]


def test_vllm_replies_keep_to_max_length_and_end_at_the_end_of_turn_token(base_model):
    """Under vLLM an episode whose prompt leaves no room for a reply stops (context_overflow) and is not sent;
    a completion is cut at the first stop token (vLLM knows only the model's EOS), and one that ran to
    max_new_tokens is listed as cut."""
    from types import SimpleNamespace

    from transformers import AutoModelForCausalLM

    from agentenv.controller.episode import Episode
    from agentenv.controller.hf_agent import HFAgent
    from agentenv.trainer.grpo import VLLMAgent

    tokenizer = tokenizer_of(base_model)
    renderer = HFAgent(model=AutoModelForCausalLM.from_pretrained(base_model), tokenizer=tokenizer,
                       max_new_tokens=4, max_length=200)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    word = tokenizer("move up", add_special_tokens=False)["input_ids"]
    sent = []

    def generate(prompts, images, num_generations):
        sent.extend(prompts)
        completions = [word + [im_end] + word, (word * 4)[:4]]
        return prompts, completions[: len(prompts)], None, None

    episodes = []
    for i, observation in enumerate(["You are at 1, 1.", "a very long observation " * 40, "You are at 2, 2."]):
        t = Trajectory.start("maze", i, "Reach the goal.")
        t.add_observation(observation)
        episodes.append(Episode("maze", i, None, t))
    agent = VLLMAgent(SimpleNamespace(vllm_generation=SimpleNamespace(generate=generate)), renderer)
    replies = agent.act(episodes)
    assert len(sent) == 2 and episodes[1].stop_reason == "context_overflow" and replies[1] == ""
    assert replies[0] == "move up" and "truncated_replies" not in episodes[0].meta
    assert episodes[2].meta["truncated_replies"] == [0]


def test_vllm_settings_reach_trl(tmp_path):
    from agentenv.trainer.grpo import trl_config

    cfg = GRPOConfig(model="m", output_dir=str(tmp_path), envs=["maze"], max_length=2048, report_to="tensorboard",
                     use_vllm=True)
    args = trl_config(cfg, tmp_path / "checkpoints", {7, 2})
    assert args.vllm_max_model_length == 2048 and args.generation_kwargs == {"stop_token_ids": [2, 7]}
    assert args.report_to == ["tensorboard"]
    args = trl_config(GRPOConfig(model="m", output_dir=str(tmp_path), envs=["maze"]), tmp_path / "checkpoints", {7})
    assert args.report_to == [] and not args.generation_kwargs  # HFAgent stops replies itself


def test_use_vllm_without_vllm_is_refused_before_the_folder_is_made(tmp_path):
    """TRL said so after the run had made its folder and an empty checkpoints/ in it."""
    import importlib.util

    from agentenv.trainer.grpo import train_grpo

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    cfg = GRPOConfig(model="m", output_dir=str(tmp_path / "run"), envs=["maze"], use_vllm=True)
    with pytest.raises(ValueError, match=r"--use-vllm: vLLM is not installed here \(pip install 'trl\[vllm\]'"):
        train_grpo(cfg)
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def servers():
    with running_server(env_class("maze")) as maze, running_server(env_class("babyai")) as babyai:
        yield {"maze": maze, "babyai": babyai}


@pytest.fixture(scope="module")
def mover(base_model, tmp_path_factory) -> Path:
    """The tiny Llama taught by behavioural cloning to answer a maze with one of the four moves, any of them:
    a policy whose groups differ (a random model's replies are no moves at all, so every reward would be 0)."""
    trajectories = []
    with LocalSession(env_class("maze")) as maze:
        for k in range(16):
            t = Trajectory.start("maze", 1000 + k, env_class("maze").instruction)
            t.add_observation(maze.reset(1000 + k).observation)
            t.add_reply(MOVES[k % 4])
            trajectories.append(t)
    root = tmp_path_factory.mktemp("mover")
    write_trajectories(root / "moves.jsonl", trajectories)
    cfg = BCConfig(model=str(base_model), output_dir=str(root / "model"), data=[str(root / "moves.jsonl")], max_steps=150,
                   batch_size=4, learning_rate=3e-3, warmup_ratio=0.0, seed=1, max_length=1024)
    return train_bc(cfg)


def grpo_config(model: Path, servers: dict[str, str], out: Path) -> GRPOConfig:
    return GRPOConfig(
        model=str(model), output_dir=str(out), envs=["maze", "babyai"], urls=[f"{k}={v}" for k, v in servers.items()],
        train_tasks=[18, 25], max_rounds=1, max_new_tokens=6, max_length=1024, num_generations=4, batch_size=8,
        max_steps=2, learning_rate=3e-3, warmup_ratio=0.0, save_every=1, delete_checkpoints_when_done=False, seed=3,
    )


@pytest.fixture(scope="module")
def run(mover, servers, tmp_path_factory):
    """A 2-step run, with what its rollouts returned and what TRL made of them (advantages, loss mask)."""
    rollouts, batches = [], []
    play, score = EpisodeRollouts.__call__, GRPOTrainer._generate_and_score_completions

    def recorded_play(self, prompts, trainer):
        out = play(self, prompts, trainer)
        rollouts.append({"prompts": list(prompts), **out})
        return out

    def recorded_score(self, inputs):
        batch = score(self, inputs)
        batches.append(batch)
        return batch

    out = tmp_path_factory.mktemp("grpo") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EpisodeRollouts, "__call__", recorded_play)
        patch.setattr(GRPOTrainer, "_generate_and_score_completions", recorded_score)
        train_grpo(grpo_config(mover, servers, out))
    return {"out": out, "rollouts": rollouts, "batches": batches}


def replayed_reward(client: EnvClient, data_idx: int, reply: str) -> float:
    """The normalised score the server gives ``reply`` as the first move of task ``data_idx``."""
    with client.session(data_idx) as session:
        low, high = client.info()["reward_range"]
        return (session.step(reply).score - low) / (high - low)


def test_rewards_come_from_the_servers_for_tasks_of_both_envs(run, servers, base_model):
    tokenizer = tokenizer_of(base_model)
    assert len(run["rollouts"]) == 2
    seen = set()
    for rollout in run["rollouts"]:
        for prompt, env, reward, completion, mask in zip(
            rollout["prompts"], rollout["env"], rollout["env_reward"], rollout["completion_ids"], rollout["env_mask"],
            strict=True,
        ):
            name, idx = prompt.split("/")
            assert name == env and idx in ("18", "25")
            reply = tokenizer.decode([t for t, m in zip(completion, mask, strict=True) if m], skip_special_tokens=True)
            with EnvClient(env, servers[env]) as client:
                assert reward == pytest.approx(replayed_reward(client, int(idx), reply))
            seen.add(env)
    assert seen == {"maze", "babyai"}  # one run mixes tasks of both envs
    rewards = [r for rollout in run["rollouts"] for r in rollout["env_reward"]]
    assert any(r > 0 for r in rewards) and any(r == 0 for r in rewards)


def test_advantages_are_normalised_within_each_group_and_the_mask_is_the_rollouts(run):
    varied = 0
    for rollout, batch in zip(run["rollouts"], run["batches"], strict=True):
        rewards = torch.tensor(rollout["env_reward"]).view(-1, 4)
        expected = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)
        assert batch["advantages"].tolist() == pytest.approx(expected.flatten().tolist(), abs=1e-5)
        varied += int((rewards.std(1) > 0).sum())
        for row, mask in zip(batch["tool_mask"] * batch["completion_mask"], rollout["env_mask"], strict=True):
            assert row[: len(mask)].tolist() == mask and not row[len(mask):].any()
    assert varied > 0  # some group's episodes differ, or nothing would be learnt


def test_the_parameters_change_and_the_run_is_recorded(run, mover):
    from transformers import AutoModelForCausalLM

    before = AutoModelForCausalLM.from_pretrained(mover).state_dict()
    after = AutoModelForCausalLM.from_pretrained(run["out"]).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    lines = read_log(run["out"])
    assert [line["step"] for line in lines] == [1, 2]
    assert all("rewards/maze/mean" in line and "rewards/babyai/mean" in line for line in lines)
    assert is_done(run["out"]) and (run["out"] / CURVE_FILE).exists()
    # each line counts its own step's replies (one per episode at --max-rounds 1), not the run's so far
    assert [line["replies"] for line in lines] == [len(r["prompts"]) for r in run["rollouts"]] == [8, 8]
    assert all(0 <= line["untrained_replies"] <= line["replies"] for line in lines)


def test_a_checkpoint_a_kill_cut_short_is_not_resumed_from(tmp_path):
    from agentenv.trainer.grpo import last_complete_checkpoint

    for step, state in [(2, "{}"), (4, '{"global_step": 4}'), (6, None), (8, '{"global_st')]:
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"weights")
        if state is not None:
            (folder / "trainer_state.json").write_text(state)
    (tmp_path / "checkpoint-9-mine").mkdir()  # not TRL's: left alone
    assert last_complete_checkpoint(tmp_path, delete_cut=False) == str(tmp_path / "checkpoint-4")
    assert len(list(tmp_path.iterdir())) == 5
    assert last_complete_checkpoint(tmp_path, delete_cut=True) == str(tmp_path / "checkpoint-4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-2", "checkpoint-4", "checkpoint-9-mine"]
    assert last_complete_checkpoint(tmp_path / "none", delete_cut=True) is None


def test_a_run_resumes_from_its_checkpoint_and_continues(run, mover, servers, tmp_path, capfd, caplog):
    killed = tmp_path / "killed"
    shutil.copytree(run["out"] / CHECKPOINTS / "checkpoint-1", killed / CHECKPOINTS / "checkpoint-1")
    shutil.copy(run["out"] / "train_config.json", killed)
    (killed / "train_log.jsonl").write_text((run["out"] / "train_log.jsonl").read_text())  # steps 1 and 2
    prompts = []
    play = EpisodeRollouts.__call__
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EpisodeRollouts, "__call__", lambda self, p, trainer: prompts.append(list(p)) or play(self, p, trainer))
        train_grpo(grpo_config(mover, servers, killed))
    printed = capfd.readouterr()
    assert f"resumed from {killed / CHECKPOINTS / 'checkpoint-1'}" in printed.out
    assert "'reward'" not in printed.out + printed.err  # no dict of metrics per step (train_log.jsonl has them)
    # the project's bar, as BC's: in a log a line a tenth of the run, with the step's reward (TRL's counted "it")
    assert "train step 2/2  reward " in printed.err and "train step 1/2" not in printed.err
    assert not re.search(r"\b[12]/2 \[", printed.err)  # (TRL's bar: "2/2 [00:22<00:00, 11.33s/it]")
    assert "missing keys" not in caplog.text + printed.err  # the tied output embedding, tied again on load
    assert prompts == [run["rollouts"][1]["prompts"]]  # only step 2 ran, on the tasks it had drawn
    resumed, uninterrupted = read_log(killed), read_log(run["out"])
    assert [line["step"] for line in resumed] == [1, 2]
    assert resumed[1]["reward"] == uninterrupted[1]["reward"]  # the same episodes: weights and seeds restored
    assert resumed[1]["loss"] == pytest.approx(uninterrupted[1]["loss"], rel=1e-4, abs=1e-6)
    assert is_done(killed)


@pytest.mark.parametrize(
    ("setting", "message"),
    [({"num_generations": 3}, "multiple of num_generations"), ({"num_generations": 1}, "at least 2"),
     ({"reward": "steps"}, "reward must be one of"), ({"vllm_mode": "remote"}, "vllm_mode"),
     ({"concurrency": 0}, "concurrency must be at least 1"), ({"top_p": 1.5}, r"^top_p must be in \(0, 1\], not 1.5$"),
     # refused before the model loads (TRL refused them at the first loss, after a rollout), or not at all
     ({"loss_type": "bogus"}, "loss_type must be one of dapo, grpo"), ({"scale_rewards": "bogus"}, "scale_rewards must be"),
     ({"beta": -1.0}, "beta must be 0 or more")],
)
def test_bad_settings_are_refused(setting, message):
    with pytest.raises(ValueError, match=message):
        GRPOConfig(model="m", output_dir="o", envs=["maze"], **setting)


def one_process_trainer(model, step: int):
    """What EpisodeRollouts reads of TRL's trainer, for a call outside a run (one process, at ``step``)."""
    from types import SimpleNamespace

    accelerator = SimpleNamespace(unwrap_model=lambda m: m, is_main_process=True, process_index=0, device="cpu",
                                  reduce=lambda counts, reduction: counts)
    return SimpleNamespace(accelerator=accelerator, model=model, state=SimpleNamespace(global_step=step))


def test_a_step_whose_every_episode_failed_on_a_server_gone_stops_before_it_counts(base_model):
    """A server gone after checkpoint 1: step 2's episodes all ended on errors ('reward None'), TRL trained
    and checkpointed the step anyway, and the rerun never played its tasks. Now the rollout raises the server's
    error first; an env that fails its tasks for good (the server up) does not stop the run."""

    from transformers import AutoModelForCausalLM

    from agentenv.controller.sources import LocalEnv
    from agentenv.protocol import ServerUnreachable

    def crash(self, action):
        raise OSError("the simulator's process is gone")

    class GoneMidStep(LocalEnv):
        """Maze's sessions open, then the server goes: every step fails, and so does any new session."""

        opened = 0

        def session(self):
            self.opened += 1
            if self.opened > 2:
                raise ServerUnreachable("POST http://127.0.0.1:9/maze/create failed after 4 tries")
            return super().session()

    crashing = type("CrashingMaze", (env_class("maze"),), {"act": crash})
    cfg = GRPOConfig(model=str(base_model), output_dir="unused", envs=["maze"], local=True,
                     max_rounds=1, max_new_tokens=4, num_generations=2, batch_size=2)
    policy = AutoModelForCausalLM.from_pretrained(base_model)
    trainer = one_process_trainer(policy, step=1)
    prompts = ["maze/18", "maze/18"]
    with GoneMidStep(crashing) as gone, pytest.raises(ServerUnreachable, match="maze/create failed"):
        EpisodeRollouts(cfg, {"maze": gone}, tokenizer_of(base_model))(prompts, trainer)
    with LocalEnv(crashing) as failing:  # the server is up: the step goes on, unrewarded
        out = EpisodeRollouts(cfg, {"maze": failing}, tokenizer_of(base_model))(prompts, trainer)
    assert out["env_reward"] == [None, None]
    # nor do their tokens count in the loss's denominator (dapo divides by the step's trained tokens)
    assert not any(any(mask) for mask in out["env_mask"])


def test_a_step_whose_every_episode_filled_the_context_before_a_reply_is_refused(base_model):
    """`--max-length` below the first prompt: every step trained on nothing (loss 0) and the run ended 'done'."""

    from transformers import AutoModelForCausalLM

    from agentenv.controller.sources import LocalEnv

    cfg = GRPOConfig(model=str(base_model), output_dir="unused", envs=["maze"], local=True,
                     max_rounds=1, max_new_tokens=4, num_generations=2, batch_size=2, max_length=64)
    trainer = one_process_trainer(AutoModelForCausalLM.from_pretrained(base_model), step=4)
    with LocalEnv(env_class("maze")) as maze, pytest.raises(ValueError, match=r"^every episode of step 5 filled "
                                                                              r"--max-length 64 before its first reply"):
        EpisodeRollouts(cfg, {"maze": maze}, tokenizer_of(base_model))(["maze/18", "maze/18"], trainer)
    # another process's episodes of the step had replies: no process refuses (one refusing alone left the
    # others waiting for it in TRL's gather, for ever)
    other = torch.tensor([2, 0, 0, 2, 0])  # its 2 episodes, none overflowed, 2 replies
    trainer.accelerator.reduce = lambda counts, reduction: counts + other
    with LocalEnv(env_class("maze")) as maze:
        out = EpisodeRollouts(cfg, {"maze": maze}, tokenizer_of(base_model))(["maze/18", "maze/18"], trainer)
    assert len(out["completion_ids"]) == 2


def test_a_run_stopped_before_its_first_checkpoint_starts_over_with_the_settings_given(tmp_path):
    """A Ctrl-C in step 1 left train_config.json and TRL's empty checkpoints folder: the rerun with a mended
    setting was refused as 'holds checkpoints of a run with other settings'."""
    from agentenv.trainer.grpo import check_resumable

    first = GRPOConfig(model="m", output_dir=str(tmp_path), envs=["maze"], learning_rate=1e-5)
    (tmp_path / "train_config.json").write_text(json.dumps(first.to_json()))
    (tmp_path / CHECKPOINTS).mkdir()
    mended = GRPOConfig(model="m", output_dir=str(tmp_path), envs=["maze"], learning_rate=1e-3)
    check_resumable(tmp_path, mended)  # nothing to resume: taken
    (tmp_path / CHECKPOINTS / "checkpoint-1").mkdir()
    (tmp_path / CHECKPOINTS / "checkpoint-1" / "trainer_state.json").write_text("{}")
    with pytest.raises(ValueError, match=r"holds checkpoints of a run with other settings \(learning_rate"):
        check_resumable(tmp_path, mended)


def test_a_checkpoint_of_another_number_of_processes_is_not_resumed(tmp_path, monkeypatch):
    """A 2-process run's checkpoint resumed by 1 process said "resumed" and went on with half the global batch,
    and other tasks than the uninterrupted run's (BC and DPO refused this)."""
    from agentenv.trainer.grpo import check_resumable

    cfg = GRPOConfig(model="m", output_dir=str(tmp_path), envs=["maze"])
    (tmp_path / "train_config.json").write_text(json.dumps(cfg.to_json()))
    checkpoint = tmp_path / CHECKPOINTS / "checkpoint-2"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text("{}")
    for rank in (0, 1):  # transformers' random states, one per process
        (checkpoint / f"rng_state_{rank}.pth").write_bytes(b"")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(ValueError, match=r"checkpoint-2 was saved by a run of 2 processes, this one has 1"):
        check_resumable(tmp_path, cfg)
    monkeypatch.setenv("WORLD_SIZE", "2")
    check_resumable(tmp_path, cfg)


def test_n_processes_play_the_episodes_one_process_would(base_model):
    """Each process numbered its episodes from 0, and an episode's seed derives from its number: 2 processes
    sampled other episodes than 1 (a step's reward 0.5 against 0.375 in the audit)."""
    from transformers import AutoModelForCausalLM

    from agentenv.controller.sources import LocalEnv

    cfg = GRPOConfig(model=str(base_model), output_dir="unused", envs=["maze"], local=True,
                     max_rounds=1, max_new_tokens=6, num_generations=2, batch_size=4)
    policy = AutoModelForCausalLM.from_pretrained(base_model)
    prompts = ["maze/18", "maze/18", "maze/25", "maze/25"]
    with LocalEnv(env_class("maze")) as maze:
        rollouts = EpisodeRollouts(cfg, {"maze": maze}, tokenizer_of(base_model))
        one = rollouts(prompts, one_process_trainer(policy, step=3))
        halves = []
        for rank in (0, 1):
            trainer = one_process_trainer(policy, step=3)
            trainer.accelerator.process_index = rank
            halves.append(rollouts(prompts[2 * rank : 2 * rank + 2], trainer))
    assert one["completion_ids"] == halves[0]["completion_ids"] + halves[1]["completion_ids"]
    assert len({tuple(ids) for ids in one["completion_ids"]}) > 1  # the samples differ: the test tells


def test_a_run_refuses_a_folder_another_run_trains_into_and_too_few_tasks_for_a_step(base_model, tmp_path):
    """Two runs into one folder both trained (their log lines interleaved); fewer tasks than a step plays made
    no step, and the untrained model was saved as the run's."""
    from agentenv.processes import held_by_this_run

    cfg = GRPOConfig(model=str(base_model), output_dir=str(tmp_path / "run"), envs=["maze"], local=True,
                     train_tasks=[18], num_generations=4, batch_size=8)
    (tmp_path / "run").mkdir()
    with held_by_this_run(tmp_path / "run", "held"), pytest.raises(ValueError, match="being trained into by another run"):
        train_grpo(cfg)
    with pytest.raises(ValueError, match=r"^1 train tasks, and one step plays 2 \(--batch-size"):
        train_grpo(cfg)
    assert not (tmp_path / "run" / DONE_FILE).exists()
