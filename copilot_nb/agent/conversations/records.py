"""What a saved line may hold, checked before any reader uses it. Pure.

A saved conversation can come from elsewhere (a cloned repository, a crafted file): a line nested
100,000 deep, `tool_calls` that is text, a token count that is not a number. Each line is parsed
under the one depth limit JSON from outside has (`messages.MAX_ARGUMENT_DEPTH`), then held to the
shape `format.py` writes: every field a reader uses has the type the writer gives it (a time is an
ISO 8601 time, a count a whole number, text is text). A line that fails is skipped with the reason;
a reader never sees it, so listing, resuming, exporting and the panel need no checks of their own.
Fields a reader does not use, and kinds of records it does not know, pass unchecked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...messages import MAX_ARGUMENT_DEPTH, nested_deeper_than

Check = tuple[Callable[[Any], bool], str]
_AT = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?)?")
_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _calls(value: Any) -> bool:
    return _objects(value) and all(_fits(call, _CALL) is None for call in value)


def _usage(value: Any) -> bool:
    return isinstance(value, dict) and _fits(value, _USAGE) is None


TEXT: Check = (_text, "text")
OPTIONAL_TEXT: Check = (lambda v: v is None or isinstance(v, str), "text or null")
AT: Check = (lambda v: isinstance(v, str) and _AT.fullmatch(v) is not None, "an ISO 8601 time")
COUNT: Check = (_count, "a whole number")
NUMBER: Check = (_number, "a number")
OPTIONAL_NUMBER: Check = (lambda v: v is None or _number(v), "a number or null")
FLAG: Check = (lambda v: isinstance(v, bool), "true or false")
OBJECT: Check = (lambda v: isinstance(v, dict), "an object")
TOKENS: Check = (
    lambda v: isinstance(v, dict) and all(_count(n) for n in v.values()),
    "an object of token counts",
)
TEXTS: Check = (_texts, "a list of texts")
OBJECTS: Check = (_objects, "a list of objects")
CALLS: Check = (_calls, "a list of calls (each with text id, name and arguments)")
USAGE: Check = (_usage, "a usage object (whole-number input_tokens and output_tokens)")

_CALL = {"id": TEXT, "name": TEXT, "arguments": TEXT}
_USAGE = {"input_tokens": COUNT, "output_tokens": COUNT, "raw": OBJECT}
_RECORDS: dict[str, dict[str, Check]] = {
    "start": {"at": AT, "notebook": TEXT},
    "resume": {"at": AT},
    "message": {"turn": TEXT, "message": OBJECT},
    "shown": {
        "turn": TEXT,
        "event": TEXT,
        **{name: TEXT for name in ("path", "diff", "notebook", "cell_id", "change")},
        **{name: TEXT for name in ("call_id", "summary")},
    },
    "turn": {
        "turn": TEXT,
        "at": AT,
        "seconds": NUMBER,
        "request": TEXT,
        "model": TEXT,
        "provider": TEXT,
        "requests": COUNT,
        "tokens": TOKENS,
        "estimated": COUNT,
        "premium": OPTIONAL_NUMBER,
        "tools": TEXTS,
        "outcome": TEXT,
        "error": TEXT,
        "kernel": TEXT,
        "names": TEXTS,
        "runs": TEXTS,
    },
}
_MESSAGES: dict[str, dict[str, Check]] = {
    "user": {"content": TEXT},
    "tool": {
        "tool_call_id": TEXT,
        "name": TEXT,
        "content": TEXT,
        "is_error": FLAG,
        "images_left_out": COUNT,
    },
    "assistant": {
        "text": TEXT,
        "tool_calls": CALLS,
        "reasoning": TEXT,
        "reasoning_signature": OPTIONAL_TEXT,
        "reasoning_items": OBJECTS,
        "refusal": TEXT,
        "finish_reason": OPTIONAL_TEXT,
        "usage": USAGE,
    },
}


def parse_json(line: bytes) -> tuple[Any, str]:
    """The JSON value on one line, or None and why it cannot be read (never a RecursionError)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, "is not UTF-8 text"
    if nested_deeper_than(text, MAX_ARGUMENT_DEPTH):
        return None, f"nests deeper than {MAX_ARGUMENT_DEPTH} levels"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None, "is not a record (not JSON)"
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            return None, "holds text that is not Unicode (a lone surrogate)"
    return value, ""


def parse_record(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """The record on one line, or None and why it is skipped."""
    value, why = parse_json(line)
    if why:
        return None, why
    if not isinstance(value, dict):
        return None, "is not a record (not a JSON object)"
    problem = record_problem(value)
    return (None, problem) if problem else (value, "")


def record_problem(record: Mapping[str, Any]) -> str | None:
    """Why a record does not have the shape `format.py` writes, else None."""
    kind, conversation = record.get("kind"), record.get("conversation")
    if not isinstance(kind, str) or not isinstance(conversation, str):
        return "is not a record (no text kind and conversation)"
    if _ID.fullmatch(conversation) is None:
        return f"names the conversation {conversation[:20]!r}, not an id"
    why = _fits(record, _RECORDS.get(kind, {}), f"a {kind} record")
    if why is None and kind == "message":
        message = record.get("message")
        if not isinstance(message, dict):
            return "is a message record without a message"
        role = message.get("role")
        fields = _MESSAGES.get(role) if isinstance(role, str) else None
        if fields is None:
            return f"holds a message whose role is {str(role)[:20]!r}, not user, assistant or tool"
        why = _fits(message, fields, ("an " if role == "assistant" else "a ") + f"{role} message")
    return why


def _fits(data: Mapping[str, Any], fields: Mapping[str, Check], what: str = "a call") -> str | None:
    for name, (check, expected) in fields.items():
        if name in data and not check(data[name]):
            return f"has {what} whose {name} is {_kind_of(data[name])}, not {expected}"
    return None


def _kind_of(value: Any) -> str:
    return {
        bool: "true or false",
        str: "text",
        dict: "an object",
        list: "a list",
        type(None): "null",
    }.get(type(value), "a number")
