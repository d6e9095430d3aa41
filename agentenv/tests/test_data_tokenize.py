"""Loss masks, truncation, packing and AgentTraj loading for the trainers' data pipeline."""

from __future__ import annotations

import json

import pytest

from agentenv.data.dataset import dataset_to_trajectories, load_trajectory_dataset
from agentenv.data.tokenize import (
    CHATML_TEMPLATE,
    IGNORE_INDEX,
    LLAMA2_TEMPLATE,
    DataCollator,
    TemplateError,
    encode_conversation,
    pack_examples,
    render_with_spans,
    resolve_chat_template,
    set_chat_template,
    tokenize_dataset,
)
from agentenv.data.trajectory import Trajectory, Turn, read_trajectories
from agentenv.testing import tiny_tokenizer

# A "model's own" template unlike both fallbacks (Zephyr-style role tags, "</s>" ends every message).
OWN_TEMPLATE = (
    "{% for m in messages %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '</s>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def conversation() -> list[Turn]:
    t = Trajectory.start("maze", 3, "You are an agent in a maze. Reach the goal.")
    t.add_observation("Your position is 3, 4. Available actions: move up, move down")
    t.add_reply("Thought:\nI should move toward the goal.\n\nAction:\nmove up")
    t.add_observation("Your position is 2, 4.")
    t.conversations.append(Turn("gpt", "Thought:\nThe letters narrow it down.\n\nAction:\nmove down", None))
    t.add_observation("There are walls to your left and right.")
    t.add_reply("Thought:\nNot this one.\n\nAction:\nmove up", loss=False)
    t.add_observation("Your position is 1, 4.")
    return t.conversations


def sentencepiece_like_tokenizer():
    """A Llama-2-like tokenizer (Metaspace pre-tokenizer, ``<s>`` / ``</s>``), trained in process."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from agentenv.testing.models import _CORPUS

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    corpus = _CORPUS + ["[INST] <<SYS>> <</SYS>> [/INST]\n"]
    tok.train_from_iterator(corpus * 4, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def trained_runs(labels: list[int]) -> list[tuple[int, int]]:
    """The ``[first, last]`` token positions of each contiguous run of trained labels."""
    runs: list[tuple[int, int]] = []
    previous = IGNORE_INDEX
    for j, label in enumerate(labels):
        if label != IGNORE_INDEX:
            runs.append((runs.pop()[0] if previous != IGNORE_INDEX else j, j))
        previous = label
    return runs


# Phi-3's: EOS closes the rendered conversation (not a turn), so no render is a prefix of the next one's
PHI3_TEMPLATE = (
    "{% for m in messages %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '<|end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
)
# DeepSeek-R1's (distilled models): the generation prompt opens more than the assistant header
R1_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}{{ '<|User|>' + m['content'] }}"
    "{% else %}{{ '<|Assistant|>' + m['content'] + '<|end_of_sentence|>' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|Assistant|><think>\n' }}{% endif %}"
)

# (tokenizer factory, template, what a trained turn's text looks like once rendered)
CASES = {
    "model-own": (tiny_tokenizer, OWN_TEMPLATE, lambda tok, v: v + "</s>"),
    "phi3": (tiny_tokenizer, PHI3_TEMPLATE, lambda tok, v: v + "<|end|>"),
    "deepseek-r1": (tiny_tokenizer, R1_TEMPLATE, lambda tok, v: v + "<|end_of_sentence|>"),
    "chatml": (tiny_tokenizer, "chatml", lambda tok, v: v + "<|im_end|>"),
    "llama2": (tiny_tokenizer, "llama2", lambda tok, v: " " + v + " " + tok.eos_token),
    "llama2-sentencepiece": (sentencepiece_like_tokenizer, "llama2", lambda tok, v: " " + v + " </s>"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_labels_cover_exactly_the_loss_true_turns(case):
    make, template, rendered = CASES[case]
    tok = make()
    if template == OWN_TEMPLATE:
        tok.chat_template = OWN_TEMPLATE
        assert set_chat_template(tok, "auto") == OWN_TEMPLATE  # the model's own template wins
    else:
        set_chat_template(tok, template)
    turns = conversation()
    enc = encode_conversation(tok, turns)
    assert enc is not None and len(enc.input_ids) == len(enc.labels)

    # every trained token is the token itself; everything else is masked
    assert all(label in (token, IGNORE_INDEX) for token, label in zip(enc.input_ids, enc.labels, strict=True))
    expected = [t.value for t in turns if t.trains()]
    assert len(expected) == 2  # the "Ok." and the loss=False reply are not trained; loss=None gpt is
    # the text under each run of trained tokens is exactly a trained turn plus its end-of-turn marker
    text, _, _ = render_with_spans(tok, turns)
    offsets = tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    runs = trained_runs(enc.labels)
    assert [text[offsets[a][0] : offsets[b][1]] for a, b in runs] == [rendered(tok, v) for v in expected]
    # nothing after the last trained turn is kept: it would carry no loss
    assert text.startswith(tok.decode(enc.input_ids))
    assert tok.decode(enc.input_ids).rstrip().endswith(rendered(tok, expected[-1]).rstrip())


@pytest.mark.parametrize("case", list(CASES))
def test_a_flagged_observation_trains_from_its_content_on(case):
    """A world-model log (agentenv.data.walks --kind dynamics) flags observations: each trains on its
    content and end marker, never on the role header the template puts before it."""
    make, template, _ = CASES[case]
    tok = make()
    tok.chat_template = OWN_TEMPLATE if template == OWN_TEMPLATE else None
    set_chat_template(tok, "auto" if template == OWN_TEMPLATE else template)
    t = Trajectory.start("maze", 3, "You are an agent in a maze. Reach the goal.")
    for k in range(2):
        t.conversations.append(Turn("human", f"Your position is {k}, 4.", True))
        t.conversations.append(Turn("gpt", "Action:\nmove up", False))
    enc = encode_conversation(tok, t.conversations)
    text, _, _ = render_with_spans(tok, t.conversations)
    offsets = tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    runs = [text[offsets[a][0] : offsets[b][1]] for a, b in trained_runs(enc.labels)]
    assert [run.lstrip()[: len("Your position is 0, 4.")] for run in runs] == [
        "Your position is 0, 4.", "Your position is 1, 4."
    ]
    assert not any(marker in run for run in runs for marker in ("user", "[INST]", "assistant", "move up"))


@pytest.mark.parametrize("case", list(CASES))
def test_focus_labels_cover_the_action_lines_of_the_trained_turns(case):
    """``focus=ACTION_MARKER`` (DPO's preference on actions): each trained reply's tokens after its last
    "Action:", without the end-of-turn marker that every reply shares; ``labels`` stay whole; a reply
    without the marker counts whole."""
    from agentenv.react import ACTION_MARKER

    make, template, rendered = CASES[case]
    tok = make()
    tok.chat_template = OWN_TEMPLATE if template == OWN_TEMPLATE else None
    set_chat_template(tok, "auto" if template == OWN_TEMPLATE else template)
    turns = conversation()
    turns[-2] = Turn("gpt", "move left")  # a formless reply, trained
    whole = encode_conversation(tok, turns)
    enc = encode_conversation(tok, turns, focus=ACTION_MARKER)
    assert enc.input_ids == whole.input_ids and enc.labels == whole.labels
    text, _, _ = render_with_spans(tok, turns)
    offsets = tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    runs = [text[offsets[a][0] : offsets[b][1]] for a, b in trained_runs(enc.focus_labels)]
    assert [r.strip() for r in runs] == ["move up", "move down", "move left"]  # the last: no "Action:"
    assert all(f in (label, IGNORE_INDEX) for f, label in zip(enc.focus_labels, enc.labels, strict=True))
    assert whole.focus_labels is None


def test_a_first_turn_that_trains_starts_at_its_content():
    """A conversation that opens with a reply (a pairs file without a prompt): what the template writes
    before it (a default system prompt, the role header) is not trained."""
    tok = tiny_tokenizer()
    tok.chat_template = (  # Qwen2.5-like: a default system prompt when the conversation has none
        "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "{% endif %}" + CHATML_TEMPLATE
    )
    enc = encode_conversation(tok, [Turn("gpt", "Action:\nmove up", True), Turn("human", "Moved.", None)])
    assert tok.decode([label for label in enc.labels if label != IGNORE_INDEX]) == "Action:\nmove up<|im_end|>"


def test_a_dataset_whose_first_batch_is_all_dropped_tokenizes():
    """Rows of a dropped conversation are empty lists: a first map batch of only those typed the columns as
    lists of nulls, and the next batch's ids failed to cast."""
    from agentenv.data.dataset import trajectories_to_dataset

    def trajectory(i, words):
        t = Trajectory.start("maze", i, "You are an agent in a maze. " * words)
        t.add_observation("Your position is 3, 4.")
        t.add_reply("Action:\nmove up")
        return t

    tok = tiny_tokenizer()
    set_chat_template(tok, "chatml")
    dataset = trajectories_to_dataset([trajectory(i, 60) for i in range(1000)] + [trajectory(i, 1) for i in range(5)])
    tokenized, stats = tokenize_dataset(dataset, tok, max_length=128)
    assert (stats.kept, stats.dropped, len(tokenized)) == (5, 1000, 5)


def test_headers_and_observations_are_masked():
    tok = tiny_tokenizer()
    set_chat_template(tok, "chatml")
    enc = encode_conversation(tok, conversation())
    masked_text = tok.decode([t for t, label in zip(enc.input_ids, enc.labels, strict=True) if label == IGNORE_INDEX])
    assert masked_text.count("<|im_start|>assistant\n") == 3  # "Ok." + two trained replies' headers
    assert "Your position is 3, 4." in masked_text and "move toward" not in masked_text


def test_truncation_drops_whole_trailing_turns():
    tok = tiny_tokenizer()
    set_chat_template(tok, "chatml")
    turns = conversation()
    full = encode_conversation(tok, turns)
    one_turn = encode_conversation(tok, turns[:5])  # up to and including the first trained reply
    assert full is not None and one_turn is not None

    cut = encode_conversation(tok, turns, max_length=len(full.input_ids) - 1)
    assert cut is not None
    assert cut.input_ids == one_turn.input_ids and cut.labels == one_turn.labels
    assert cut.dropped_turns == 1
    assert encode_conversation(tok, turns, max_length=len(one_turn.input_ids) - 1) is None
    exact = encode_conversation(tok, turns, max_length=len(full.input_ids))  # a conversation that just fits
    assert exact.input_ids == full.input_ids and exact.dropped_turns == 0
    assert encode_conversation(tok, turns, max_length=len(one_turn.input_ids)).input_ids == one_turn.input_ids


def test_template_that_rewrites_history_is_refused():
    tok = tiny_tokenizer()
    # renders only the last message's content in full: earlier turns change as the conversation grows
    tok.chat_template = (
        "{% for m in messages %}{% if loop.last %}{{ m['content'] }}{% else %}{{ m['role'] }}{% endif %}"
        "{% endfor %}"
    )
    with pytest.raises(TemplateError):
        encode_conversation(tok, conversation())


def test_fallback_choice():
    tok = tiny_tokenizer()
    tok.chat_template = None
    assert resolve_chat_template(tok) == CHATML_TEMPLATE  # the vocabulary knows <|im_start|>
    assert resolve_chat_template(sentencepiece_like_tokenizer()) == LLAMA2_TEMPLATE
    with pytest.raises(TemplateError):
        resolve_chat_template(tok, "model")


def test_the_llama2_fallback_renders_for_a_tokenizer_without_bos_or_eos():
    """A tokenizer with neither a BOS nor a chat template (Falcon, OLMo) failed in the llama2 fallback:
    'bos_token' is undefined."""
    tok = sentencepiece_like_tokenizer()
    tok.bos_token = None
    set_chat_template(tok, "auto")
    text, spans, _ = render_with_spans(tok, conversation())
    assert text.startswith("[INST] You are an agent") and len(spans) == 2


def test_a_template_that_refuses_a_system_turn_says_what_to_do():
    """Gemma's and Mistral's templates raise on a system turn: BC ended on 'TemplateError: System role not
    supported', naming no way out."""
    tok = tiny_tokenizer()
    tok.chat_template = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        + CHATML_TEMPLATE
    )
    turns = [Turn("system", "Be brief.", False), *conversation()]
    with pytest.raises(TemplateError, match=r"\(System role not supported\): fold the system text into the first "
                                            r"human turn, or train with --template chatml or llama2"):
        encode_conversation(tok, turns)


def agentgym_item(i: int) -> dict:
    """An item as AgentGym's released AgentTraj files hold it: no reward / env fields."""
    return {
        "item_id": f"webshop_{i}",
        "conversations": [
            {"from": "human", "loss": None, "value": "You are web shopping. Reply with Thought: and Action:."},
            {"from": "gpt", "loss": False, "value": "Ok."},
            {"from": "human", "loss": None, "value": f"Find item {i}. [Search]"},
            {"from": "gpt", "loss": True, "value": f"Thought:\nSearch it.\n\nAction:\nsearch[item {i}]"},
        ],
    }


def test_agentgym_json_and_our_jsonl_load_together(tmp_path):
    released = tmp_path / "webshop_train.json"
    released.write_text(json.dumps([agentgym_item(i) for i in range(3)]))
    ours = tmp_path / "maze.jsonl"
    t = Trajectory.start("maze", 7, "Maze instruction", reward=1.0, success=True, meta={"rounds": 1})
    t.add_observation("obs")
    t.add_reply("Thought:\ngo\n\nAction:\nmove up")
    ours.write_text(json.dumps(t.to_json()) + "\n" + '{"item_id": "maze_8", "conv')  # a torn last line

    ds = load_trajectory_dataset([released, ours])
    assert ds["item_id"] == ["webshop_0", "webshop_1", "webshop_2", "maze_7"]
    back = dataset_to_trajectories(ds)
    assert back[0].env == "webshop" and back[0].conversations[1].loss is False
    assert back[3].meta == {"rounds": 1} and back[3].reward == 1.0

    tok = tiny_tokenizer()
    tokenized, stats = tokenize_dataset(ds, tok, max_length=4096)
    assert stats.kept == 4 and stats.dropped == 0 and len(tokenized) == 4
    assert stats.trained_tokens == sum(sum(x != IGNORE_INDEX for x in row) for row in tokenized["labels"])

    _, stats = tokenize_dataset(ds, tok, max_length=20)
    assert stats.dropped == 4 and stats.kept == 0

    # released records carry no score: unscored (reward 0) unless the reader says what they are
    assert [(t.reward, t.success) for t in read_trajectories(released)][0] == (0.0, False)
    assert [(t.reward, t.success) for t in read_trajectories(released, unscored_reward=1.0)][0] == (1.0, True)
    assert [t.reward for t in read_trajectories(ours, unscored_reward=1.0)] == [1.0]  # scored: kept as is


def test_a_folder_of_evaluation_output_loads_its_trajectories_only(tmp_path, caplog):
    """``--data FOLDER`` over ``agentenv eval`` output: the side files are left out, and a line a kill cut
    short in the middle (a resumed run appends after it) is skipped with a warning naming it."""
    from agentenv.controller.report import build_report

    t = Trajectory.start("maze", 7, "Maze instruction", reward=1.0, success=True)
    t.add_observation("obs")
    t.add_reply("Thought:\ngo\n\nAction:\nmove up")
    lines = [json.dumps(dict(t.to_json(), item_id=f"maze_{i}")) for i in range(3)]
    (tmp_path / "maze_eval.jsonl").write_text(lines[0] + "\n" + lines[1][:30] + "\n" + lines[2] + "\n")
    (tmp_path / "maze_eval.meta.json").write_text(json.dumps({"agent": "expert", "runs": []}))
    build_report([t], {"maze": (0.0, 1.0)}).save(tmp_path / "maze_eval")
    assert (tmp_path / "maze_eval.report.json").exists()

    with caplog.at_level("WARNING"):
        ds = load_trajectory_dataset(tmp_path)
    assert ds["item_id"] == ["maze_0", "maze_2"]
    assert "maze_eval.jsonl: skipped line 2" in caplog.text

    (tmp_path / "notes.json").write_text(json.dumps({"not": "trajectories"}))
    with pytest.raises(ValueError, match="notes.json is not a trajectory file"):
        load_trajectory_dataset(tmp_path)


def test_records_that_are_not_trajectories_are_named(tmp_path):
    """A record without AgentTraj's fields names its file and place; a file with no trajectory at all is
    refused by name rather than handed to training empty."""
    (tmp_path / "a.jsonl").write_text(json.dumps({"item_id": "maze_0", "conversations": []}) + "\n" + '{"id": 1}\n')
    with pytest.raises(ValueError, match=r"a.jsonl: line 2 is not an AgentTraj trajectory \(it has no 'item_id'\)"):
        list(read_trajectories(tmp_path / "a.jsonl"))
    (tmp_path / "b.json").write_text(json.dumps([{"item_id": "maze_0", "conversations": [1]}]))
    with pytest.raises(ValueError, match="b.json: record 1 is not an AgentTraj trajectory"):
        list(read_trajectories(tmp_path / "b.json"))
    # a loss that is not a boolean trained in one reader and not in the other ("false" is truthy)
    turns = [{"from": "human", "value": "x"}, {"from": "gpt", "value": "a", "loss": "false"}]
    (tmp_path / "d.jsonl").write_text(json.dumps({"item_id": "maze_0", "conversations": turns}) + "\n")
    with pytest.raises(ValueError, match=r"line 1 is not an AgentTraj trajectory \(a turn's loss is true, false or null, not 'false'\)"):
        list(read_trajectories(tmp_path / "d.jsonl"))
    with pytest.raises(ValueError, match="a turn's loss is true, false or null"):
        load_trajectory_dataset(tmp_path / "d.jsonl")
    (tmp_path / "c.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match="no trajectories in .*c.jsonl"):
        load_trajectory_dataset(tmp_path / "c.jsonl")
    # "false" counted as a success (--successes-only kept it)
    (tmp_path / "e.jsonl").write_text(json.dumps({"item_id": "maze_0", "conversations": [], "success": "false"}) + "\n")
    with pytest.raises(ValueError, match=r"line 1 is not an AgentTraj trajectory \(success is true or false, not 'false'\)"):
        list(read_trajectories(tmp_path / "e.jsonl"))
    # a line's place is its line (a cut line before it made "record 3" of line 4), a list no object, an
    # empty .json file empty (it was "line 1 is not JSON (Expecting value)")
    good = json.dumps({"item_id": "maze_0", "conversations": []})
    (tmp_path / "f.jsonl").write_text(f'{good}\n{{"item_id": "maze_1", "conv\n{good}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"f.jsonl: line 4 is not an AgentTraj trajectory \(it is a JSON list, not an object\)"):
        list(read_trajectories(tmp_path / "f.jsonl"))
    (tmp_path / "g.json").write_text("")
    with pytest.raises(ValueError, match=r"g.json is empty: a trajectory file is a JSON list"):
        list(read_trajectories(tmp_path / "g.json"))
    # a file of another kind beside good ones was read as JSON lines, every line skipped with a warning
    (tmp_path / "shard.parquet").write_bytes(b"PAR1\x00\x01")
    with pytest.raises(ValueError, match=r"shard.parquet is no .json or .jsonl file of trajectories"):
        load_trajectory_dataset([tmp_path / "shard.parquet", tmp_path / "c.jsonl"])


def test_packing_and_collation():
    examples = [{"input_ids": [1] * n, "labels": [IGNORE_INDEX] + [1] * (n - 1)} for n in (5, 3, 4, 2, 6)]
    packed = pack_examples(examples, max_length=8)
    assert sorted(len(p["input_ids"]) for p in packed) == [4, 8, 8]  # 6+2, 5+3, 4: first-fit decreasing
    assert sum(len(p["input_ids"]) for p in packed) == 20
    for p in packed:
        assert len(p["input_ids"]) <= 8
        assert p["position_ids"][0] == 0 and len(p["position_ids"]) == len(p["input_ids"])
    batch = DataCollator(pad_token_id=0)(packed)
    assert batch["input_ids"].shape == (3, 8) and "position_ids" in batch
    assert (batch["labels"][batch["attention_mask"] == 0] == IGNORE_INDEX).all()
    with pytest.raises(ValueError):
        pack_examples(examples, max_length=4)


def test_a_cut_short_line_is_warned_of_once_per_run(tmp_path, caplog):
    """An eval resumed over a file with a cut-short line reads the file at its start and for its report: the
    same line was warned of twice."""
    from agentenv.data.trajectory import read_jsonl

    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"b": \n{"c": 3}\n')
    with caplog.at_level("WARNING"):
        assert list(read_jsonl(path)) == [{"a": 1}, {"c": 3}]
        assert list(read_jsonl(path)) == [{"a": 1}, {"c": 3}]
    assert caplog.text.count("skipped line 2") == 1


def test_a_dataset_folder_of_another_project_reads_unscored_rows_as_demonstrations(tmp_path):
    """Rows with neither reward nor success (AgentTraj) were all failures from a parquet folder, where the same
    rows as JSON were all successes: BC --successes-only said no successful trajectories."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from agentenv.data.dataset import iter_trajectories

    rows = [{"item_id": f"maze_{i}", "conversations": [{"from": "human", "value": "go"}, {"from": "gpt", "value": "ok"}]}
            for i in range(3)]
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "data" / "train-00000-of-00001.parquet")
    assert [t.success for t in iter_trajectories(tmp_path, unscored_reward=1.0)] == [True] * 3
    assert [t.success for t in iter_trajectories(tmp_path)] == [False] * 3
    pq.write_table(pa.Table.from_pylist([{"id": 1}]), tmp_path / "data" / "train-00000-of-00001.parquet")
    with pytest.raises(ValueError, match=r"train-00000-of-00001.parquet: row 1 is not an AgentTraj trajectory \(it has no 'item_id'\)"):
        list(iter_trajectories(tmp_path))


def test_an_unfinished_dataset_folder_says_so(tmp_path):
    """A collect --out-dataset stopped before it wrote its shards: the folder as --data said 'no trajectories'."""
    (tmp_path / ".collect").mkdir()
    (tmp_path / ".collect" / "trajectories.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"is a dataset folder whose `agentenv collect --out-dataset` has not finished"):
        load_trajectory_dataset(tmp_path)
