"""What differs between a recorded request and the one the agent sends, in a user's words.

A replay that diverges must say why: the prompt was edited, a tool result changed, the model or
the tool list changed. The first differing place in the request body names the kind; a short
unified diff of that part shows the words.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from .entries import RecordedRequest

DIFF_LINES = 30


def mismatch_message(n: int, recorded: RecordedRequest, sent: RecordedRequest) -> str:
    """`entry 3: a tool result changed (messages[4].content)` and a diff of that part."""
    if (recorded.method, recorded.path) != (sent.method, sent.path):
        return (
            f"entry {n}: the recording has {recorded.method} {recorded.path}, the agent sent "
            f"{sent.method} {sent.path}"
        )
    where, old, new = first_difference(recorded.body, sent.body)
    kind = difference_kind(where, recorded.body, sent.body)
    return f"entry {n}, {kind} at {where or 'the body'}:\n{short_diff(old, new)}"


def first_difference(old: Any, new: Any, where: str = "") -> tuple[str, Any, Any]:
    """The JSON path of the first place `old` and `new` differ, and the two values there."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            if old.get(key, _MISSING) != new.get(key, _MISSING):
                inner = f"{where}.{key}" if where else str(key)
                if key in old and key in new:
                    return first_difference(old[key], new[key], inner)
                return inner, old.get(key), new.get(key)
    if isinstance(old, list) and isinstance(new, list):
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            if a != b:
                return first_difference(a, b, f"{where}[{index}]")
        if len(old) != len(new):
            return f"{where}[{min(len(old), len(new))}]", old[len(new) :], new[len(old) :]
    return where, old, new


_MISSING = object()


def difference_kind(where: str, old: Any, new: Any) -> str:
    """A name for what changed, from where in a Chat Completions, Responses or Messages body."""
    top = where.split(".")[0].split("[")[0]
    if top == "model":
        return f"the model changed (recorded {_model(old)}, now {_model(new)})"
    if top in ("tools", "tool_choice"):
        return "the tool list changed"
    if top in ("system", "instructions"):
        return "the system prompt changed (instructions or context)"
    if top in ("messages", "input"):
        item = _item_at(new, where) or _item_at(old, where)
        return _item_kind(item)
    return "a request option changed"


def _model(body: Any) -> str:
    return str(body.get("model")) if isinstance(body, dict) else "?"


def _item_at(body: Any, where: str) -> Any:
    """The message (or input item) the path `messages[3]...` points into."""
    if not isinstance(body, dict):
        return None
    top = where.split(".")[0]
    name, _, rest = top.partition("[")
    items = body.get(name)
    try:
        index = int(rest.rstrip("]"))
    except ValueError:
        return None
    return items[index] if isinstance(items, list) and 0 <= index < len(items) else None


def _item_kind(item: Any) -> str:
    if not isinstance(item, dict):
        return "the conversation changed"
    role, kind = item.get("role"), item.get("type")
    content = item.get("content")
    if role == "tool" or kind == "function_call_output":
        return "a tool result changed"
    if role == "user" and isinstance(content, list) and _has_tool_result(content):
        return "a tool result changed"
    if role in ("system", "developer"):
        return "the system prompt changed (instructions or context)"
    if role == "user":
        return "the request (or the context sent with it) changed"
    return "the conversation changed"


def _has_tool_result(content: list[Any]) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def short_diff(old: Any, new: Any) -> str:
    """A unified diff of two JSON values, at most DIFF_LINES lines."""
    a = _lines(old)
    b = _lines(new)
    lines = list(difflib.unified_diff(a, b, "recorded", "now", n=2, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more lines"]
    return "\n".join(lines)


def _lines(value: Any) -> list[str]:
    if value is _MISSING or value is None:
        return []
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True).splitlines()
