"""The schema keywords that would hold the kernel, remade to stop: a schema's regexes run on the
`regex` engine within what is left of one check's time budget, and `uniqueItems` hashes items
instead of comparing every pair.

jsonschema runs `pattern` and `patternProperties` (and `additionalProperties` and
`unevaluatedProperties`, which read the latter) with `re.search`, which nothing stops: the
pattern `^(a|a)+$` on a 26-character key holds the loop for seconds. Its `uniqueItems` compares
items pair by pair when they do not sort (objects): 2,000 small objects took 5 s. Each keyword
here gives jsonschema's verdict and wording (but `uniqueItems`, which names the repeated item);
only its regexes and its comparisons differ.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...text import shorten

CHECK_SECONDS = 1.0
"""Seconds one check of a call's arguments may take, its regexes included (a check of sane
arguments takes milliseconds); past them it stops, and the model reads why."""

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "schema_check_deadline", default=None
)


class SchemaCheckFailed(Exception):
    """The arguments could not be checked against the tool's schema; the message says why."""


@contextmanager
def time_budget(seconds: float = CHECK_SECONDS) -> Iterator[None]:
    """Every keyword and regex run inside shares one budget of `seconds`."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left(pattern: str = "", text: str = "") -> float:
    """What is left of the budget (a whole one outside `time_budget`); a SchemaCheckFailed
    when nothing is, naming the pattern that was running, if one was."""
    deadline = _deadline.get()
    if deadline is None:
        return CHECK_SECONDS
    left = deadline - time.monotonic()
    if left <= 0:
        raise _out_of_time(pattern, text)
    return left


def search(pattern: str, text: str) -> bool:
    """`re.search(pattern, text)` as jsonschema asks it, on `regex`, within the budget."""
    try:
        return _compiled(pattern).search(text, timeout=seconds_left(pattern, text)) is not None
    except TimeoutError:
        raise _out_of_time(pattern, text) from None


def pattern(validator: Any, patrn: str, instance: Any, schema: Mapping[str, Any]) -> Any:
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield _error(f"{instance!r} does not match {patrn!r}")


def pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        for key, value in instance.items():
            if search(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Mapping[str, Any]
) -> Any:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield _error(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            unexpected = _extras(sorted(extras), "unexpected")
            yield _error(f"Additional properties are not allowed ({unexpected})")


def unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Any:
    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema))
    invalid = [
        key
        for key in instance
        if key not in evaluated
        and next(iter(validator.descend(instance[key], unevaluated, path=key)), None) is not None
    ]
    if invalid and unevaluated is False:
        unexpected = _extras(sorted(invalid), "unexpected")
        yield _error(f"Unevaluated properties are not allowed ({unexpected})")
    elif invalid:
        wrong = _extras(invalid, "unevaluated and invalid")
        yield _error(f"Unevaluated properties are not valid under the given schema ({wrong})")


def unique_items(validator: Any, unique: Any, instance: Any, schema: Mapping[str, Any]) -> Any:
    """jsonschema's verdict, and a message that names the repeated item (jsonschema's shows the
    whole array first, which a long one cuts before the reason)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            shown = shorten(repr(instance), 80)
            yield _error(f"has non-unique elements: {shorten(repr(item), 80)} repeats in {shown}")
            return
        seen.add(key)


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[str]:
    """The keys neither `properties` nor a pattern of `patternProperties` takes."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    for key in instance:
        if key not in properties and not any(search(p, key) for p in patterns):
            yield key


def _evaluated_keys(validator: Any, instance: Any, schema: Any) -> Iterable[str]:  # noqa: C901, PLR0912 - one branch per applicator keyword of JSON Schema
    """The keys some keyword of `schema` evaluated (jsonschema's
    `find_evaluated_property_keys_by_schema`, its regexes run by `search`)."""
    if validator.is_type(schema, "boolean"):
        return
    for keyword in ("$ref", "$dynamicRef"):
        if (ref := schema.get(keyword)) is not None:
            found = validator._resolver.lookup(ref)
            scoped = validator.evolve(schema=found.contents, _resolver=found.resolver)
            yield from _evaluated_keys(scoped, instance, found.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        yield from properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            yield from (k for k, v in instance.items() if _valid(validator, v, subschema))
    for patrn in schema.get("patternProperties", {}):
        yield from (key for key in instance if search(patrn, key))
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            yield from _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator, instance, subschema):
                yield from _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            yield from _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                yield from _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            yield from _evaluated_keys(validator, instance, schema["else"])


def _valid(validator: Any, instance: Any, subschema: Any) -> bool:
    return next(iter(validator.descend(instance, subschema)), None) is None


def _canonical(value: Any) -> Any:
    """A hashable stand-in, equal for values JSON Schema calls equal: `1` and `1.0` are,
    `true` and `1` are not, nor are an object and the list of its pairs."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("other", repr(value))


def _extras(extras: list[str], what: str) -> str:
    """`'a', 'b' were unexpected`: jsonschema's wording for extra keys."""
    joined = ", ".join(repr(extra) for extra in extras)
    return f"{joined} {'was' if len(extras) == 1 else 'were'} {what}"


def _out_of_time(pattern: str, text: str) -> SchemaCheckFailed:
    took = f"checking the arguments against the tool's schema took over {CHECK_SECONDS:g} s"
    if pattern:
        why = (
            f"{took}: its pattern {shorten(pattern, 120)!r} backtracks without end on "
            f"{shorten(text, 60)!r}"
        )
    else:
        why = f"{took} (the schema asks for more work than a check may do)"
    return SchemaCheckFailed(
        f"{why}; the tool did not run. Send a shorter or simpler value, or use another tool."
    )


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    """A schema's pattern on the `regex` engine, which reads Python's syntax (version 0)."""
    import regex  # 10 ms; only a schema's pattern needs it

    try:
        return regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError, MemoryError) as exc:
        raise SchemaCheckFailed(
            f"the tool's schema has the pattern {shorten(pattern, 120)!r}, which the checker "
            f"cannot compile ({exc}); the tool did not run. Use another tool."
        ) from None


def _error(message: str) -> Any:
    from jsonschema.exceptions import ValidationError  # loaded by then: a validator runs

    return ValidationError(message)
