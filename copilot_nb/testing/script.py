"""Scripted turns: what an offline model says, one reply per request.

A script is a list of `ScriptedTurn`s (or callables that build one from the request), replayed in
order by `ScriptedModel` in-process or by `ScriptedServer` over real HTTP.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from ..messages import ToolCall, Usage

_call_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class ScriptedTurn:
    """One model reply: text and/or tool calls, optionally reasoning, with an explicit finish."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    chunk_size: int = 8
    """Characters per streamed text delta (the server also splits tool arguments this way)."""
    delay: float = 0.0
    """Seconds to wait between streamed chunks, to make a stream long enough to interrupt."""
    break_after: int | None = None
    """Drop the connection after this many streamed events (a network failure mid-stream)."""

    @property
    def resolved_finish_reason(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    @property
    def resolved_usage(self) -> Usage:
        if self.usage is not None:
            return self.usage
        out = max(1, (len(self.text) + sum(len(c.raw_arguments) for c in self.tool_calls)) // 4)
        return Usage(input_tokens=10, output_tokens=out, raw={})


@dataclass(frozen=True, kw_only=True)
class ScriptedFailure:
    """An HTTP error reply, in the provider's error shape (`{"error": {"message": ...}}`)."""

    status: int
    message: str
    type: str = "error"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ScriptedRequest:
    """What the scripted model received: the wire body (OpenAI-style) as a plain dict."""

    body: Mapping[str, Any]
    path: str = "/v1/chat/completions"
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tool_results(self) -> dict[str, str]:
        """The tool results the request carried, by tool call id (what a scripted turn reads)."""
        return {m["tool_call_id"]: m["content"] for m in self.messages if m.get("role") == "tool"}


Reply = Union[ScriptedTurn, ScriptedFailure]
Step = Union[ScriptedTurn, ScriptedFailure, Callable[[ScriptedRequest], Reply]]


def pieces(text: str, size: int) -> Iterator[str]:
    """Split text into streamable pieces of `size` characters (at least one)."""
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def reply(text: str = "", *calls: ToolCall, **options: Any) -> ScriptedTurn:
    """A scripted reply: `reply("Done.")`, `reply("", call("read_file", path="a.py"))`."""
    return ScriptedTurn(text=text, tool_calls=tuple(calls), **options)


def fail(status: int, message: str, **options: Any) -> ScriptedFailure:
    """A scripted HTTP error: `fail(429, "Rate limit reached", headers={"retry-after": "1"})`."""
    return ScriptedFailure(status=status, message=message, **options)


def call(
    name: str, /, *, id: str | None = None, raw: str | None = None, **arguments: Any
) -> ToolCall:
    """A scripted tool call; `raw` sends argument text verbatim (e.g. invalid JSON)."""
    raw_arguments = raw if raw is not None else json.dumps(arguments)
    return ToolCall.from_raw(
        id=id or f"call_{next(_call_ids):04d}", name=name, raw_arguments=raw_arguments
    )
