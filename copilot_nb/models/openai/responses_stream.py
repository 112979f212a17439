"""A pure accumulator for OpenAI Responses API streams: SSE bytes or parsed events in, events out.

OpenAI, GitHub Copilot, OpenRouter and DeepSeek stream the same typed events with their own
quirks; all are handled here with no I/O, so they can be tested against the recorded conformance
corpus (tests/data/conformance/responses). Rules, where servers disagree with openai-python:

1. Output items are matched by `output_index`, never by `item_id` or the response id: GitHub
   Copilot gives every event of an item a new id, and changes the response id between events
   (openai-python raises at the second event of such a stream).
2. The event type is `data.type`; an `event:` line is ignored (OpenRouter sends none).
3. `sequence_number` is not required (early-2025 streams have none); `data: [DONE]` ends the
   stream (OpenRouter); the stream is also complete at a terminal event without it.
4. An `error` event stops the stream, whether it holds `code`/`message` at the top level (the
   OpenAPI spec, Copilot) or in a nested `error` object (what OpenAI sends); so does
   `response.failed`.

The final reply follows the terminal event's `output` when it has one (the SDK's rule), else the
items as streamed. Reasoning text is the summary text and raw `reasoning_text` (gpt-oss, DeepSeek)
in output order; reasoning items that carry `encrypted_content` are kept whole in
`AssistantMessage.reasoning_items`, to be sent back on the next request (`store: false`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ...errors import StreamError
from ...events import ModelEvent, ReasoningDelta, ToolCallDelta
from ...messages import AssistantMessage, ToolCall, Usage
from ...text import server_text, shorten
from ..json_stream import JSONStreamDecoder, text_delta
from ..sse import ServerSentEvent

_loads = json.loads
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class _Item:
    """One output item being streamed, at one `output_index`."""

    __slots__ = ("arguments", "item", "position", "reasoning", "refusal", "text")

    def __init__(self, item: Mapping[str, Any]) -> None:
        self.item: Mapping[str, Any] = item
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.reasoning: list[str] = []
        self.arguments: list[str] = []
        self.position: int | None = None  # the call's place among tool calls (function calls)


class ResponsesDecoder(JSONStreamDecoder):
    """Accumulates one Responses stream and yields its deltas as they arrive.

    `done` turns True at a terminal event (`response.completed`, `response.incomplete`) or
    `[DONE]`, after which input is ignored. An `error` event or `response.failed` raises
    `StreamError` and keeps the provider's error object in `error`; deltas decoded from the same
    piece before it are returned first and the error is raised by the next `feed()` or `close()`.
    `status` and `incomplete_reason` are the final response's, once it arrived.
    """

    EXPECTED = "a Responses API event (does the server speak the Responses API?)"

    def __init__(self) -> None:
        super().__init__()
        self.status: str | None = None
        self.incomplete_reason: str | None = None
        self.response: Mapping[str, Any] | None = None
        self._items: dict[int, _Item] = {}
        self._calls = 0
        self._usage: Mapping[str, Any] | None = None

    def close(self) -> AssistantMessage:
        """Finish the stream and return the complete message; raises an error not raised yet."""
        self.flush()
        self._raise_pending()
        return self.message()

    def feed_event(self, event: Mapping[str, Any]) -> list[ModelEvent]:  # noqa: C901 - the decoder's one dispatch on the event's type, run for every event
        """Accumulate one parsed event; returns its model events."""
        kind = event.get("type")
        if kind == "response.output_text.delta":  # the hot path
            delta = event.get("delta")
            if delta:
                self._slot(event).text.append(delta)
                return [text_delta(delta)]
            return []
        if kind == "response.function_call_arguments.delta":
            delta = event.get("delta")
            if delta:
                slot = self._slot(event)
                slot.arguments.append(delta)
                return [ToolCallDelta(index=self._position(slot), arguments=delta)]
            return []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = event.get("delta")
            if delta:
                self._slot(event).reasoning.append(delta)
                return [ReasoningDelta(text=delta)]
            return []
        if kind == "response.refusal.delta":
            delta = event.get("delta")
            if delta:
                self._slot(event).refusal.append(delta)
            return []
        if kind == "response.output_item.added":
            return self._item_added(event)
        if kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping):
                self._slot(event).item = item
            return []
        if kind == "response.function_call_arguments.done":
            slot = self._slot(event)
            arguments = event.get("arguments")
            if not slot.arguments and isinstance(arguments, str) and arguments:
                slot.arguments.append(arguments)
                return [ToolCallDelta(index=self._position(slot), arguments=arguments)]
            return []
        if kind in _TERMINAL:
            self._terminal(kind, event.get("response"))
            return []
        if kind == "error":
            self._fail(_error_event(event))
        return []  # created, in_progress, queued, content parts, built-in tool progress, ...

    @staticmethod
    def SHAPE(msgspec: Any) -> Any:
        """An output text delta: its type, a string `delta` and an integer `output_index`
        (absent: 0); the rest of the event is what the dict path ignores too."""
        return msgspec.defstruct(
            "TextDelta",
            [
                ("type", Literal["response.output_text.delta"]),
                ("delta", str),
                ("output_index", int, 0),
            ],
        )

    def _on_shape(self, event: Any, out: list[ModelEvent]) -> bool:
        """`_on_object` for an event of `SHAPE` to an item already streaming (else False: a
        new item is made from the event's dict)."""
        slot = self._items.get(event.output_index or 0)
        if slot is None:
            return False
        if event.delta:
            slot.text.append(event.delta)
            self._run.add(out, event.delta)
        return True

    def _on_object(self, event: Mapping[str, Any], out: list[ModelEvent]) -> None:
        """`feed_event`, appending to `out`; a text delta to a known item takes no detour."""
        if event.get("type") == "response.output_text.delta":
            delta = event.get("delta")
            slot = self._items.get(event.get("output_index") or 0)
            if slot is not None:
                if delta:
                    slot.text.append(delta)
                    self._run.add(out, delta)
                return
        out += self.feed_event(event)

    def message(self) -> AssistantMessage:
        """The reply accumulated so far (the whole reply once `done`)."""
        raw = self._usage
        usage = None
        if isinstance(raw, Mapping):
            usage = Usage(
                input_tokens=raw.get("input_tokens") or 0,
                output_tokens=raw.get("output_tokens") or 0,
                raw=dict(raw),
            )
        text: list[str] = []
        refusal: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        carried: list[Mapping[str, Any]] = []
        for _, slot in sorted(self._items.items()):
            item = slot.item
            kind = item.get("type")
            if kind == "message":
                text.append("".join(slot.text) or _parts(item.get("content"), "output_text"))
                refusal.append("".join(slot.refusal) or _parts(item.get("content"), "refusal"))
            elif kind == "reasoning":
                reasoning.append(
                    "".join(slot.reasoning)
                    or _parts(item.get("summary"), "summary_text")
                    or _parts(item.get("content"), "reasoning_text")
                )
                if item.get("encrypted_content"):
                    carried.append(_reasoning_item(item))
            elif kind == "function_call":
                calls.append(
                    ToolCall.from_raw(
                        id=str(item.get("call_id") or ""),
                        name=str(item.get("name") or ""),
                        raw_arguments="".join(slot.arguments) or str(item.get("arguments") or ""),
                    )
                )
        return AssistantMessage(
            text="".join(text),
            tool_calls=tuple(calls),
            reasoning="".join(reasoning),
            reasoning_items=tuple(carried),
            refusal="".join(refusal),
            finish_reason=self._finish_reason(bool(calls)),
            usage=usage,
        )

    # --- internals ------------------------------------------------------------------------------

    def _slot(self, event: Mapping[str, Any]) -> _Item:
        index = event.get("output_index") or 0
        slot = self._items.get(index)
        if slot is None:
            slot = self._items[index] = _Item(event.get("item") or {})
        return slot

    def _position(self, slot: _Item) -> int:
        if slot.position is None:
            slot.position = self._calls
            self._calls += 1
        return slot.position

    def _item_added(self, event: Mapping[str, Any]) -> list[ModelEvent]:
        item = event.get("item")
        if not isinstance(item, Mapping):
            return []
        slot = self._slot(event)
        slot.item = item
        if item.get("type") != "function_call":
            return []
        events: list[ModelEvent] = [
            ToolCallDelta(
                index=self._position(slot),
                id=item.get("call_id") or None,
                name=item.get("name") or None,
            )
        ]
        arguments = item.get("arguments")
        if isinstance(arguments, str) and arguments:  # a server that sends them whole here
            slot.arguments.append(arguments)
            events.append(ToolCallDelta(index=self._position(slot), arguments=arguments))
        return events

    def _terminal(self, kind: str, response: Any) -> None:
        if not isinstance(response, Mapping):
            response = {}
        self.response = response
        self.status = response.get("status") or kind.rpartition(".")[2]
        details = response.get("incomplete_details")
        if isinstance(details, Mapping):
            self.incomplete_reason = details.get("reason")
        usage = response.get("usage")
        if usage is not None:
            self._usage = usage
        output = response.get("output")
        if isinstance(output, list) and output:
            self._adopt(output)
        if kind == "response.failed":
            error = response.get("error")
            self._fail(_provider_error(error or response))
        self.done = True

    def _adopt(self, output: list[Any]) -> None:
        """Take the terminal response's output as the final items (their text wins over deltas)."""
        for index, item in enumerate(output):
            if not isinstance(item, Mapping):
                continue
            slot = self._items.get(index)
            if slot is None:
                slot = self._items[index] = _Item(item)
            slot.item = item
            kind = item.get("type")
            if kind == "message":
                slot.text = [_parts(item.get("content"), "output_text")]
                slot.refusal = [_parts(item.get("content"), "refusal")]
            elif kind == "function_call" and isinstance(item.get("arguments"), str):
                slot.arguments = [item["arguments"]]
            elif kind == "reasoning":
                final = _parts(item.get("summary"), "summary_text") or _parts(
                    item.get("content"), "reasoning_text"
                )
                if final:
                    slot.reasoning = [final]

    def _finish_reason(self, has_calls: bool) -> str | None:
        if self.status == "incomplete":
            return self.incomplete_reason or "incomplete"
        if self.status == "failed":
            return "error"
        if self.status is None and not self.done:
            return None
        return "tool_calls" if has_calls else "stop"

    def _events(self, sse_events: Iterable[ServerSentEvent], out: list[ModelEvent]) -> None:
        for sse in sse_events:
            data = sse.data
            if not data:
                continue
            if data.startswith("[DONE]"):
                self.done = True
                return
            self._on_object(self._json_object(data), out)
            if self.done:
                return


def _parts(parts: Any, kind: str) -> str:
    """The text of every part of one kind in a content or summary list."""
    if not isinstance(parts, list):
        return ""
    return "".join(
        str(part.get("text") or part.get(kind) or "")
        for part in parts
        if isinstance(part, Mapping) and part.get("type") == kind
    )


def _reasoning_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A reasoning item as it goes back in `input`: only the fields the API accepts there."""
    out: dict[str, Any] = {"type": "reasoning"}
    if item.get("id"):
        out["id"] = item["id"]
    out["summary"] = list(item.get("summary") or [])
    out["encrypted_content"] = item["encrypted_content"]
    return out


def _provider_error(error: Any) -> StreamError:
    message = error.get("message") if isinstance(error, Mapping) else error
    if not message:
        message = f"the model stream reported an error: {shorten(json.dumps(error), 300)}"
    return StreamError(server_text(message), body=error)


def _error_event(event: Mapping[str, Any]) -> StreamError:
    """An `error` event, flat (`code`/`message` at the top) or nested (`error: {...}`)."""
    nested = event.get("error")
    if isinstance(nested, Mapping):
        return _provider_error(nested)
    return _provider_error({k: v for k, v in event.items() if k not in ("type", "sequence_number")})
