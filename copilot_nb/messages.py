"""The conversation as plain data: what the agent and every provider agree on.

Messages are frozen dataclasses so a conversation can be shared between the loop, the surfaces
and the providers without anyone changing it under another's feet. OpenAI-style dicts (the
lingua franca of chat APIs) are accepted wherever messages are given, via `as_message`.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Union

from .errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token counts reported by the provider; `raw` keeps the provider's own object."""

    input_tokens: int = 0
    output_tokens: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call the model asked for.

    `arguments` is the parsed JSON value (normally a dict); when the model sent text that is not
    valid JSON it is that raw text, so the agent can tell the model exactly what was wrong.
    `raw_arguments` is the text as sent, which is what goes back to the provider.
    """

    id: str
    name: str
    arguments: Any
    raw_arguments: str = ""

    @classmethod
    def from_raw(cls, *, id: str, name: str, raw_arguments: str) -> ToolCall:
        """Build a call from the accumulated argument text, parsing it when it is JSON."""
        return cls(
            id=id, name=name, arguments=parse_arguments(raw_arguments), raw_arguments=raw_arguments
        )


MAX_ARGUMENT_CHARS = 1_000_000
"""Characters of one tool call's argument text; longer text is refused unparsed: no tool needs
it, and a model that sends it is broken or hijacked."""
MAX_ARGUMENT_DEPTH = 64
"""Nesting of arrays and objects in one call's arguments; deeper is refused before `json.loads`,
whose recursion would otherwise raise RecursionError out of the loop. The proxy holds its request
bodies to the same limit: one depth for JSON that comes from outside."""
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?')
"""A JSON string, closed or not: brackets inside strings are not nesting."""
_BRACKET_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[{]}")))


def parse_arguments(raw: str) -> Any:
    """Parse tool-call argument text; empty text means no arguments; text that is not JSON, or
    that `arguments_problem` refuses, stays text (the registry tells the model why)."""
    if raw.strip() == "":
        return {}
    if arguments_problem(raw) is not None:
        return raw
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, RecursionError, MemoryError):
        return raw


def arguments_problem(raw: str) -> str | None:
    """Why argument text is refused before it is parsed (too long, nested too deep), else None."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return (
            f"arguments are {len(raw):,} characters, more than the {MAX_ARGUMENT_CHARS:,} "
            "allowed; send smaller arguments (split long content over several calls)"
        )
    if nested_deeper_than(raw, MAX_ARGUMENT_DEPTH):
        return f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels; send flat JSON arguments"
    return None


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether brackets outside JSON strings nest deeper than `limit`, found without recursion.

    The strings are cut out, every other byte but a bracket dropped, and the brackets' running
    sum (+1 opening, -1 closing) taken in C: 4 MB of `[]` in 0.2 s, where a token loop in Python
    took 1.8 s. Where a parser would stop at a stray closing bracket the sum may undercount, but
    only past the point where that parser has already failed without recursing."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass")
    steps = array("b", brackets.translate(_BRACKET_STEPS, _NOT_BRACKETS))
    return max(accumulate(steps), default=0) > limit


@dataclass(frozen=True, kw_only=True)
class SystemMessage:
    content: str
    role: str = field(default="system", init=False)


@dataclass(frozen=True, kw_only=True)
class UserMessage:
    """What the user says. `images` are those a proxy client sent beside its words (an
    `image_url` part); the text keeps an `[image/png 640x480]` line for each, as a tool result
    does, so a model without vision still reads that there was one."""

    content: str
    images: tuple[Image, ...] = ()
    role: str = field(default="user", init=False)


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """A complete model reply: what `Model.complete()` returns and what the loop appends."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    reasoning_signature: str | None = None
    reasoning_items: tuple[Mapping[str, Any], ...] = ()
    """Opaque reasoning items (OpenAI Responses, encrypted) to send back unchanged on the next
    request of a stateless conversation; other providers leave it empty."""
    refusal: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    role: str = field(default="assistant", init=False)


@dataclass(frozen=True, kw_only=True)
class Image:
    """An image a tool result carries (a cell's plot, an MCP server's screenshot): for a model
    that accepts images; every other reader sees the result's text, which describes it."""

    media_type: str
    """`image/png`, `image/jpeg`, `image/gif` or `image/webp`."""
    data: str = field(repr=False)
    """The bytes in base64, without whitespace."""

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"

    @property
    def size(self) -> int:
        """Bytes the base64 data stands for."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call, sent back to the model with the call's id.

    `images` go to a model that accepts images, beside the text (which keeps its
    `[image/png 640x480]` line, so a model without vision and a transcript read the same)."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()
    role: str = field(default="tool", init=False)


Message = Union[SystemMessage, UserMessage, AssistantMessage, ToolResult]


def as_message(item: Message | Mapping[str, Any]) -> Message:
    """Accept our messages or OpenAI-style dicts ({"role": ..., "content": ...})."""
    if isinstance(item, (SystemMessage, UserMessage, AssistantMessage, ToolResult)):
        return item
    if not isinstance(item, Mapping):
        raise ConfigError(f"a message must be a Message or a dict, not {type(item).__name__}")
    role = item.get("role")
    content = _text_of(item.get("content"))
    if role in ("system", "developer"):
        return SystemMessage(content=content)
    if role == "user":
        return UserMessage(content=content)
    if role == "assistant":
        calls = tuple(
            ToolCall.from_raw(
                id=call.get("id", ""),
                name=call.get("function", {}).get("name", ""),
                raw_arguments=_arguments_text(call.get("function", {}).get("arguments", "")),
            )
            for call in item.get("tool_calls") or ()
        )
        return AssistantMessage(text=content, tool_calls=calls)
    if role == "tool":
        return ToolResult(
            tool_call_id=item.get("tool_call_id", ""), name=item.get("name", ""), content=content
        )
    raise ConfigError(f"unknown message role {role!r}; expected system, user, assistant or tool")


def as_messages(items: Iterable[Message | Mapping[str, Any]]) -> list[Message]:
    return [as_message(item) for item in items]


def _text_of(content: Any) -> str:
    """Flatten OpenAI content (a string or a list of {"type": "text", "text": ...} parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


def as_tool_spec(item: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    """Accept a ToolSpec, an OpenAI tool dict ({"type": "function", "function": {...}}) or its inner part."""
    if isinstance(item, ToolSpec):
        return item
    inner = item.get("function", item) if isinstance(item, Mapping) else None
    if not isinstance(inner, Mapping) or not inner.get("name"):
        raise ConfigError(f"a tool must be a ToolSpec or a dict with a 'name', not {item!r}")
    return ToolSpec(
        name=inner["name"],
        description=inner.get("description", ""),
        parameters=inner.get("parameters") or {"type": "object", "properties": {}},
    )
