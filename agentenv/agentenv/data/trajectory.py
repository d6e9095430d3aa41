"""The AgentTraj trajectory format (DESIGN.md §6) and its JSON / JSONL files.

One trajectory is ``{"item_id": "<env>_<data_idx>", "conversations": [{"from", "loss", "value"}, ...]}``
plus our extra fields (``reward``, ``success``, ``env``, ``split``, ``source``, ``meta``).  Files
released with AgentGym (AgentTraj, AgentTraj-L) load unchanged: missing extras take defaults.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
_warned_lines: set[tuple[str, int]] = set()  # a cut-short line is warned of once, however often a run reads it

ACKNOWLEDGEMENT = "Ok."


@dataclass
class Turn:
    """One message: ``from`` is ``human`` or ``gpt``; ``loss`` says whether training puts loss on it
    (``None`` means the default: gpt turns yes, human turns no).  AgentGym's files flag gpt turns only; a
    flagged human turn trains too (a world-model log that learns the observations, as
    agentenv.data.walks's dynamics walks do)."""

    role: str
    value: str
    loss: bool | None = None

    def trains(self) -> bool:
        return self.loss if self.loss is not None else self.role == "gpt"

    def to_json(self) -> dict[str, Any]:
        return {"from": self.role, "loss": self.loss, "value": self.value}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Turn:
        if not isinstance(d["from"], str) or not isinstance(d["value"], str):
            raise ValueError("a turn's from and value are text")
        role = {"user": "human", "assistant": "gpt"}.get(d["from"], d["from"])  # a chat's names read as AgentTraj's
        if role not in ("human", "gpt", "system"):  # another would be left untrained, or fail in the chat template
            raise ValueError(f"a turn's from is human, gpt or system (or user, assistant), not {d['from']!r}")
        loss = d.get("loss")
        if loss is not None and not isinstance(loss, bool):  # "false" would train where False does not
            raise ValueError(f"a turn's loss is true, false or null, not {loss!r}")
        return cls(role=role, value=d["value"], loss=loss)


@dataclass
class Trajectory:
    item_id: str
    conversations: list[Turn]
    reward: float = 0.0
    success: bool = False
    env: str = ""
    split: str = ""
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def data_idx(self) -> int:
        """The task index of ``<env>_<index>``; ``ValueError`` for an item id of another form."""
        env, _, index = self.item_id.rpartition("_")
        if not env:
            raise ValueError(f"item id {self.item_id!r} is not <env>_<index>")
        return int(index)

    @classmethod
    def start(cls, env: str, data_idx: int, instruction: str, **extra: Any) -> Trajectory:
        """A new trajectory holding the env's instruction prompt and the gpt acknowledgement."""
        turns = [Turn("human", instruction, False), Turn("gpt", ACKNOWLEDGEMENT, False)]
        return cls(item_id=f"{env}_{data_idx}", conversations=turns, env=env, **extra)

    def add_observation(self, text: str) -> None:
        self.conversations.append(Turn("human", text, False))

    def add_reply(self, text: str, loss: bool = True) -> None:
        self.conversations.append(Turn("gpt", text, loss))

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["conversations"] = [t.to_json() for t in self.conversations]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], unscored_reward: float = 0.0) -> Trajectory:
        """Read one record.  A record with neither ``reward`` nor ``success`` (AgentGym's released AgentTraj
        files have neither) gets ``unscored_reward``, and counts as a success when that is at least 1."""
        item_id = str(d["item_id"])
        env = d.get("env") or item_id.rsplit("_", 1)[0]
        scored = "reward" in d or "success" in d
        reward = float(d.get("reward", 0.0) or 0.0) if scored else unscored_reward
        meta = d.get("meta") or {}
        if not isinstance(env, str) or not isinstance(meta, dict):
            raise ValueError("env is text and meta an object")
        if scored and not math.isfinite(reward):
            raise ValueError(f"reward {reward} is not a finite number")
        success = d.get("success", False)
        if success not in (True, False, None):  # "false" would count as a success
            raise ValueError(f"success is true or false, not {success!r}")
        return cls(
            item_id=item_id,
            conversations=[Turn.from_json(t) for t in d["conversations"]],
            reward=reward,
            success=bool(success) if scored else unscored_reward >= 1.0,
            env=env,
            split=d.get("split", ""),
            source=d.get("source", ""),
            meta=meta,
        )


def read_trajectories(path: str | os.PathLike, unscored_reward: float = 0.0) -> Iterator[Trajectory]:
    """Read a ``.jsonl`` file (one object a line) or a ``.json`` file (a list), as AgentGym releases them;
    records without a score get ``unscored_reward`` (see :meth:`Trajectory.from_json`).

    A truncated last line (a run killed mid-write, even inside a multi-byte character) is skipped, so
    resuming never fails on it.
    """
    for place, d in numbered_records(path, "trajectory"):
        with naming_the_record(f"{path}: {place}"):
            if not isinstance(d, dict):
                raise ValueError(f"it is a JSON {type(d).__name__}, not an object")
            trajectory = Trajectory.from_json(d, unscored_reward)
        yield trajectory  # outside the with: an error thrown in at the yield is the reader's, not this record's


@contextlib.contextmanager
def naming_the_record(where: str) -> Iterator[None]:
    """Around reading one record as a trajectory: its fault becomes a ``ValueError`` naming ``where`` it is
    (``FILE: line N``, ``SHARD: row N``) and what it lacks."""
    try:
        yield
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        missing = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"{where} is not an AgentTraj trajectory ({missing}); each needs item_id and "
                         "conversations of from/value turns") from None


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "an episodes", "a trajectories"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def check_records_file(path: str | os.PathLike, what: str, of: str = "") -> None:
    """Refuse a file that is no ``.json`` / ``.jsonl`` (a parquet shard or a README was read as JSON lines,
    every line skipped with a warning); ``of`` names its records, ``what`` says what to give instead."""
    if Path(path).suffix not in (".json", ".jsonl"):
        raise ValueError(f"{path} is no .json or .jsonl file{f' of {of}' if of else ''}: {what}")


def read_records(path: str | os.PathLike, kind: str, strict: bool = False) -> Iterator[Any]:
    """The records of a ``.json`` file (one list) or of any other file as JSONL (:func:`read_jsonl`);
    ``kind`` names the file in errors (``trajectory``, ``pairs``)."""
    for _, record in numbered_records(path, kind, strict):
        yield record


def numbered_records(path: str | os.PathLike, kind: str, strict: bool = False) -> Iterator[tuple[str, Any]]:
    """:func:`read_records`, each with its place for a message: ``line 4`` of a JSONL file, ``record 3``
    of a ``.json`` list."""
    path = Path(path)
    if path.suffix != ".json":
        for number, record in _jsonl_lines(path, strict):
            yield f"line {number}", record
        return
    with path.open(encoding="utf-8") as f:
        try:
            records = json.load(f)
        except json.JSONDecodeError as exc:
            if not exc.doc.strip():
                raise ValueError(f"{path} is empty: {_a(kind)} file is a JSON list") from None
            raise ValueError(f"{path}: line {exc.lineno} is not JSON ({exc.msg})") from None
        except RecursionError:
            raise ValueError(f"{path}: JSON nested too deep to read") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text (byte {exc.start}); {_a(kind)} file is JSON") from None
    if not isinstance(records, list):
        raise ValueError(f"{path} is not {_a(kind)} file: it holds a JSON {type(records).__name__}, not a list")
    for number, record in enumerate(records, 1):
        yield f"record {number}", record


def read_jsonl(path: str | os.PathLike, strict: bool = False) -> Iterator[Any]:
    """The objects of a JSONL file written line by line.  A line a kill cut short (even inside a multi-byte
    character) is skipped with a warning; a resumed run leaves it where it was and appends after it.
    ``strict`` (a file written whole, never appended to): such a line is an error."""
    for _, record in _jsonl_lines(path, strict):
        yield record


def _jsonl_lines(path: str | os.PathLike, strict: bool) -> Iterator[tuple[int, Any]]:
    with Path(path).open("rb") as f:  # bytes: a line cut inside a UTF-8 character must not stop the reading
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep for Python
                if strict:
                    if isinstance(exc, json.JSONDecodeError):
                        why = exc.msg
                    else:
                        why = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "nested too deep"
                    raise ValueError(f"{path}: line {number} is not JSON ({why})") from None
                if (str(path), number) not in _warned_lines:
                    _warned_lines.add((str(path), number))
                    log.warning("%s: skipped line %d, which is not JSON (cut short by a kill?)", path, number)
                continue
            if b"\\ud" in line or b"\\uD" in line:  # an escaped UTF-16 surrogate: alone (\ud800) it is no character
                record, lone = _lone_surrogates_replaced(record)
                if lone and (str(path), number) not in _warned_lines:
                    _warned_lines.add((str(path), number))
                    log.warning("%s: line %d holds %d lone UTF-16 surrogate(s), no character: read as U+FFFD",
                                path, number, lone)
            yield number, record


_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins a pair into its character: these stand alone


def _lone_surrogates_replaced(value: Any) -> tuple[Any, int]:
    """``value`` (a JSON value) with every lone surrogate replaced by U+FFFD, and how many there were: such a
    string can be neither tokenised, nor written as UTF-8, nor sent."""
    if isinstance(value, str):
        return _SURROGATE.subn("\ufffd", value)
    if isinstance(value, list):
        items = [_lone_surrogates_replaced(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        items = [(_lone_surrogates_replaced(k), _lone_surrogates_replaced(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in items}, sum(a + b for (_, a), (_, b) in items)
    return value, 0


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically (temp file + rename), so a reader, or a run resumed after a kill, never
    sees half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # this process's own
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write one JSON document atomically (:func:`write_text_atomic`)."""
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def write_jsonl(path: str | os.PathLike, objects: Iterable[Any]) -> int:
    """Write a whole JSONL file atomically (streamed to a temp file, then renamed); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # this process's own
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
        for obj in objects:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def write_trajectories(path: str | os.PathLike, trajectories: Iterable[Trajectory]) -> int:
    """Write a whole JSONL file of trajectories atomically; returns the count."""
    return write_jsonl(path, (t.to_json() for t in trajectories))


def append_trajectory(path: str | os.PathLike, trajectory: Trajectory | dict[str, Any]) -> None:
    """Append one line and flush it to disk, so a killed run loses at most the episode in flight."""
    d = trajectory.to_json() if isinstance(trajectory, Trajectory) else trajectory
    line = json.dumps(d, ensure_ascii=False) + "\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        # a partial line left by a kill would swallow this one: start on a fresh line
        if f.tell() > 0:
            with path.open("rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    f.write("\n")
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def finished_item_ids(path: str | os.PathLike) -> set[str]:
    """The item ids already in a results file (empty when it does not exist)."""
    if not Path(path).exists():
        return set()
    return {t.item_id for t in read_trajectories(path)}


def trajectory_order(t: Trajectory) -> tuple[str, int, str, int]:
    """A sort key of a run's trajectories (env, task index, item id, sample) that does not depend on the order
    in which their episodes finished (their file's order)."""
    try:
        idx = t.data_idx
    except ValueError:
        idx = -1
    return t.env, idx, t.item_id, int(t.meta.get("sample", 0))


def content_key(t: Trajectory) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What makes two trajectories the same item: the item id and the text of every turn (loss flags and
    result fields aside)."""
    return t.item_id, tuple((turn.role, turn.value) for turn in t.conversations)
