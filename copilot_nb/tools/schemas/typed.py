"""JSON schemas from typed Python functions: what `@tool` shows the model about its arguments.

The schema comes from the signature's type hints; the description from the docstring's first
paragraph, and per-argument descriptions from its `Args:` section (Google style).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union

from ...errors import ConfigError

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|Attributes"
    r"|See Also|Warnings?|Todo):\s*$"
)
_ARG_SECTIONS = ("Args", "Arguments", "Parameters", "Params")
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def function_schema(func: Callable[..., Any], name: str) -> tuple[str, dict[str, Any]]:
    """(description, JSON schema of the arguments), or ConfigError naming what to fix."""
    where = f"tool {name!r}"
    try:
        signature = inspect.signature(func)
        target: Any = func
        while isinstance(target, functools.partial):
            target = target.func
        if not (inspect.isfunction(target) or inspect.ismethod(target)):
            target = target.__call__  # a callable object
        hints = typing.get_type_hints(target, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ConfigError(f"{where}: cannot read its signature or type hints: {exc}") from exc
    summary, arg_docs = _parse_docstring(inspect.getdoc(target) or inspect.getdoc(func) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ConfigError(
                f"{where}: parameter {param.name!r} is {param.kind.description}; tools are called "
                "with named arguments only, so declare each argument by name"
            )
        if param.name not in hints:
            raise ConfigError(
                f"{where}: parameter {param.name!r} has no type annotation; annotate it "
                f"(e.g. `{param.name}: str`) so the model knows what to send"
            )
        schema = _type_schema(hints[param.name], f"{where}, parameter {param.name!r}")
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif _is_json(param.default):
            schema["default"] = param.default
        properties[param.name] = schema
    unknown = [key for key in arg_docs if key not in properties]
    if unknown:
        raise ConfigError(
            f"{where}: the docstring describes {', '.join(map(repr, unknown))}, which is not a "
            "parameter; fix the name in its Args section"
        )
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return summary, parameters


def offered_schema(parameters: Mapping[str, Any]) -> Mapping[str, Any]:
    """`parameters` as the model is shown them: an argument that is optional with a null default
    typed without "null" and with no default, and no top-level `additionalProperties: false`.

    Every listed tool's schema is sent with every request, and these parts were about a sixth of
    the built-in tools' tokens while telling the model nothing it acts on: leaving an argument
    out already means its default. Calls are still checked against the whole schema, so an
    explicit null is accepted and an unknown argument is an error the model reads."""
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return parameters
    required = set(parameters.get("required") or ())
    shown = {
        name: _optional_shown(schema) if name not in required else schema
        for name, schema in properties.items()
    }
    offered = {**parameters, "properties": shown}
    if offered.get("additionalProperties") is False:
        del offered["additionalProperties"]
    return offered


def _optional_shown(schema: Any) -> Any:
    """An optional argument's schema without its null default: `{"type": ["string", "null"],
    "default": null}` shown as `{"type": "string"}`."""
    if not isinstance(schema, Mapping) or "default" not in schema or schema["default"] is not None:
        return schema
    kinds, options = schema.get("type"), schema.get("anyOf")
    shown = {key: value for key, value in schema.items() if key != "default"}
    if isinstance(kinds, list) and "null" in kinds:
        rest = [kind for kind in kinds if kind != "null"]
        if rest:
            shown["type"] = rest[0] if len(rest) == 1 else rest
    elif isinstance(options, list) and {"type": "null"} in options:
        rest = [option for option in options if option != {"type": "null"}]
        if len(rest) == 1 and isinstance(rest[0], Mapping):
            del shown["anyOf"]
            shown = {**rest[0], **shown}
        elif rest:
            shown["anyOf"] = rest
    return shown


def _type_schema(hint: Any, where: str) -> dict[str, Any]:
    """The JSON schema of one Python type hint; unsupported types are a ConfigError."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        schema = _type_schema(args[0], where)
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": notes[0]} if notes else schema
    if hint is Any:
        return {}
    if hint is None or hint in _SIMPLE:
        return {"type": _SIMPLE[type(None) if hint is None else hint]}
    if origin is Literal:
        kinds = {_SIMPLE.get(type(v)) for v in args}
        if None in kinds:
            raise ConfigError(f"{where}: Literal values must be str, int, float, bool or None")
        return (
            {"type": kinds.pop(), "enum": list(args)} if len(kinds) == 1 else {"enum": list(args)}
        )
    if origin in (Union, types.UnionType):
        subs = [_type_schema(a, where) for a in args]
        if all(list(s) == ["type"] and isinstance(s["type"], str) for s in subs):
            return {"type": [s["type"] for s in subs]}
        return {"anyOf": subs}
    if hint is list or origin in (list, collections.abc.Sequence):
        return {"type": "array", **({"items": _type_schema(args[0], where)} if args else {})}
    if hint is dict or origin in (dict, collections.abc.Mapping):
        if args and args[0] is not str:
            raise ConfigError(f"{where}: dict keys must be str, as JSON object keys are")
        value = _type_schema(args[1], where) if args else {}
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    raise ConfigError(
        f"{where}: type {hint!r} is not supported; use str, int, float, bool, list[...], "
        "dict[str, ...], Literal[...], Any or X | None"
    )


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and the per-argument text of a Google-style `Args:` section."""
    lines = doc.splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    arg_docs: dict[str, str] = {}
    in_args, current, base = False, None, None
    for line in lines[len(summary) :]:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            continue
        if indent == 0:
            header = _SECTION.match(stripped)
            in_args, current, base = bool(header and header.group(1) in _ARG_SECTIONS), None, None
            continue
        if not in_args:
            continue
        match = _ARG_LINE.match(stripped)
        if match and (base is None or indent <= base):
            base, current = indent, match.group(1)
            arg_docs[current] = match.group(2).strip()
        elif current is not None:
            arg_docs[current] = f"{arg_docs[current]} {stripped}".strip()
    return " ".join(summary), arg_docs


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
