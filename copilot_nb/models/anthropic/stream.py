"""Anthropic Messages API stream -> model events and one AssistantMessage, with no I/O.

The decoder is fed the response body bytes (or already-parsed event dicts) and keeps the
accumulated reply, so a stream cut short by an `error` event still shows what arrived before it.
Accumulation follows the official SDK's `accumulate_event`, except that tool input which is not
valid JSON is kept as the raw text (so the agent can show the model what was wrong).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import StreamError
from ...events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from ...messages import AssistantMessage, ToolCall, Usage
from ...text import SERVER_NAME_CHARS, server_text, shorten
from .. import fast_json
from ..json_stream import TextRun
from ..sse import ServerSentEvent, SSEDecoder


@dataclass
class _ToolBlock:
    """A `tool_use` block being streamed: its position among tool calls and its input so far."""

    position: int
    id: str
    name: str
    initial_input: Any
    parts: list[str] = field(default_factory=list)

    def to_call(self) -> ToolCall:
        raw = "".join(self.parts)
        if raw == "":
            # No input_json_delta text: the block's own `input` (normally {}) is the input.
            initial = self.initial_input if self.initial_input is not None else {}
            return ToolCall(
                id=self.id, name=self.name, arguments=initial, raw_arguments=json.dumps(initial)
            )
        return ToolCall.from_raw(id=self.id, name=self.name, raw_arguments=raw)


class MessagesStreamDecoder:
    """Accumulates one Anthropic Messages stream, yielding deltas as they arrive."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._text: dict[int, list[str]] = {}
        self._thinking: dict[int, list[str]] = {}
        self._tools: dict[int, _ToolBlock] = {}
        self._server_tools: dict[int, _ToolBlock] = {}
        self._signature: str | None = None
        self._usage: dict[str, Any] | None = None
        self._closed = False
        self._run = TextRun()
        self._failure: StreamError | None = None
        self.finish_reason: str | None = None
        self.message_id: str | None = None
        self.model: str | None = None
        self.done = False
        """True once `message_stop` arrived: the stream is complete."""
        self.error: Any = None
        """The body of an `error` event, when the stream carried one."""

    def feed(self, data: bytes) -> list[ModelEvent]:
        """Decode a piece of the response body; raises StreamError on an `error` event.

        When the error arrives in the same piece as deltas before it, those deltas are returned
        and the error is raised by the next `feed()` or `close()`, so no streamed text is lost.
        """
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        out: list[ModelEvent] = []
        try:
            self._feed(data, out)
        except StreamError as exc:
            if not out:
                raise
            self._failure = exc
        finally:
            self._run.end()
        return out

    def _feed(self, data: bytes, out: list[ModelEvent]) -> None:  # noqa: C901, PLR0912 - the decoder's one dispatch on the event's type, run for every event
        fast = fast_json.loads
        shaped = fast_json.shaped(_text_delta_shape)
        loads = json.loads
        text_blocks = self._text
        for item in self._sse.feed_raw(data):
            # One-line events come as bytes (see `SSEDecoder.feed_raw`): parsed at once when they
            # can be; anything else is parsed by the standard library, which names what is wrong.
            event = None
            if type(item) is tuple:
                name, raw = item
                if raw[:1] == b"{":
                    if shaped is not None:  # a text delta to a known block, read in C
                        try:
                            value = shaped(raw)
                        except fast_json.DECLINED:
                            value = None
                        if value is not None:
                            parts = text_blocks.get(value.index)
                            if parts is not None:
                                if value.delta.text:
                                    parts.append(value.delta.text)
                                    self._run.add(out, value.delta.text)
                                continue
                    try:
                        event = fast(raw)
                    except fast_json.DECLINED:
                        event = None
                    if type(event) is not dict:
                        event = None
                    is_error = name == b"error"
                if event is None:
                    item = self._sse.event_of(item)
            if event is None:
                sse: ServerSentEvent = item  # type: ignore[assignment]
                if not sse.data:
                    continue
                try:  # the fast parser first: an event split across reads can be a large one
                    event = fast(sse.data.encode("utf-8", "surrogatepass"))
                except fast_json.DECLINED:
                    event = None
                if type(event) is not dict:
                    try:
                        event = loads(sse.data)
                    except (ValueError, RecursionError):
                        event = _parse(sse)  # raises StreamError naming the broken event
                if type(event) is not dict:
                    event = _parse(sse)
                is_error = sse.event == "error"
            # Hot path: a text delta to a known text block.
            if event.get("type") == "content_block_delta":
                delta = event.get("delta") or {}
                if delta.get("type") == "text_delta":
                    parts = text_blocks.get(event.get("index", 0))
                    if parts is not None:
                        text = delta.get("text") or ""
                        if text:
                            parts.append(text)
                            self._run.add(out, text)
                        continue
            elif is_error and event.get("type") != "error":
                event = {"type": "error", "error": event}
            out.extend(self.feed_event(event))

    def feed_event(self, event: Mapping[str, Any]) -> list[ModelEvent]:
        """Apply one parsed stream event; raises StreamError on an `error` event."""
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._on_delta(_block_index(event), event.get("delta") or {})
        if kind == "content_block_start":
            return self._on_block_start(_block_index(event), event.get("content_block") or {})
        if kind == "message_start":
            message = event.get("message") or {}
            self.message_id = message.get("id")
            self.model = message.get("model")
            usage = message.get("usage")
            if isinstance(usage, Mapping):
                self._usage = dict(usage)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            self.finish_reason = delta.get("stop_reason")
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                merged = self._usage if self._usage is not None else {}
                # Counts on message_delta are cumulative: they replace, and absent ones keep theirs.
                merged.update((k, v) for k, v in usage.items() if v is not None)
                self._usage = merged
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            self.error = dict(event)
            raise StreamError(_error_message(event), body=self.error)
        # ping, content_block_stop and event types added later carry nothing we keep.
        return []

    def _on_block_start(self, index: int, block: Mapping[str, Any]) -> list[ModelEvent]:
        kind = block.get("type")
        if kind == "text":
            first = block.get("text") or ""
            self._text[index] = [first] if first else []
            return [TextDelta(text=first)] if first else []
        if kind == "thinking":
            first = block.get("thinking") or ""
            self._thinking[index] = [first] if first else []
            if block.get("signature"):
                self._signature = block["signature"]
            return [ReasoningDelta(text=first)] if first else []
        if kind == "tool_use":
            position = len(self._tools)
            tool = _ToolBlock(
                position=position,
                id=block.get("id", ""),
                name=block.get("name", ""),
                initial_input=block.get("input"),
            )
            self._tools[index] = tool
            return [ToolCallDelta(index=position, id=tool.id, name=tool.name)]
        if kind == "server_tool_use":
            self._server_tools[index] = _ToolBlock(
                position=len(self._server_tools),
                id=block.get("id", ""),
                name=block.get("name", ""),
                initial_input=block.get("input"),
            )
        return []

    def _on_delta(self, index: int, delta: Mapping[str, Any]) -> list[ModelEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text") or ""
            if text:
                # A delta for a block never started (a lenient proxy) starts a text block.
                self._text.setdefault(index, []).append(text)
                return [TextDelta(text=text)]
        elif kind == "input_json_delta":
            piece = delta.get("partial_json") or ""
            tool = self._tools.get(index)
            if tool is not None:
                if piece:
                    tool.parts.append(piece)
                    return [ToolCallDelta(index=tool.position, arguments=piece)]
            elif index in self._server_tools:
                self._server_tools[index].parts.append(piece)
        elif kind == "thinking_delta":
            text = delta.get("thinking") or ""
            parts = self._thinking.get(index)
            if parts is not None and text:
                parts.append(text)
                return [ReasoningDelta(text=text)]
        elif kind == "signature_delta" and index in self._thinking:
            self._signature = delta.get("signature")
        return []

    @property
    def server_tool_calls(self) -> list[ToolCall]:
        """`server_tool_use` blocks (Anthropic runs them, e.g. web search): not for us to run."""
        return [block.to_call() for _, block in sorted(self._server_tools.items())]

    @property
    def usage(self) -> Usage | None:
        if self._usage is None:
            return None
        raw = self._usage
        return Usage(
            input_tokens=raw.get("input_tokens") or 0,
            output_tokens=raw.get("output_tokens") or 0,
            raw=dict(raw),
        )

    def flush(self) -> list[ModelEvent]:
        """End of body: decode an event the server did not finish with a blank line."""
        events: list[ModelEvent] = []
        if not self._closed:
            self._closed = True
            for sse in self._sse.flush():
                if sse.data:
                    events.extend(self.feed_event(_parse(sse)))
        return events

    def close(self) -> AssistantMessage:
        """Finish the stream (see `flush`) and return the reply so far.

        Raises a stream error not raised yet; after that, calling it again returns what was
        accumulated before the error.
        """
        self.flush()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        return AssistantMessage(
            text="".join("".join(parts) for _, parts in sorted(self._text.items())),
            tool_calls=tuple(block.to_call() for _, block in sorted(self._tools.items())),
            reasoning="".join("".join(parts) for _, parts in sorted(self._thinking.items())),
            reasoning_signature=self._signature,
            finish_reason=self.finish_reason,
            usage=self.usage,
        )


def _block_index(event: Mapping[str, Any]) -> int:
    """A content block event's `index` (0 when absent); anything but an integer is a broken
    stream, said so, rather than a block the reply cannot be put in order by."""
    index = event.get("index", 0)
    if type(index) is not int:
        raise StreamError(
            f"malformed Anthropic stream: {event.get('type')} has index {index!r}, not an integer",
            body=dict(event),
        )
    return index


def _text_delta_shape(msgspec: Any) -> Any:
    """A `content_block_delta` whose delta is a `text_delta` with string text (`index` absent:
    0); its other fields are what the dict path ignores too (see `fast_json.shaped`)."""
    delta = msgspec.defstruct("Delta", [("type", Literal["text_delta"]), ("text", str)])
    return msgspec.defstruct(
        "Event",
        [("type", Literal["content_block_delta"]), ("delta", delta), ("index", int, 0)],
    )


def _parse(sse: ServerSentEvent) -> dict[str, Any]:
    """Parse one event's data, saying which event was broken when it is not a JSON object."""
    try:
        event = json.loads(sse.data)
    except (ValueError, RecursionError) as exc:
        raise StreamError(
            f"Anthropic stream sent {sse.event!r} data that is not JSON: {shorten(sse.data, 200)!r}",
            body=sse.data,
        ) from exc
    if not isinstance(event, dict):
        raise StreamError(
            f"Anthropic stream sent {sse.event!r} data that is not an object", body=event
        )
    if sse.event == "error" and event.get("type") != "error":
        event = {"type": "error", "error": event}
    return event


def _error_message(event: Mapping[str, Any]) -> str:
    """Say which error the provider reported mid-stream, in its own words."""
    error = event.get("error")
    if isinstance(error, Mapping):
        kind = server_text(error.get("type", "error"), SERVER_NAME_CHARS, one_line=True)
        said = server_text(error.get("message", ""))
        return f"Anthropic stream error ({kind}): {said}".rstrip(": ")
    return f"Anthropic stream error: {server_text(repr(event))}"
