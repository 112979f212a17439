"""The refusals of the proxy's request checks, in OpenAI's own error shape: pure, no I/O.

Every refusal is an `ApiError` carrying OpenAI's status, type, `param` path and code, so a client
written against OpenAI shows our errors as it shows theirs. The helpers here build the common ones
(a missing field, a wrong type, a wrong value) and put a client's JSON values into words, so the
request checks and the message checks that both raise them word them alike.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

_KINDS: tuple[tuple[type, str], ...] = (
    *((type(None), "null"), (bool, "a boolean"), (int, "an integer"), (float, "a number")),
    *((str, "a string"), (list, "an array"), (Mapping, "an object")),
)
"""JSON types in words, for messages; bool before int, which it subclasses."""


class ApiError(Exception):
    """A request the proxy refuses (or a failure it reports), sent as OpenAI's error body."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        error = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        return {"error": error}


def object_field(obj: Mapping[str, Any], key: str, at: str) -> Mapping[str, Any]:
    """The object under `key` of `obj` (found at `at`), which must be there."""
    value = obj.get(key)
    if value is None:
        raise missing(f"{at}.{key}", f"{at} needs a {key!r} object.")
    if not isinstance(value, Mapping):
        raise invalid_type(f"{at}.{key}", "an object", value)
    return value


def missing(param: str, hint: str) -> ApiError:
    """A required field left out (or null); `hint` says what to send."""
    message = f"Missing required parameter: '{param}'; {hint}"
    return ApiError(message, param=param, code="missing_required_parameter")


def invalid_type(param: str, expected: str, value: Any, hint: str = "") -> ApiError:
    """A field of the wrong JSON type; `hint`, if given, says what to do."""
    message = f"Invalid type for '{param}': expected {expected}, but got {kind(value)}."
    return ApiError(
        f"{message[:-1]}; {hint}" if hint else message, param=param, code="invalid_type"
    )


def invalid_value(param: str, value: Any, expected: str) -> ApiError:
    """A field of the right type but a value not taken; `expected` says which are."""
    message = f"Invalid value for '{param}': {shown(value)}; expected {expected}."
    return ApiError(message, param=param, code="invalid_value")


def kind(value: Any) -> str:
    """A JSON value's type in words, for messages."""
    if value == "":
        return "an empty string"
    return next((name for type_, name in _KINDS if isinstance(value, type_)), type(value).__name__)


def shown(value: Any) -> str:
    """A value as the client wrote it: a string quoted, anything else as JSON."""
    return repr(value) if isinstance(value, str) else json.dumps(value, default=repr)[:80]


def listed(names: Collection[str], limit: int = 5) -> str:
    """Names for a message: the first `limit` quoted, then how many more."""
    quoted = [repr(name) for name in list(names)[:limit]]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(quoted) + more) if quoted else "none"
