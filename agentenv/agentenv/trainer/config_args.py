"""Command-line flags generated from a config dataclass, so the CLI and the Python API never drift apart.

Every field becomes ``--field-name`` (booleans get ``--x / --no-x``, lists take several values); a
``--config FILE.json`` supplies values first and explicit flags override them.  ``--help`` shows the flags
in the sections the config classes name (``sections``: title -> field names), so experimental knobs sit
apart from the settings every run sets.  The rule for resuming a run with changed settings is here too, one
for training runs and iterative run folders alike (:data:`RESUMABLE_SETTINGS`).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
#: what ``typing.get_origin`` gives for ``Optional[X]`` / ``X | None``
UNION_TYPES = (typing.Union, types.UnionType)

#: settings a run may change when it is resumed: where and how it runs, saves and logs, not what it
#: computes.  A training run's checkpoints and an iterative run's folder follow this one list.
RESUMABLE_SETTINGS = frozenset(
    {
        "output_dir", "resume", "save_every", "save_total_limit", "delete_checkpoints_when_done", "log_every",
        "cpu", "attn_implementation", "deepspeed", "gradient_checkpointing", "mixed_precision", "num_proc",
        "iterations", "train_launcher", "concurrency", "agent_batch_size", "urls", "local", "report_to",
    }
)  # fmt: skip


#: settings that name files or folders: compared as the paths they resolve to, and written down resolved by
#: the command line, so that a run resumes from another working folder
PATH_SETTINGS = frozenset({"model", "bc_model", "data", "expert_data", "pairs", "deepspeed"})


def changed_settings(
    saved: dict[str, Any], now: dict[str, Any], defaults: dict[str, Any] | None = None,
    resumable: frozenset[str] | tuple[str, ...] = RESUMABLE_SETTINGS,
) -> list[str]:
    """The settings of ``now`` that differ from a saved run's and would change what it computes; a setting
    the saved run does not have (added since) counts as its value in ``defaults``."""
    defaults = defaults or {}
    return sorted(
        k for k in now
        if k not in resumable and _comparable(k, saved.get(k, defaults.get(k))) != _comparable(k, now[k])
    )


def _comparable(name: str, value: Any) -> Any:
    """A setting as compared across runs: a local path as the one it resolves to (a run started before paths
    were written resolved compares from where it is resumed), a folder named with its trailing slash (a
    shell's completion) the same folder."""
    if isinstance(value, list):
        return [_comparable(name, v) for v in value]
    if name in PATH_SETTINGS:
        value = _local_path(value)
    if isinstance(value, str) and len(value) > 1:
        return value.rstrip("/") or value
    return value


def resolved_paths(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each path setting that names a local file or folder made absolute (a Hub model id
    stays as it is)."""
    def resolve(value: Any) -> Any:
        return [_local_path(v) for v in value] if isinstance(value, list) else _local_path(value)

    return {k: resolve(v) if k in PATH_SETTINGS else v for k, v in values.items()}


def _local_path(value: Any) -> Any:
    """A string naming a local file or folder, made absolute; anything else as it is."""
    if isinstance(value, str) and value and Path(value).expanduser().exists():
        return str(Path(value).expanduser().resolve())
    return value


def sections(cls: type) -> dict[str, list[str]]:
    """Section title -> the fields of ``cls`` in it, in the order the config classes name them (base
    classes first); fields no class places go to "other settings"."""
    titled: dict[str, list[str]] = {}
    placed: set[str] = set()
    names = [f.name for f in dataclasses.fields(cls)]
    for klass in reversed(cls.__mro__):
        for title, members in klass.__dict__.get("sections", {}).items():
            for name in members:
                if name in names and name not in placed:
                    titled.setdefault(title, []).append(name)
                    placed.add(name)
    rest = [n for n in names if n not in placed]
    return titled | ({"other settings": rest} if rest else {})


def _field_doc(cls: type, name: str) -> str:
    """The ``#:`` comment above a field in the class source, used as its help text."""
    for klass in cls.__mro__:
        doc = _field_docs(klass).get(name)
        if doc:
            return doc
    return ""


@functools.cache
def _field_docs(klass: type) -> dict[str, str]:
    """Every ``#:``-commented field of one class (its source is read once: the CLI builds every command's
    flags at start-up)."""
    import inspect

    try:
        lines = inspect.getsource(klass).splitlines()
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    comment: list[str] = []
    for line in (raw.strip() for raw in lines):
        if line.startswith("#:"):
            comment.append(line[2:].strip())
            continue
        name = line.split(":", 1)[0]
        if comment and ":" in line and name.isidentifier() and name not in docs:
            docs[name] = " ".join(comment)
        comment = []
    return docs


def field_defaults(config_class: type) -> dict[str, Any]:
    """The default value of every field of a dataclass that has one (the others are required)."""
    out = {}
    for f in dataclasses.fields(config_class):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def add_dataclass_args(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add ``--config`` and one flag per field of ``cls``, in its sections."""
    parser.add_argument("--config", help="a JSON file of settings (flags override it)")
    hints = typing.get_type_hints(cls)
    defaults = field_defaults(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    for title, names in sections(cls).items():
        group = parser.add_argument_group(title)
        for name in names:
            _add_field(group, cls, by_name[name], hints[name], defaults)


def required_settings(cls: type) -> frozenset[str]:
    """Fields a run cannot do without although the Python API gives them an empty default (``data``,
    ``envs``): the config classes name them in ``required``, and the command line marks and asks for them."""
    return frozenset(name for klass in cls.__mro__ for name in klass.__dict__.get("required", ()))


def _flag_names(cls: type) -> dict[str, str]:
    """Field -> flag name where a config class renames one (``envs`` is ``--env``, as ``eval`` spells it)."""
    names: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        names.update(klass.__dict__.get("flag_names", {}))
    return names


def _add_field(parser: Any, cls: type, f: dataclasses.Field, kind: Any, defaults: dict[str, Any]) -> None:
    from agentenv.cli import ListOption

    flag = "--" + f.name.replace("_", "-")
    renamed = _flag_names(cls).get(f.name)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    default = defaults.get(f.name)
    help_text = _field_doc(cls, f.name).replace("``", "`")  # the comments' reST literals, as a terminal shows code
    if default not in (None, "", []) or kind is bool:
        help_text += f" (default: {default})"
    if f.name not in defaults or f.name in required_settings(cls):
        help_text += " (required)"
    common = {"dest": f.name, "default": argparse.SUPPRESS, "help": help_text.strip()}
    if renamed:  # the canonical name first; the field's own name still works, with a deprecation note
        parser.add_argument("--" + renamed, flag, action=ListOption, old_flag=flag, metavar=renamed.upper(), **common)
    elif kind is bool:
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
    elif origin in (list, tuple):
        parser.add_argument(flag, nargs="+", type=_parser_of(args[0] if args else str), **common)
    elif origin in UNION_TYPES:
        inner = next(a for a in args if a is not type(None))
        parser.add_argument(flag, type=_parser_of(inner), **common)
    else:
        parser.add_argument(flag, type=_parser_of(kind), **common)


def _parser_of(kind: Any) -> Any:
    return finite_float if kind is float else kind


def finite_float(text: str) -> float:
    """A float flag's value: ``nan`` and ``inf`` are refused (a NaN beta trained to NaN weights, exit 0)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def dataclass_from_args(cls: type[T], args: argparse.Namespace) -> T:
    """Build ``cls`` from ``--config`` (if given) overlaid with the explicit flags."""
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        values.update(_read_config_file(Path(args.config), cls))
    names = {f.name for f in dataclasses.fields(cls)}
    values.update({k: v for k, v in vars(args).items() if k in names})
    defaults = field_defaults(cls)
    required = required_settings(cls)
    missing = [
        f.name for f in dataclasses.fields(cls)
        if (f.name not in values and f.name not in defaults) or (f.name in required and not values.get(f.name))
    ]
    if missing:
        flags = {**{m: m.replace("_", "-") for m in missing}, **_flag_names(cls)}
        raise SystemExit("error: missing settings: " + ", ".join("--" + flags[m] for m in missing))
    try:
        return cls(**resolved_paths(values))
    except ValueError as e:  # a setting no run can use (TrainConfig checks them)
        raise SystemExit(f"error: invalid settings: {e}") from None


def _read_config_file(path: Path, cls: type) -> dict[str, Any]:
    """The settings of a ``--config`` file, each checked against its field's type (argparse checks flags;
    a file's values would otherwise fail deep inside a run, e.g. ``'<' not supported``)."""
    try:
        values = json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(f"error: no such config file: {path}") from None
    except OSError as exc:  # a folder, no permission
        raise SystemExit(f"error: cannot read config file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise SystemExit(f"error: {path} is not JSON: {exc}") from None
    if not isinstance(values, dict):
        raise SystemExit(f"error: {path} must hold a JSON object of settings, not a {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
    if unknown:
        raise SystemExit(f"error: {path}: unknown settings {sorted(unknown)}")
    for name, value in values.items():
        if not _is_a(value, hints[name]):
            raise SystemExit(f"error: {path}: {name} must be {_type_name(hints[name])}, not {value!r}")
    return values


def _is_a(value: Any, kind: Any) -> bool:
    """Whether a JSON value fits a field type (an int fits a float; types this cannot read pass)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in UNION_TYPES:
        return any(_is_a(value, a) for a in args)
    if origin in (list, tuple):
        return isinstance(value, list) and (not args or all(_is_a(v, args[0]) for v in value))
    if kind is type(None):
        return value is None
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        try:
            return math.isfinite(value)
        except OverflowError:  # an int beyond any float
            return False
    if kind is str:
        return isinstance(value, str)
    return True


def _type_name(kind: Any) -> str:
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (list, tuple):
        return f"a list of {_type_name(args[0]).removeprefix('a ')}s" if args else "a list"
    if args:
        return " or ".join(_type_name(a) for a in args)
    return {bool: "true or false", int: "a whole number", float: "a finite number", str: "a string",
            type(None): "null"}.get(kind, getattr(kind, "__name__", str(kind)))
