"""The validator a tool's arguments are checked with: it fetches nothing, and it stops.

A tool's schema is written by whoever wrote the tool (an MCP server's `inputSchema`), so its check
runs on our terms. jsonschema on its own would fetch a `$ref` that names an http(s) URL (and the
fetched document would decide the check), and run the schema's regexes on `re`, which nothing
stops. Here:

- references resolve within the schema only (and among jsonschema's own meta-schemas): the
  registry's retrieve refuses every URI, so any other reference is one that does not resolve,
  an error the model reads;
- every keyword runs on this validator's class, whatever `$schema` a subschema names (jsonschema
  would switch a draft-07 subschema to its own draft-07 class, and to `re`);
- every keyword checks the call's time budget before it runs, and the keywords that run regexes
  or compare many items are remade to stop (`schema_keywords`): a schema whose check grows
  without end, or a pattern that backtracks, stops at `CHECK_SECONDS`, an error the model reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

from ...jsonschema_import import import_jsonschema
from ...text import shorten
from . import keywords
from .keywords import CHECK_SECONDS, SchemaCheckFailed, seconds_left, time_budget

__all__ = ["CHECK_SECONDS", "SchemaCheckFailed", "argument_validator", "bounded_check"]

_REMADE: dict[str, Callable[..., Any]] = {
    "pattern": keywords.pattern,
    "patternProperties": keywords.pattern_properties,
    "additionalProperties": keywords.additional_properties,
    "unevaluatedProperties": keywords.unevaluated_properties,
    "uniqueItems": keywords.unique_items,
}


def argument_validator(parameters: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator of `parameters` that resolves references within it only;
    use it inside `bounded_check`."""
    from referencing import Registry

    local = Registry(retrieve=refuse_to_fetch)  # type: ignore[call-arg]  # attrs' own init
    return _validator_class()(dict(parameters), registry=local)


def refuse_to_fetch(uri: str) -> NoReturn:
    """The registry's retrieve: nothing is fetched on a schema's word."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs' own init


@contextmanager
def bounded_check(seconds: float = CHECK_SECONDS) -> Iterator[None]:
    """A check inside takes at most `seconds`; it ending early for want of time, or on a
    reference that does not resolve, is a SchemaCheckFailed that says why."""
    from referencing.exceptions import PointerToNowhere, Unresolvable

    with time_budget(seconds):
        try:
            yield
        except Unresolvable as exc:
            cause = getattr(exc, "_wrapped", exc)  # jsonschema wraps referencing's errors
            ref = f"#{exc.ref}" if isinstance(cause, PointerToNowhere) else str(exc.ref)
            raise SchemaCheckFailed(
                f"the tool's schema refers to {shorten(ref, 200)!r}, which is not within the "
                "schema: a schema's references are resolved only within the schema, and "
                "nothing is fetched on its word, so the arguments cannot be checked and the "
                "tool did not run. Use another tool, or tell the user that this tool's schema "
                "is incomplete."
            ) from None


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 with every keyword timed and the slow ones remade, made once."""
    jsonschema = import_jsonschema()
    base = jsonschema.Draft202012Validator
    timed = {name: _timed(keyword) for name, keyword in base.VALIDATORS.items()}
    timed.update({name: _timed(keyword) for name, keyword in _REMADE.items()})
    cls = jsonschema.validators.extend(base, validators=timed)
    cls.evolve = _pinned_evolve(cls)
    return cls


def _timed(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """The keyword, run only while the check's budget lasts."""

    @functools.wraps(keyword)
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        seconds_left()
        return keyword(validator, value, instance, schema)

    return run


def _pinned_evolve(cls: Any) -> Callable[..., Any]:
    """`evolve` that keeps `cls` for every subschema and referenced document, where
    jsonschema's picks the class its `$schema` names (whose keywords are not timed)."""
    import attrs

    fields = [(f.name, f.alias) for f in attrs.fields(cls) if f.init]

    def evolve(self: Any, **changes: Any) -> Any:
        changes.setdefault("schema", self.schema)
        for name, alias in fields:
            changes.setdefault(alias, getattr(self, name))
        return cls(**changes)

    return evolve
