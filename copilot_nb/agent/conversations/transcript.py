"""A saved conversation as a Markdown transcript a person reads (`%copilot export`). Pure.

Every field of a record stays data, whoever wrote the file: HTML is escaped (no tag of theirs is
live where the file is rendered, even by a viewer that renders raw HTML), a link is kept only
when its target passes the one rule every view follows (`links.safe_url`: http, https, mailto,
relative), an image is shown as its link rather than loaded, and tool arguments and results sit
in code fences longer than any run of backticks inside them. Records come from the store, which
has checked their shape (`records.py`).
"""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...links import safe_url
from .usage import Tally

_IMAGE = re.compile(r"!\[")
_LINK_END = re.compile(r"\](?=[(:])")
"""Where a link's text ends and its target follows: `[text](target)`, `[label]: target`."""
_ESCAPED = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_TARGET_CHARS = 200


def markdown(records: Iterable[Mapping[str, Any]], *, title: str) -> str:
    """The conversation's turns: each request, the replies, each tool call and its result, and
    the turn's model, time and tokens."""
    out = [f"# {data(title)}", ""]
    for item in records:
        kind = item.get("kind")
        if kind == "start":
            out += [
                f"_Conversation {data(str(item.get('conversation')))}, "
                f"started {data(str(item.get('at', '')))}_",
                "",
            ]
        elif kind == "message":
            out += _message(item.get("message") or {})
        elif kind == "turn":
            out += [
                f"_{data(str(item.get('model', '')))} ({data(str(item.get('provider', '')))}), "
                f"{data(str(item.get('at', '')))}, {_number(item.get('seconds', 0))} s, "
                f"tokens: {Tally.of_turns([item]).text()}"
                + (f"; {data(str(item['error']))}" if item.get("error") else "")
                + "_",
                "",
                "---",
                "",
            ]
    return "\n".join(out)


def data(text: str) -> str:
    """Text that renders as itself: HTML escaped, images as links, links only to safe targets,
    and no code fence opened (one would swallow the fences that follow, leaving what they hold
    outside any)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("`", "\\`").replace("~", "\\~")
    return _unsafe_links_undone(_IMAGE.sub(r"!\\[", text))


def _unsafe_links_undone(text: str) -> str:
    """The `]` before a target that is not safe escaped, so no Markdown viewer makes a link of
    it (an escaped `]` renders as `]`). Judged loosely on purpose: the target's first characters
    with whitespace and backslash escapes dropped, as any viewer might read them."""
    out, start = [], 0
    for found in _LINK_END.finditer(text):
        at = before = found.start()
        while before and text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 or _safe_target(text[at + 2 : at + 2 + _TARGET_CHARS]):
            continue
        out += [text[start:at], "\\"]
        start = at
    return "".join([*out, text[start:]])


def _safe_target(text: str) -> bool:
    target = _ESCAPED.sub("", "".join(text.split()))
    return safe_url(target) and safe_url(html.unescape(target).lstrip("<"))


def _number(value: Any) -> str:
    """A count or a time as the record holds it; anything else as escaped text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,}"
    return data(str(value))


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
