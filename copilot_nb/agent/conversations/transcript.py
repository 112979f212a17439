"""A saved conversation as a Markdown transcript a person reads (`%copilot export`). Pure.

The model's and the tools' text stays data: HTML is escaped (no tag of theirs is live where the
file is rendered), an image they wrote is shown as its link rather than loaded, and tool
arguments and results sit in code fences longer than any run of backticks inside them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_IMAGE = re.compile(r"!\[")


def markdown(records: Iterable[Mapping[str, Any]], *, title: str) -> str:
    """The conversation's turns: each request, the replies, each tool call and its result, and
    the turn's model, time and tokens."""
    out = [f"# {data(title)}", ""]
    for item in records:
        kind = item.get("kind")
        if kind == "start":
            out += [
                f"_Conversation {data(str(item.get('conversation')))}, started {item.get('at', '')}_",
                "",
            ]
        elif kind == "message":
            out += _message(item.get("message") or {})
        elif kind == "turn":
            tokens = item.get("tokens") or {}
            out += [
                f"_{data(str(item.get('model', '')))} ({data(str(item.get('provider', '')))}), "
                f"{item.get('at', '')}, {item.get('seconds', 0)} s, "
                f"{tokens.get('input', 0):,} tokens in, {tokens.get('output', 0):,} out"
                + (f"; {data(str(item['error']))}" if item.get("error") else "")
                + "_",
                "",
                "---",
                "",
            ]
    return "\n".join(out)


def data(text: str) -> str:
    """Text that renders as itself: HTML escaped, images as links, and no code fence opened
    (one would swallow the fences that follow, leaving what they hold outside any)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("`", "\\`").replace("~", "\\~")
    return _IMAGE.sub(r"!\\[", text)


def fenced(text: str, info: str = "") -> list[str]:
    """A code block whose fence no backtick run inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text, fence, ""]


def _message(message: Mapping[str, Any]) -> list[str]:
    role = message.get("role")
    if role == "user":
        return ["## Request", "", data(str(message.get("content", ""))), ""]
    if role == "assistant":
        out = []
        if message.get("text"):
            out += ["**copilot:**", "", data(str(message["text"])), ""]
        for call in message.get("tool_calls") or ():
            arguments = str(call.get("arguments", ""))
            with contextlib.suppress(ValueError):
                arguments = json.dumps(json.loads(arguments), indent=1, ensure_ascii=False)
            out += [f"**tool call** _{data(str(call.get('name', '')))}_", ""]
            out += fenced(arguments, "json")
        return out
    if role == "tool":
        label = "error" if message.get("is_error") else "result"
        return [
            f"**{label}** of _{data(str(message.get('name', '')))}_",
            "",
            *fenced(str(message.get("content", ""))),
        ]
    return []
