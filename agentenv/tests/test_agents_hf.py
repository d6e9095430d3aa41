"""HFAgent: batched generation with per-episode KV caches, checked against plain ``model.generate``."""

from __future__ import annotations

import os
import warnings

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agentenv.controller.episode import Episode  # noqa: E402
from agentenv.controller.hf_agent import HFAgent, _attention_backends  # noqa: E402
from agentenv.controller.rollout import Rollout, RolloutTask  # noqa: E402
from agentenv.controller.sources import LocalEnv  # noqa: E402
from agentenv.data.trajectory import Trajectory  # noqa: E402
from agentenv.testing import tiny_llama  # noqa: E402

from test_controller_support import GuessEnv  # noqa: E402

MAX_NEW = 10


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny random Llama with weights spread wider than at init, so greedy replies vary."""
    path = tiny_llama(tmp_path_factory.mktemp("tiny"))
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() == 2:
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    return path, model, tokenizer


def make_agent(tiny, **kwargs) -> HFAgent:
    _, model, tokenizer = tiny
    kwargs.setdefault("max_new_tokens", MAX_NEW)
    return HFAgent(model=model, tokenizer=tokenizer, **kwargs)


def make_episodes(n: int, offset: int = 0) -> list[Episode]:
    episodes = []
    for i in range(offset, offset + n):
        traj = Trajectory.start("maze", i, "You are an agent in a maze. Reach the goal.")
        traj.add_observation(f"Your position is {i}, {3 * i}. There are walls to your left" + " and right" * i)
        episodes.append(Episode("maze", i, None, traj))
    return episodes


def play(agent: HFAgent, episodes: list[Episode], rounds: int) -> list[list[str]]:
    """Run ``rounds`` rounds with scripted observations; return each episode's replies."""
    replies: list[list[str]] = [[] for _ in episodes]
    for r in range(rounds):
        for i, reply in enumerate(agent.act(episodes)):
            replies[i].append(reply)
            episodes[i].trajectory.add_reply(reply)
            obs = f"Round {r}: you moved. Available actions: move up" + " ok" * episodes[i].data_idx
            episodes[i].trajectory.add_observation(obs)
    return replies


def reference_reply(agent: HFAgent, model, messages: list[dict]) -> str:
    """What plain generate says when the whole conversation is encoded from scratch, on its own."""
    ids = agent.tokenizer(agent.prompt_text(messages), add_special_tokens=False)["input_ids"]
    out = model.generate(
        torch.tensor([ids]), max_new_tokens=MAX_NEW, do_sample=False,
        eos_token_id=sorted(agent.stop_ids), pad_token_id=agent.pad_id,
    )
    return agent.decode_reply(out[0, len(ids):].tolist())


def test_cached_batched_replies_equal_full_reencoding(tiny):
    _, model, _ = tiny
    agent = make_agent(tiny)
    episodes = make_episodes(4)
    replies = play(agent, episodes, rounds=3)
    assert any(r for rs in replies for r in rs), "the test model should say something"
    for ep, ep_replies in zip(episodes, replies, strict=True):
        turns = ep.trajectory.conversations
        for r, reply in enumerate(ep_replies):
            # messages up to and including the observation answered in round r
            history = Episode(ep.env, ep.data_idx, None, Trajectory(ep.item_id, turns[: 3 + 2 * r]))
            assert reply == reference_reply(agent, model, history.messages())
    # the cache really was reused: later rounds prefilled only the new tokens
    assert agent.stats["reused_tokens"] > agent.stats["prefilled_tokens"]
    # each episode counts the tokens it generated
    assert sum(ep.meta["generated_tokens"] for ep in episodes) == agent.stats["generated_tokens"] > 0


def test_batch_equals_one_by_one(tiny):
    together = play(make_agent(tiny, batch_size=8), make_episodes(5), rounds=3)
    alone = [play(make_agent(tiny), make_episodes(1, offset=i), rounds=3)[0] for i in range(5)]
    assert together == alone
    # a batch smaller than the episode count splits into several generation calls, same answers
    assert play(make_agent(tiny, batch_size=2), make_episodes(5), rounds=3) == together


def test_no_cache_reuse_gives_same_replies(tiny):
    cached = make_agent(tiny)
    fresh = make_agent(tiny, reuse_cache=False)
    assert play(cached, make_episodes(3), 3) == play(fresh, make_episodes(3), 3)
    assert fresh.stats["reused_tokens"] == 0


def test_sampling_is_reproducible_per_episode(tiny):
    def sample(batch_size: int, seed: int) -> list[list[str]]:
        agent = make_agent(tiny, temperature=1.0, top_p=0.9, seed=seed, batch_size=batch_size)
        return play(agent, make_episodes(3), rounds=2)

    first = sample(batch_size=3, seed=7)
    assert sample(batch_size=1, seed=7) == first  # batching does not change an episode's samples
    assert sample(batch_size=3, seed=8) != first
    greedy = play(make_agent(tiny), make_episodes(3), rounds=2)
    assert greedy != first


def test_cache_goes_under_the_forward_argument_of_this_transformers(tiny):
    """transformers 5.24 renamed forward's ``past_key_values`` to ``cache``; the old name warns, and is to go
    in 5.40."""
    agent = make_agent(tiny)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        play(agent, make_episodes(2), rounds=2)
    assert not [w for w in caught if "past_key_values" in str(w.message)]


def test_generation_on_cuda_keeps_off_cudnn_attention():
    """cuDNN's attention plans per shape and decoding changes the shape every step (117 ms a call on an H200).
    Only that backend goes off, and the global switch comes back as it was, errors included. Checked on CPU:
    the switches do not need a GPU."""
    flags = torch.backends.cuda
    before = flags.cudnn_sdp_enabled()
    others = (flags.flash_sdp_enabled(), flags.mem_efficient_sdp_enabled(), flags.math_sdp_enabled())
    flags.enable_flash_sdp(False)  # a user's own choice, left alone
    try:
        with pytest.raises(RuntimeError), _attention_backends(torch.device("cuda")):
            assert not flags.cudnn_sdp_enabled()
            assert not flags.flash_sdp_enabled() and flags.mem_efficient_sdp_enabled()
            raise RuntimeError("a failed forward")
        assert flags.cudnn_sdp_enabled() == before
        with _attention_backends(torch.device("cpu")):
            assert flags.cudnn_sdp_enabled() == before
    finally:
        flags.enable_flash_sdp(others[0])
    assert (flags.flash_sdp_enabled(), flags.mem_efficient_sdp_enabled(), flags.math_sdp_enabled()) == others


def test_context_overflow_stops_episode(tiny):
    agent = make_agent(tiny, max_length=120)
    short, long = make_episodes(2)
    long.trajectory.add_reply("Thought:\nwait\n\nAction:\nwait")
    long.trajectory.add_observation("a very long observation " * 40)
    replies = agent.act([short, long])
    assert long.stop_reason == "context_overflow" and replies[1] == ""
    assert short.stop_reason is None
    assert long.meta["context_tokens"] > 120 - MAX_NEW


def test_replies_stop_at_the_templates_end_of_turn_token(tiny):
    """A base model's EOS is not the token its chat template closes a reply with (Llama-3's <|eot_id|>),
    which is what behavioural cloning trains it to emit: generation must stop there too, or the reply runs
    on into a made-up next turn.  A template closing turns with plain text adds no stop token."""
    from transformers import AutoTokenizer

    from agentenv.controller.hf_agent import stop_token_ids

    path, model, _ = tiny
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|eot_id|>"]})
    eot = tokenizer.convert_tokens_to_ids("<|eot_id|>")
    tokenizer.chat_template = (
        "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>"
        "{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
    )
    assert eot in stop_token_ids(tokenizer) and tokenizer.eos_token_id in stop_token_ids(tokenizer)
    tokenizer.chat_template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n\n{% endfor %}"
    assert stop_token_ids(tokenizer) == {tokenizer.eos_token_id}


def test_a_reply_cut_at_max_new_tokens_is_listed(tiny):
    """A reply that reached max_new_tokens without a stop token never ended its turn (GRPO must not train
    the end-of-turn marker the template adds); one that stopped, or ended short of the limit, did."""
    agent = make_agent(tiny, max_new_tokens=4)
    stop = next(iter(agent.stop_ids))
    ep = make_episodes(1)[0]
    ep.rounds = 2
    assert agent.reply(ep, [40, 41, stop, 42]) == agent.decode_reply([40, 41])
    agent.reply(ep, [40, 41])  # vLLM may leave the stop token out of a finished reply
    assert "truncated_replies" not in ep.meta
    agent.reply(ep, [40, 41, 42, 43])
    assert ep.meta["truncated_replies"] == [2]
    # a reply that ended its turn with a stop text ("[INST]" of the llama2 format) and ran on was not cut
    agent.stop_text = ["[INST]"]
    ended = agent.tokenizer.encode("go north [INST] more", add_special_tokens=False)
    agent.max_new_tokens = len(ended)
    ep.rounds = 3
    assert agent.reply(ep, ended) == "go north" and ep.meta["truncated_replies"] == [2]
    # in a real rollout: listed exactly for the replies generated to the limit without a stop token
    agent, generated = make_agent(tiny, max_new_tokens=3), []
    episodes = make_episodes(4)
    reply = agent.reply
    agent.reply = lambda ep, ids: generated.append((ep.uid, ep.rounds, list(ids))) or reply(ep, ids)
    for r in range(2):
        agent.act(episodes)
        for ep in episodes:
            ep.trajectory.add_reply("x")
            ep.trajectory.add_observation(f"Round {r}.")
            ep.rounds += 1
    expected = {ep.uid: [n for uid, n, ids in generated if uid == ep.uid and len(ids) == 3 and ids[-1] not in agent.stop_ids] for ep in episodes}
    assert {ep.uid: ep.meta.get("truncated_replies", []) for ep in episodes} == expected
    assert any(expected.values())


def test_a_stop_string_ends_the_generation_not_only_the_text(tiny):
    """A template whose turns end in plain text (ChatML on GPT-2's vocabulary, the llama2 fallback's
    "[INST]") stopped generating only at max_new_tokens: the stop string cut the reply's text, but every
    reply cost max_new_tokens.  Each row of a batch now stops once its own text holds a stop string."""
    _, model, tokenizer = tiny
    agent = HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=60, chat_format="llama2",
                    keep_sampled_ids=True, draft_tokens=0)  # every token through _choose, scripted below
    assert "[INST]" in agent.stop_text
    texts = ["go north [INST] and on" + " and on" * 30, "Thought: far away. Action: wait [INST] more" + " on" * 30]
    scripts = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    ends = [next(k for k in range(len(ids)) if "[INST]" in tokenizer.decode(ids[:k])) for ids in scripts]
    assert all(end < 40 for end in ends) and ends[0] != ends[1]
    steps = iter(range(60))

    def scripted(logits, rows, active):  # the model "chooses" each script's next token
        step = next(steps)
        return torch.tensor([ids[step] for ids in scripts])

    agent._choose = scripted
    episodes = make_episodes(2)
    assert agent.act(episodes) == ["go north", "Thought: far away. Action: wait"]
    for ep, ids, end in zip(episodes, scripts, ends, strict=True):
        assert ep.meta["generated_tokens"] == end and ep.sampled_ids[0] == ids[:end]
        assert "truncated_replies" not in ep.meta


def test_two_runs_sharing_the_agent_answer_as_each_would_alone(tiny):
    """Two evaluations in threads of one notebook, one agent: their generations shared its buffers, and
    greedy replies changed with no error."""
    from concurrent.futures import ThreadPoolExecutor

    agent = make_agent(tiny)
    alone = [play(agent, make_episodes(3, offset), rounds=3) for offset in (0, 3)]
    for _ in range(3):
        with ThreadPoolExecutor(2) as pool:
            together = list(pool.map(lambda offset: play(agent, make_episodes(3, offset), rounds=3), (0, 3)))
        assert together == alone


def test_release_frees_the_cache(tiny):
    agent = make_agent(tiny)
    episodes = make_episodes(2)
    agent.act(episodes)
    assert len(agent._caches) == 2
    agent.release(episodes[0])
    assert set(agent._caches) == {episodes[1].uid}
    assert agent._store.layers  # the kept episode's keys and values wait for its next round
    agent.release(episodes[1])
    assert agent._store.layers == [] and agent._spare.layers == []  # no episode left: nothing held


def test_episodes_joining_a_running_batch_answer_as_they_would_alone(tiny):
    """A later, larger batch cannot reuse a smaller round's buffers: it takes new ones, with the same replies."""
    agent = make_agent(tiny)
    first, joining = make_episodes(2), make_episodes(3, offset=2)
    play(agent, first, rounds=2)
    together = play(agent, first + joining, rounds=2)
    alone = [play(make_agent(tiny), make_episodes(1, offset=i), rounds=2)[0] for i in range(2, 5)]
    assert together[2:] == alone


def test_the_same_batch_plays_on_in_the_same_buffers(tiny):
    """While the same episodes play on (and their room lasts), a round copies no cache: each writes where
    the last one ended, in the same buffers."""
    agent = make_agent(tiny)
    episodes = make_episodes(3)
    play(agent, episodes, rounds=1)
    buffers = agent._store.layers[0][0]
    assert agent._store.capacity >= 2 * len(agent._caches[episodes[2].uid].tokens)
    play(agent, episodes, rounds=1)
    assert agent._store.layers[0][0] is buffers


def test_outgrown_buffers_are_let_go(tiny):
    """When the conversations outgrow the buffers, the new ones take the kept caches and the old ones are let
    go (no later layout could reuse them as its spare); the episodes answer as they would alone."""
    agent = make_agent(tiny)
    episodes = make_episodes(2)
    play(agent, episodes, rounds=1)
    first = agent._store.capacity
    replies = play(agent, episodes, rounds=6)
    assert agent._store.capacity > first and agent._spare.layers == []
    for i in range(2):
        alone, episode = make_agent(tiny), make_episodes(1, offset=i)
        play(alone, episode, rounds=1)
        assert play(alone, episode, rounds=6)[0] == replies[i]


def test_a_changing_batch_answers_as_each_episode_would_alone(tiny):
    """Episodes leave a round and come back, or play in a different order: their kept caches move into
    buffers laid out anew (those of the layout before last, where they fit), and every episode answers as
    it would alone."""
    agent = make_agent(tiny)
    episodes = make_episodes(4)
    schedule = [[0, 1, 2, 3], [0, 2], [3, 1], [1, 2, 3], [2, 0], [0, 1, 2, 3]]
    replies: dict[int, list[str]] = {i: [] for i in range(4)}
    reused = False
    for r, playing in enumerate(schedule):
        spare = agent._spare.layers[0][0] if agent._spare.layers else None
        batch = [episodes[i] for i in playing]
        for i, reply in zip(playing, agent.act(batch), strict=True):
            replies[i].append(reply)
            episodes[i].trajectory.add_reply(reply)
            episodes[i].trajectory.add_observation(f"Round {r}: you moved" + " ok" * i)
        reused |= spare is not None and agent._store.layers[0][0] is spare
    assert reused  # the buffers before the last layout were taken again
    for i in range(4):
        alone, ep = make_agent(tiny), make_episodes(1, offset=i)[0]
        for r, playing in enumerate(schedule):
            if i in playing:
                reply = alone.act([ep])[0]
                assert reply == replies[i][len(ep.trajectory.conversations[3::2])]
                ep.trajectory.add_reply(reply)
                ep.trajectory.add_observation(f"Round {r}: you moved" + " ok" * i)


def test_loads_from_folder_and_falls_back_to_chatml(tiny):
    path, _, _ = tiny
    agent = HFAgent(path, max_new_tokens=4)
    assert agent.chat_format == "model" and agent.name == f"hf:{path}"
    agent.tokenizer.chat_template = None
    fallback = HFAgent(model=agent.model, tokenizer=agent.tokenizer, max_new_tokens=4)
    assert fallback.chat_format == "chatml"
    text = fallback.prompt_text([{"role": "user", "content": "hi"}])
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert len(fallback.act(make_episodes(2))) == 2


def test_a_results_file_resumes_only_with_the_weights_it_was_played_with(tiny, tmp_path):
    """A model was known by its path alone: another model saved there (a retrained ``runs/bc``) resumed a
    half-done evaluation without a word, and the file mixed two models' episodes under one name."""
    from agentenv.controller.evaluator import EvalTask, evaluate

    _, model, tokenizer = tiny
    folder, out = tmp_path / "model", tmp_path / "results.jsonl"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    def run(indices, path=str(folder)):
        agent = HFAgent(path, max_new_tokens=4)
        tasks = [EvalTask("guess", [], i) for i in indices]
        return evaluate(agent, tasks, out, max_rounds=2, sources={"guess": LocalEnv(GuessEnv)}, progress=False)

    run([0])
    # the same weights, the folder spelled otherwise (it was refused as another agent): the rest of the run
    run([0, 1], os.path.relpath(folder))
    assert len(out.read_text().splitlines()) == 2
    retrained = transformers.AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        for weight in retrained.parameters():
            weight.add_(0.01)
    retrained.save_pretrained(folder)
    with pytest.raises(ValueError, match=r"holds 2 finished episodes of a run with agent .*'weights'"):
        run([0, 1, 2])
    assert len(out.read_text().splitlines()) == 2


def test_llama2_fallback_template(tiny):
    _, model, tokenizer = tiny
    agent = HFAgent(model=model, tokenizer=tokenizer, chat_format="llama2")
    messages = [
        {"role": "user", "content": "instr"},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": "obs"},
    ]
    bos, eos = tokenizer.bos_token, tokenizer.eos_token
    assert agent.prompt_text(messages) == f"{bos}[INST] instr [/INST] Ok. {eos}{bos}[INST] obs [/INST]"
    assert agent.decode_reply(tokenizer("Thought: x [INST] junk", add_special_tokens=False)["input_ids"]) == "Thought: x"


def test_rollout_generates_one_batch_per_round(tiny):
    _, model, _ = tiny
    batch_sizes: list[int] = []
    hook = model.register_forward_pre_hook(
        lambda module, args, kwargs: batch_sizes.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    source = LocalEnv(GuessEnv)
    agent = make_agent(tiny, max_new_tokens=4, ignore_eos=True)
    try:
        episodes = Rollout(agent, {"guess": source}, concurrency=4, max_rounds=3).run(
            [RolloutTask("guess", i) for i in range(6)]
        )
    finally:
        hook.remove()
    assert sorted(ep.data_idx for ep in episodes) == list(range(6))
    # the random model never names a number: every episode runs its 3 rounds, 4 at a time
    assert all(ep.rounds == 3 and ep.stop_reason == "max_rounds" for ep in episodes)
    assert batch_sizes.count(4) >= 3 * 4  # 3 full rounds of 4 episodes, 4 forwards each
    assert len(batch_sizes) == 6 * 4  # 6 generation rounds (4+2 episodes, 3 rounds each), 4 tokens each
    assert agent._caches == {} and source.live_sessions == 0  # caches freed, sessions closed
    assert all(len(ep.trajectory.conversations) == 2 + 2 * 3 for ep in episodes)


def test_samples_do_not_depend_on_when_batch_mates_stop(tiny):
    """A row that has stopped draws nothing more, so its episode's next sample is the same as when alone."""

    def episodes(indices) -> list[Episode]:
        eps = make_episodes(len(indices), offset=indices[0]) if len(indices) == 1 else make_episodes(len(indices))
        for ep in eps:
            ep.temperature, ep.seed = 1.5, 100 + ep.data_idx
        return eps

    together = play(make_agent(tiny, max_new_tokens=24, batch_size=8), episodes(range(6)), rounds=3)
    alone = [play(make_agent(tiny, max_new_tokens=24), episodes([i]), rounds=3)[0] for i in range(6)]
    lengths = {len(reply) for replies in together for reply in replies}
    assert len(lengths) > 1, "rows should stop at different lengths for this test to mean anything"
    assert together == alone


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine with a GPU has CUDA")
def test_a_cuda_device_without_a_gpu_is_refused_before_loading():
    with pytest.raises(ValueError, match="device 'cuda': this torch sees no CUDA GPU; give --device cpu"):
        HFAgent("runs/no/such/model", device="cuda")


def test_settings_that_cannot_work_are_refused_before_the_weights_load(tiny, tmp_path):
    """A reply limit as long as the model's context ended every episode at round 0 ("context full", exit 0);
    a folder without a tokenizer was blamed on a missing sentencepiece, and an unknown device on torch's
    wording, both after the weights had loaded (minutes for a 7B)."""
    import shutil

    path, model, tokenizer = tiny
    with pytest.raises(ValueError, match="max_new_tokens 300 leaves no room for a prompt in the model's context of 300"):
        HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=300, max_length=300)
    with pytest.raises(ValueError, match="device 'gpu' is not a torch device: give cpu, or cuda"):
        HFAgent(path, device="gpu")
    bare = tmp_path / "no_tokenizer"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(path / name, bare / name)
    with pytest.raises(ValueError, match="no_tokenizer has no tokenizer"):
        HFAgent(bare)


def test_a_tokenizer_without_a_template_is_prompted_as_training_templates_it(tiny, capsys):
    """Without a chat template the agent fell back by its own rule (Llama-2 only for <s>/</s>, else ChatML)
    and training by another (ChatML only where <|im_start|> is in the vocabulary): a GPT-2-like tokenizer
    was trained in Llama-2's format and prompted in ChatML."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from agentenv.data.tokenize import resolve_chat_template

    words = {w: i for i, w in enumerate(["<|endoftext|>", "[INST]", "[/INST]", "hi", "<s>", "</s>", "<<SYS>>"])}
    backend = Tokenizer(models.WordLevel(words, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    gpt2_like = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<|endoftext|>", eos_token="<|endoftext|>"
    )
    agent = HFAgent(model=tiny[1], tokenizer=gpt2_like, max_new_tokens=4)
    assert agent.chat_format == "llama2" and agent.template == resolve_chat_template(gpt2_like)
    assert "has no chat template; prompting with llama2" in capsys.readouterr().err


def test_a_fallback_template_saved_with_the_model_keeps_its_stop_strings(tiny, tmp_path):
    """A model trained with the llama2 fallback (or ChatML on a vocabulary without <|im_end|>) holds that
    template as its own: loaded again it lost the fallback's stop strings, and a reply ran on into the
    turns the model went on to write ("[INST] ..."), its action taken from them."""
    from agentenv.data.tokenize import _EARLIER_TEMPLATES, LLAMA2_TEMPLATE

    _, model, tokenizer = tiny
    reply = tokenizer("Thought: x [INST] junk", add_special_tokens=False)["input_ids"]
    for template in (LLAMA2_TEMPLATE, *_EARLIER_TEMPLATES):  # as trained now, and before
        tokenizer.chat_template = template
        agent = HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=4)
        assert agent.chat_format == "model" and agent.decode_reply(reply) == "Thought: x"


@pytest.mark.parametrize(
    ("config", "max_length", "problem"),
    [("T5Config", None, "m: t5 is an encoder-decoder model; give a decoder-only"),
     ("BertConfig", None, "m: bert is an encoder \\(it attends both ways\\); give a decoder-only"),
     ("GPT2Config", 4096, "--max-length 4096 is past the 1024 positions of m: give --max-length 1024 or less")],
)
def test_a_model_no_agent_can_be_is_refused_in_one_line(tmp_path, config, max_length, problem):
    """T5 failed with a 2,500-character list of causal-LM classes; BERT trained as if causal (its attention
    both ways, the labels in sight) with a warning only; GPT-2 past its 1,024 positions ended on
    'IndexError: index out of range in self' once training began."""
    from agentenv.models import check_causal_lm

    getattr(transformers, config)().save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=f"^{problem}"):
        check_causal_lm(tmp_path, max_length, label="m")


def test_a_model_that_is_nowhere_is_refused_from_python_as_from_the_command_line(tmp_path, monkeypatch):
    """From Python, HFAgent and the trainers skipped the command line's check: a missing folder gave
    transformers' "Repo id must be in the form ..." and a Hub name off the network 20 s of retries."""
    from agentenv.trainer.bc import BCConfig
    from agentenv.trainer.engine import load_tokenizer

    with pytest.raises(ValueError, match="nope: does not exist; give the folder of a saved model"):
        HFAgent(str(tmp_path / "nope"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ValueError, match="--model org/no-such-model: not a folder here, and HF_HUB_OFFLINE is set"):
        load_tokenizer(BCConfig(model="org/no-such-model", data="x.jsonl", output_dir=str(tmp_path)))


def test_the_folder_of_a_training_run_is_a_model_once_the_run_has_finished(tiny, tmp_path):
    """A BC run that failed while saving its final model (the disk full) left config.json and half its files;
    `hf:` loaded them and failed on a cut JSON file, naming neither."""
    import shutil

    from agentenv.controller.agents import agent_from_spec

    run = tmp_path / "bc"
    shutil.copytree(tiny[0], run)
    (run / "train_log.jsonl").write_text('{"step": 1, "loss": 2.0}\n')
    with pytest.raises(ValueError, match="bc: its training run has not finished .* rerun the training command"):
        agent_from_spec(f"hf:{run}")
    with pytest.raises(ValueError, match="its training run has not finished"):
        HFAgent(run)
    (run / "train_state.json").write_text('{"done": true, "steps": 1}')
    assert HFAgent(run, max_new_tokens=4).name == f"hf:{run}"


def test_a_causal_lm_within_its_positions_passes(tmp_path):
    from agentenv.models import check_causal_lm

    transformers.GPT2Config().save_pretrained(tmp_path / "gpt2")
    transformers.LlamaConfig(max_position_embeddings=2048).save_pretrained(tmp_path / "llama")
    check_causal_lm(tmp_path / "gpt2", 1024)
    check_causal_lm(tmp_path / "llama", None)  # an agent reads the model's own limit


def test_training_and_evaluating_check_the_model_first(tmp_path):
    from agentenv.cli import main

    transformers.GPT2Config(n_positions=512).save_pretrained(tmp_path / "gpt2")
    transformers.T5Config().save_pretrained(tmp_path / "t5")
    out = tmp_path / "run"
    with pytest.raises(SystemExit, match=f"--max-length 4096 is past the 512 positions of --model {tmp_path / 'gpt2'}"):
        main(["train", "bc", "--model", str(tmp_path / "gpt2"), "--data", "x.jsonl", "--output-dir", str(out)])
    assert not (out / "model.safetensors").exists()
    with pytest.raises(SystemExit, match=f"^error: hf:{tmp_path / 't5'}: t5 is an encoder-decoder model"):
        main(["eval", "--agent", f"hf:{tmp_path / 't5'}", "--env", "maze", "--local", "--limit", "1",
              "--out", str(tmp_path / "e.jsonl")])


@pytest.mark.parametrize("family", ["mistral", "gemma2"])
def test_a_sliding_window_model_sees_what_it_was_trained_to_see(tiny, family):
    """The agent's own attention mask went to the model as given, without the model's window: past it
    (4,096 tokens for Mistral and Gemma-2, 2,047 for Phi-3-4k) the agent attended to context that training
    and vLLM do not. Every layer slides in Mistral; every other one in Gemma-2."""
    _, _, tokenizer = tiny
    common = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, sliding_window=8, max_position_embeddings=1024,
                  pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    if family == "mistral":
        config = transformers.MistralConfig(**common)
    else:
        config = transformers.Gemma2Config(**common, head_dim=16, layer_types=["sliding_attention", "full_attention"],
                                           attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() == 2:
                weight.normal_(0, 0.3 if family == "mistral" else 0.02)  # Gemma scales its embeddings up

    def generated(agent: HFAgent) -> list[list[int]]:
        episodes = make_episodes(3)
        agent.act(episodes)
        return [[t for t in ep.sampled_ids[0] if t not in agent.stop_ids] for ep in episodes]

    def reference(agent: HFAgent, messages: list[dict]) -> list[int]:  # the model's own masks, its window in
        ids = agent.prompt_ids(messages)
        out = model.generate(torch.tensor([ids]), max_new_tokens=MAX_NEW, do_sample=False,
                             eos_token_id=sorted(agent.stop_ids), pad_token_id=agent.pad_id)[0, len(ids):].tolist()
        return [t for t in out if t not in agent.stop_ids]

    agent = HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=MAX_NEW, batch_size=4, keep_sampled_ids=True)
    ours = generated(agent)
    assert ours == [reference(agent, ep.messages()) for ep in make_episodes(3)]
    assert min(len(agent.prompt_ids(ep.messages())) for ep in make_episodes(3)) > 4 * config.sliding_window
    agent._window = (None, False)  # what the agent did before: the test tells the two apart
    assert generated(agent) != ours


def test_drafted_replies_are_the_replies_without_drafts_in_fewer_steps(tiny):
    """Prompt lookup (``draft_tokens``) feeds tokens copied from the conversation and keeps those the model
    confirms: greedy replies must be exactly those of one token a step, in a batch whose rows confirm
    different numbers of drafts, episodes ending at different rounds, and stop tokens among the drafts."""
    for chat_format in ("auto", "llama2"):  # the model's template (stop tokens), and stop strings
        plain = make_agent(tiny, draft_tokens=0, max_new_tokens=24, chat_format=chat_format)
        without = play(plain, make_episodes(5), rounds=4)
        for k in (1, 3):
            drafting = make_agent(tiny, draft_tokens=k, max_new_tokens=24, chat_format=chat_format)
            assert play(drafting, make_episodes(5), rounds=4) == without
            assert drafting.stats["generated_tokens"] == plain.stats["generated_tokens"]
            assert drafting.stats["confirmed_drafts"] > 0
            assert drafting.stats["decode_steps"] < plain.stats["decode_steps"]
            # what the cache holds is what re-encoding gives: the next round's prompt reuses it
            assert drafting.stats["reused_tokens"] >= plain.stats["reused_tokens"]
        assert plain.stats["confirmed_drafts"] == 0
    with pytest.raises(ValueError, match="draft_tokens must be 0"):
        make_agent(tiny, draft_tokens=-1)


def test_sampled_episodes_get_no_drafts(tiny):
    """Drafts are checked against the greedy choice; a sampled reply is drawn a token a step, as before."""
    agent = make_agent(tiny, temperature=0.9, draft_tokens=3)
    drawn = play(agent, make_episodes(3), rounds=2)
    assert agent.stats["confirmed_drafts"] == 0
    assert play(make_agent(tiny, temperature=0.9, draft_tokens=0), make_episodes(3), rounds=2) == drawn


def test_draft_columns_past_a_learned_position_table_are_harmless(tiny):
    """Rows confirm drafts at different rates, so one may finish while its batch mates still feed drafts: its
    columns, padded to their width, then lie past the slots its reply needed, and past the last position,
    which a model of learned positions (GPT-2) has no embedding for.  Scripted here: the longest prompt's
    drafts are the model's own next tokens (all confirmed), the others' always wrong."""
    _, _, tokenizer = tiny
    config = transformers.GPT2Config(vocab_size=len(tokenizer), n_positions=160, n_embd=32, n_layer=2, n_head=2,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()

    def episodes() -> list[Episode]:
        played = make_episodes(3)
        played[0].trajectory.add_reply("Thought:\nwait\n\nAction:\nwait")
        played[0].trajectory.add_observation("a long corridor " * 3)
        return played

    def agent(draft_tokens: int) -> HFAgent:
        longest = max(len(make_agent(tiny).prompt_ids(ep.messages())) for ep in episodes())
        return HFAgent(model=model, tokenizer=tokenizer, max_new_tokens=160 - longest, ignore_eos=True,
                       keep_sampled_ids=True, draft_tokens=draft_tokens)

    plain, played = agent(0), episodes()
    replies = plain.act(played)
    own = {ep.data_idx: ep.sampled_ids[0] for ep in played}
    assert plain.max_new_tokens >= 20 and len(own[0]) == plain.max_new_tokens
    wrong = next(t for t in range(len(tokenizer)) if all(t not in ids for ids in own.values()))

    class Scripted:
        def __init__(self, future: list[int]) -> None:
            self.future, self.at = future, 0

        def append(self, token: int) -> None:
            self.at += 1

        def draft(self, k: int) -> list[int]:
            return self.future[self.at : self.at + k]

    drafting = agent(4)
    drafting._lookups = lambda rows: [
        Scripted(own[0] if row.episode.data_idx == 0 else [wrong] * 200) for row in rows
    ]
    assert drafting.act(episodes()) == replies
    assert drafting.stats["confirmed_drafts"] >= plain.max_new_tokens // 2


def test_prompt_lookup_drafts_what_followed_the_last_two_tokens_before():
    from agentenv.controller.prompt_lookup import PromptLookup

    lookup = PromptLookup()
    lookup.sync([5, 6, 7, 8, 5, 6], 0)
    assert lookup.draft(3) == [7, 8, 5] and lookup.draft(0) == []
    lookup.append(9)  # "6 9" was never seen
    assert lookup.draft(2) == []
    lookup.sync([5, 6, 7, 8, 5, 6, 7], 6)  # the next round's prompt keeps six of the tokens held
    assert lookup.tokens == [5, 6, 7, 8, 5, 6, 7] and lookup.draft(2) == [8, 5]
