"""The arguments of one tool call, read and checked, with every problem put in plain words.

The model sends a JSON object (as text, or already parsed); whatever is wrong with it comes back
as a sentence that names the argument and shows what a valid call looks like, so the model's next
call can be right.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...messages import arguments_problem
from ...text import shorten

if TYPE_CHECKING:
    import jsonschema


def read_arguments(name: str, schema: Mapping[str, Any], arguments: Any) -> dict[str, Any] | str:
    """Accept a dict, JSON text of one, or nothing; anything else is a message for the model."""
    if arguments is None:
        return {}
    if isinstance(arguments, str) and arguments.strip() == "":
        return {}
    if isinstance(arguments, str):
        problem = arguments_problem(arguments)
        if problem is not None:
            return f"{name}: {problem}"
        try:
            arguments = json.loads(arguments)
        except (RecursionError, MemoryError):
            return f"{name}: arguments nested too deep; send flat JSON arguments"
        except json.JSONDecodeError as exc:
            return (
                f"{name}: the arguments were not valid JSON ({exc.msg}); they began: "
                f"{shorten(arguments, 200)!r}. Send one JSON object with: {expected(schema)}"
            )
    if not isinstance(arguments, dict):
        return (
            f"{name}: the arguments must be a JSON object, not {json_type(arguments)}; "
            f"send one JSON object with: {expected(schema)}"
        )
    return arguments


def schema_problems(
    validator: jsonschema.protocols.Validator, schema: Mapping[str, Any], args: dict[str, Any]
) -> list[str]:
    """One plain sentence per problem, top-level missing and unexpected arguments first."""
    properties = schema.get("properties", {})
    problems = [
        f"missing required argument {key!r}"
        for key in schema.get("required", ())
        if key not in args
    ]
    if schema.get("additionalProperties") is False:
        problems += [
            f"unexpected argument {key!r} (known arguments: {', '.join(properties) or 'none'})"
            for key in args
            if key not in properties
        ]
    for error in sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.path))):
        if not error.path and error.validator in ("required", "additionalProperties"):
            continue
        where = "argument " + repr(".".join(map(str, error.path))) if error.path else "arguments"
        if error.validator == "type":
            wanted = error.validator_value
            wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
            value = shorten(json.dumps(error.instance, default=str), 60)
            problems.append(f"{where} must be {wanted}, not {json_type(error.instance)} {value}")
        else:
            problems.append(f"{where}: {shorten(error.message, 200)}")
    return problems


def expected(schema: Mapping[str, Any]) -> str:
    """'path (string, required), start_line (integer or null)' — what a valid call looks like."""
    required = set(schema.get("required", ()))
    parts = []
    for key, sub in schema.get("properties", {}).items():
        kind = sub.get("type", "any") if isinstance(sub, Mapping) else "any"
        kind = " or ".join(kind) if isinstance(kind, list) else kind
        parts.append(f"{key} ({kind}{', required' if key in required else ''})")
    return ", ".join(parts) or "no arguments ({})"


def json_type(value: Any) -> str:
    """'an integer', 'a string', 'null': a value's JSON type as a sentence names it."""
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    names = {str: "a string", list: "an array", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)
