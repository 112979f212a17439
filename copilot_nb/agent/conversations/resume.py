"""A saved conversation made a history again: valid for every provider, placeholders filled.

Pure. The workspace and home placeholders become this machine's paths; a turn cut short (a
killed kernel) gets a result for each call it left open, as the loop does after an interrupt;
and when earlier turns were left out (beyond the context budget), the first request kept says
so, so the model knows the conversation began before it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ...messages import AssistantMessage, Message, ToolResult, UserMessage
from ...models.recording_scrub import HOME, WORKSPACE
from ...text import counted
from ..loop.rounds import INTERRUPTED
from .format import OPAQUE, message_from


def history(records: Iterable[Mapping[str, Any]], *, root: str, left_out: int = 0) -> list[Message]:
    """The messages to continue from (no system message: the session builds that anew)."""
    places = ((WORKSPACE, root), (HOME, os.path.expanduser("~")))
    messages = [message_from(_filled(dict(item), places)) for item in records]
    messages = closed(messages)
    if left_out and messages and isinstance(messages[0], UserMessage):
        note = (
            f"[{counted(left_out, 'earlier turn')} of this conversation saved but not loaded: "
            "too long for the context window]\n\n"
        )
        messages[0] = UserMessage(content=note + messages[0].content)
    return messages


def closed(messages: list[Message]) -> list[Message]:
    """Every tool call answered right after its reply (an interrupted one by `INTERRUPTED`), and
    no result without its call."""
    out: list[Message] = []
    open_calls: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, ToolResult):
            if any(call_id == message.tool_call_id for call_id, _ in open_calls):
                open_calls = [c for c in open_calls if c[0] != message.tool_call_id]
                out.append(message)
            continue
        out += _interrupted(open_calls)
        open_calls = []
        out.append(message)
        if isinstance(message, AssistantMessage):
            open_calls = [(call.id, call.name) for call in message.tool_calls]
    return out + _interrupted(open_calls)


def _interrupted(calls: list[tuple[str, str]]) -> list[Message]:
    return [
        ToolResult(tool_call_id=call_id, name=name, content=INTERRUPTED, is_error=True)
        for call_id, name in calls
    ]


def _filled(value: Any, places: tuple[tuple[str, str], ...], key: str = "") -> Any:
    if key in OPAQUE:
        return value
    if isinstance(value, str):
        for placeholder, path in places:
            if placeholder in value:
                value = value.replace(placeholder, path)
        return value
    if isinstance(value, list):
        return [_filled(item, places) for item in value]
    if isinstance(value, dict):
        return {k: _filled(v, places, k) for k, v in value.items()}
    return value
