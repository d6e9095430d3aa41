"""Command-line flags generated from a config dataclass, so the CLI and the Python API never drift apart.

Every field becomes ``--field-name`` (booleans get ``--x / --no-x``, lists take several values); a
``--config FILE.json`` supplies values first and explicit flags override them.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


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
    """Add ``--config`` and one flag per field of ``cls``."""
    parser.add_argument("--config", help="a JSON file of settings (flags override it)")
    hints = typing.get_type_hints(cls)
    defaults = field_defaults(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        required = f.name not in defaults
        default = defaults.get(f.name)
        help_text = _field_doc(cls, f.name)
        if default not in (None, "", []) or kind is bool:
            help_text += f" (default: {default})"
        if required:
            help_text += " (required)"
        common = {"dest": f.name, "default": argparse.SUPPRESS, "help": help_text.strip()}
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif origin in (list, tuple):
            parser.add_argument(flag, nargs="+", type=args[0] if args else str, **common)
        elif origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            inner = next(a for a in args if a is not type(None))
            parser.add_argument(flag, type=inner, **common)
        else:
            parser.add_argument(flag, type=kind, **common)


def dataclass_from_args(cls: type[T], args: argparse.Namespace) -> T:
    """Build ``cls`` from ``--config`` (if given) overlaid with the explicit flags."""
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        values.update(json.loads(Path(args.config).read_text()))
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(values) - names
    if unknown:
        raise SystemExit(f"{args.config}: unknown settings {sorted(unknown)}")
    values.update({k: v for k, v in vars(args).items() if k in names})
    defaults = field_defaults(cls)
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in values and f.name not in defaults]
    if missing:
        raise SystemExit("missing settings: " + ", ".join("--" + m.replace("_", "-") for m in missing))
    try:
        return cls(**values)
    except ValueError as e:  # a setting no run can use (TrainConfig checks them)
        raise SystemExit(f"invalid settings: {e}") from None
