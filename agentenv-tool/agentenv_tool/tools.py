"""Tools: a backend method marked with :func:`tool`, its arguments a pydantic model built from its signature.

A backend class (one per env: the weather service, the film database ...) marks the methods an agent may call.
:class:`Toolbox` collects them, validates a call's JSON arguments against the method's signature (missing,
unknown and ill-typed arguments are named in the error, with the tool's whole signature), and runs it.  A
tool refuses a well-typed but wrong request (a date out of range, an unknown id) by raising :class:`ToolError`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Annotated, Any, TypeVar, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model

F = TypeVar("F", bound=Callable[..., Any])


def _id_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


#: an id argument: a string, or the same id written as a number (the original services answered ids as numbers
#: in places, TMDB's search for one, and agents copy them so)
Id = Annotated[str, BeforeValidator(_id_text), Field(max_length=40)]

#: a date argument, read with :func:`parse_day`
Day = Annotated[str, Field(max_length=40, description="YYYY-MM-DD")]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(value: str, name: str) -> date:
    """A date argument, written YYYY-MM-DD only (Python would also read ``20220221`` and ``2016-W03-1``)."""
    text = value.strip()
    if _DAY.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise ToolError(f"Error: {name} must be a date written YYYY-MM-DD, not {value[:20]!r}.")


class ToolError(Exception):
    """A tool's refusal of a request; the message is the observation."""


class InvalidCall(ValueError):
    """A call of an unknown tool, or with arguments that do not fit the tool's schema."""


def tool(description: str, returns: str = "") -> Callable[[F], F]:
    """Mark a backend method as a tool an agent may call (``description`` and ``returns`` go in the prompt)."""

    def mark(method: F) -> F:
        method.__tool__ = (description, returns)  # type: ignore[attr-defined]
        return method

    return mark


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what it does, its arguments' model and what it answers."""

    name: str
    description: str
    returns: str
    arguments: type[BaseModel]

    def signature(self) -> str:
        """``name(arg: type, optional?: type)`` from the arguments' JSON schema."""
        schema = self.arguments.model_json_schema()
        required = set(schema.get("required", []))
        parts = []
        for arg, spec in schema.get("properties", {}).items():
            parts.append(f"{arg}{'' if arg in required else '?'}: {_type_label(spec)}")
        return f"{self.name}({', '.join(parts)})"

    def help(self) -> str:
        """One line of the instruction's tool list."""
        returns = f" Returns {self.returns}" if self.returns else ""
        return f"- {self.signature()}: {self.description}{returns}"


def _type_label(spec: dict[str, Any]) -> str:
    if "label" in spec:  # a label the tool gave its argument (Field(json_schema_extra={"label": ...}))
        return spec["label"]
    if "enum" in spec:
        return " | ".join(repr(v) for v in spec["enum"])
    if "const" in spec:
        return repr(spec["const"])
    if "anyOf" in spec:
        return " | ".join(_type_label(s) for s in spec["anyOf"] if s.get("type") != "null")
    kind = spec.get("type", "any")
    if kind == "array":
        return f"array of {_type_label(spec.get('items', {}))}"
    return kind


class Toolbox:
    """The tools a backend class offers, by name, in the order the class defines them."""

    def __init__(self, backend: type) -> None:
        self.tools: dict[str, Tool] = {}
        for cls in reversed(backend.__mro__):
            for name, method in vars(cls).items():
                marked = getattr(method, "__tool__", None)
                if marked is not None:
                    self.tools.pop(name, None)  # an override keeps the subclass's place
                    self.tools[name] = Tool(name, marked[0], marked[1], _arguments_model(name, method))

    @staticmethod
    @cache
    def of(backend: type) -> Toolbox:
        """The toolbox of a backend class, built once (each tool's arguments model is built on creation)."""
        return Toolbox(backend)

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def describe(self) -> str:
        """The tool list of the instruction."""
        return "\n".join(t.help() for t in self.tools.values())

    def validate(self, name: str, raw: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        """The tool and its validated keyword arguments, or :class:`InvalidCall` naming what is valid."""
        found = self.tools.get(name)
        if found is None:
            raise InvalidCall(f"Invalid action: there is no tool {name!r}. The tools are: {', '.join(self.names)}.")
        try:
            parsed = found.arguments.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(_problems(exc.errors(include_url=False)))
            raise InvalidCall(f"Invalid input for {name}: {problems}. Call it as {found.signature()}.") from None
        return found, {k: getattr(parsed, k) for k in type(parsed).model_fields}

    def call(self, backend: Any, name: str, raw: dict[str, Any]) -> Any:
        """Validate and run a call on ``backend``; raises :class:`InvalidCall` or :class:`ToolError`."""
        found, kwargs = self.validate(name, raw)
        return getattr(backend, found.name)(**kwargs)


def _arguments_model(name: str, method: Callable[..., Any]) -> type[BaseModel]:
    hints = get_type_hints(method, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(method).parameters.values())[1:]:  # past self
        # Field() rather than ...: pydantic before 2.7 took ... beside an Annotated Field for a default
        default = Field() if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)
    return create_model(f"{name}_arguments", __base__=_Arguments, **fields)


def _problems(errors: list[dict[str, Any]]) -> list[str]:
    """One message per argument (a union's failed alternatives say one thing: the type is wrong)."""
    by_argument: dict[str, list[dict[str, Any]]] = {}
    for error in errors:
        by_argument.setdefault(str(error["loc"][0]) if error["loc"] else "input", []).append(error)
    said = []
    for argument, found in by_argument.items():
        refused = next((e for e in found if e["type"] == "value_error"), None)  # the right type, a wrong value
        if refused is not None:
            said.append(f"argument {argument!r}: {refused['msg'].removeprefix('Value error, ')} "
                        f"(got {_shown(refused.get('input'))})")
        elif len(found) > 1 and all(e["type"] not in ("missing", "extra_forbidden") for e in found):
            said.append(f"argument {argument!r} has the wrong type (got {_shown(found[0].get('input'))})")
        else:
            said.extend(_problem(e) for e in found)
    return said


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _problem(error: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "input"
    if error["type"] == "missing":
        return f"missing argument {where!r}"
    if error["type"] == "extra_forbidden":
        return f"unknown argument {where!r}"
    return f"argument {where!r} {error['msg'][:1].lower()}{error['msg'][1:]} (got {_shown(error.get('input'))})"
